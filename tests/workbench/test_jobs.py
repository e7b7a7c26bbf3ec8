"""Background jobs: started from a page, run by db_worker, followed on their page; a failure is one line."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.utils import timezone

from evaluation.tasks import build_release
from tests.evaluation.tracks import build_track
from workbench import jobs
from workbench.models import Job


@pytest.mark.django_db(transaction=True)
def test_a_job_runs_through_db_worker_and_its_page_offers_the_result(tmp_path, settings, client, organizer):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    settings.VAR_DIR = tmp_path
    collection = build_track(tmp_path)
    client.force_login(organizer)
    started = client.post(f"/collections/{collection.slug}/downloads/release.zip", {"policy": "majority"})
    job = Job.objects.get()
    assert started["Location"] == f"/jobs/{job.pk}/"
    assert job.status == "queued" and "Waiting for a worker" in client.get(started["Location"]).content.decode()
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", stdout=StringIO(), stderr=StringIO())
    job.refresh_from_db()
    assert job.status == "done" and job.started_by == organizer and job.params == {"policy": "majority"}
    page = client.get(f"/jobs/{job.pk}/?fragment=1").content.decode()
    assert 'aria-valuenow="100"' in page and job.result["url"] in page
    download = client.get(job.result["url"])
    assert download["Content-Type"] == "application/zip" and b"".join(download.streaming_content)[:2] == b"PK"


def test_a_failing_job_says_why_in_one_line_and_leaves_no_file(db, tmp_path, settings, client, organizer):
    settings.VAR_DIR = tmp_path
    collection = build_track(tmp_path)
    job = jobs.job_start(build_release, kind="release bundle", user=organizer, collection=collection,
                         params={"policy": "bogus"})
    job.refresh_from_db()
    assert job.status == "failed" and "bogus" in job.error and "\n" not in job.error
    assert not (tmp_path / "jobs" / str(job.pk)).exists() or not any((tmp_path / "jobs" / str(job.pk)).iterdir())
    client.force_login(organizer)
    assert "The job failed" in client.get(f"/jobs/{job.pk}/").content.decode()


def test_a_job_whose_worker_died_is_shown_as_failed(db, client, organizer):
    job = Job.objects.create(kind="release bundle", status=Job.Status.RUNNING, started_by=organizer,
                             heartbeat_at=timezone.now() - jobs.STALE_AFTER - timedelta(seconds=1))
    client.force_login(organizer)
    body = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "The job failed: the worker stopped before the job finished" in body


def test_only_organizers_and_whoever_started_a_job_see_it(db, client, organizer, assessor):
    mine = Job.objects.create(kind="release bundle", started_by=assessor)
    theirs = Job.objects.create(kind="release bundle", started_by=organizer)
    client.force_login(assessor)
    assert client.get(f"/jobs/{mine.pk}/").status_code == 200
    assert client.get(f"/jobs/{theirs.pk}/").status_code == 404
    client.force_login(User.objects.get(username="olivia"))
    assert client.get(f"/jobs/{mine.pk}/").status_code == 200
    client.logout()
    assert client.get(f"/jobs/{mine.pk}/").status_code == 302  # to the login page

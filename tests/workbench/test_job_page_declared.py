"""A job's page and the jobs list say what its kind declares (workbench.jobs.kinds): its label and help, its
progress in the kind's unit, and the page it leads back to for someone who does not organize the collection."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from tests import factories
from workbench.jobs import kinds as job_kinds
from workbench.jobs.kinds import JobKind
from workbench.models import Job


def _noop(job_id: int) -> None:  # the task is never run here
    return None


_noop.module_path = "tests.workbench.test_job_page_declared._noop"


@pytest.fixture
def widget_kind():
    kind = job_kinds.register(JobKind("widget count", "Widget counting", _noop, unit="widget",
                                      help="Counts the collection's widgets, one by one.",
                                      back=("evaluation:downloads", "the widget shelf")))
    yield kind
    job_kinds.KINDS.pop(kind.name)


def test_the_job_page_shows_the_kinds_label_help_progress_and_way_back(db, client, widget_kind):
    collection = factories.collection_with_topics()
    starter = User.objects.create_user("starter", password="x")
    job = Job.objects.create(kind="widget count", collection=collection, started_by=starter,
                             status=Job.Status.RUNNING, done=40, total=120, step="counting")
    client.force_login(starter)
    html = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "<h1>Widget counting: " in html and "Widget counting · job" in html
    assert '<p class="job-help">Counts the collection&#x27;s widgets, one by one.</p>' in html
    assert "counting <span class=\"job-progress\">(40 of 120 widgets)</span>" in html
    job.status, job.result = Job.Status.DONE, {"lines": ["120 widgets counted"]}
    job.save()
    html = client.get(f"/jobs/{job.pk}/").content.decode()
    assert f'<a href="/collections/{collection.slug}/downloads/">Back to the widget shelf</a>' in html
    assert "job-progress" not in html  # a finished job shows what it did, not how far it was


def test_a_kind_without_a_unit_counts_steps_and_an_undeclared_kind_shows_its_name(db, organizer, client):
    collection = factories.collection_with_topics()
    declared = Job.objects.create(kind="release bundle", collection=collection, started_by=organizer,
                                  status=Job.Status.RUNNING, done=1, total=2, step="writing the zip")
    unknown = Job.objects.create(kind="old kind", collection=collection, started_by=organizer,
                                 status=Job.Status.RUNNING)
    client.force_login(organizer)
    html = client.get(f"/jobs/{declared.pk}/").content.decode()
    assert "<h1>Release bundle: " in html and "(step 1 of 2)" in html
    assert "<h1>Old kind: " in client.get(f"/jobs/{unknown.pk}/").content.decode()
    listing = client.get("/console/jobs/").content.decode()
    assert "Release bundle</span>" in listing and "Old kind" in listing

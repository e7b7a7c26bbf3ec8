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
from workbench.jobs import lifecycle as jobs
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


def test_the_evaluation_report_is_a_job_whose_zip_scores_every_run_per_topic(db, tmp_path, settings, client,
                                                                               organizer):
    import csv
    import io
    import json
    import zipfile

    from evaluation.selectors import leaderboard

    settings.VAR_DIR = tmp_path
    collection = build_track(tmp_path)
    client.force_login(organizer)
    started = client.post(f"/collections/{collection.slug}/downloads/evaluation/",
                          {"measures": "map P.10", "policy": "majority"})
    job = Job.objects.get(kind="evaluation")
    assert started["Location"] == f"/jobs/{job.pk}/" and job.status == "done", job.error
    download = client.get(job.result["url"])
    archive = zipfile.ZipFile(io.BytesIO(b"".join(download.streaming_content)))
    names = {name.split("/", 1)[1] for name in archive.namelist()}
    assert {"leaderboard.json", "leaderboard.csv", "per_topic.csv", "leave_one_run_out.csv",
            "leave_one_team_out.csv"} <= names
    board = leaderboard(collection, measures=["map", "P.10"], qrels_policy="majority")
    data = json.loads(archive.read(f"{collection.slug}-evaluation/leaderboard.json"))
    assert {r["run"]: r["measures"]["map"] for r in data["runs"]} == {r.tag: r.measures["map"] for r in board.runs}
    rows = list(csv.DictReader(io.StringIO(archive.read(f"{collection.slug}-evaluation/per_topic.csv").decode())))
    first = board.runs[0]
    per_topic = {row["topic"]: float(row["value"]) for row in rows
                 if row["run"] == first.tag and row["measure"] == "map"}
    assert sum(per_topic.values()) / len(per_topic) == pytest.approx(first.measures["map"])


def test_an_evaluation_with_an_unknown_measure_is_refused_on_the_page(db, tmp_path, settings, client, organizer):
    settings.VAR_DIR = tmp_path
    collection = build_track(tmp_path)
    client.force_login(organizer)
    response = client.post(f"/collections/{collection.slug}/downloads/evaluation/", {"measures": "nonsense@@"})
    assert response.status_code == 400 and "nonsense" in response.content.decode()
    assert not Job.objects.filter(kind="evaluation").exists()


def test_export_release_writes_the_same_bundle_as_the_page_and_refuses_a_bad_path(db, tmp_path):
    import zipfile

    from django.core.management.base import CommandError

    build_track(tmp_path)
    out = StringIO()
    call_command("export_release", "robust", "-o", str(tmp_path / "r.zip"), stdout=out)
    names = zipfile.ZipFile(tmp_path / "r.zip").namelist()
    assert "robust/qrels.txt" in names and "robust/README.md" in names and "wrote" in out.getvalue()
    for bad, message in [(tmp_path, "is a directory"), (tmp_path / "nope" / "r.zip", "no such directory")]:
        with pytest.raises(CommandError, match=message):
            call_command("export_release", "robust", "-o", str(bad), stdout=StringIO())
    with pytest.raises(CommandError, match="no collection 'nope'"):
        call_command("export_release", "nope", stdout=StringIO())
    assert not list(tmp_path.glob(".partial.*"))


def _visible_and_folded(body: str, marker: str) -> tuple[str, str]:
    """The page up to the first folded part (<details class="more-lines">), and that part."""
    start = body.index(marker)
    cut = body.find('<details class="more-lines">', start)
    return (body[start:], "") if cut < 0 else (body[start:cut], body[cut:])


def test_a_job_of_150_files_shows_a_summary_and_10_lines_with_the_rest_folded(db, client, organizer):
    names = [f"run{n:03d}.run" for n in range(150)]
    job = Job.objects.create(kind="runs import", started_by=organizer, status=Job.Status.DONE,
                             params={"files": names, "replace": False},
                             result={"lines": [f"run run{n:03d}: 30,000 lines on 30 topics" for n in range(150)],
                                     "warnings": [f"run{n:03d}.run:{n}: a tie" for n in range(30)]})
    client.force_login(organizer)
    body = client.get(f"/jobs/{job.pk}/").content.decode()
    # the parameter line names the count and the first files; every name is in a closed <details>
    assert "files: 150 (run000.run, run001.run, run002.run, …), replace: no" in body
    assert "<summary>All 150 files</summary>" in body and "<code>run149.run</code>" in body
    shown, folded = _visible_and_folded(body, 'id="job-status"')
    assert "<strong>150 runs</strong>: the first 10 below" in shown
    assert "run run009: 30,000" in shown and "run run010:" not in shown
    assert "<summary>The other 140</summary>" in folded and "run run149: 30,000" in folded
    # warnings: 10 in the warnings' details, the other 20 folded inside it
    assert "<summary>30 warnings</summary>" in body and "<summary>The other 20 warnings</summary>" in body
    assert body.index("run009.run:9: a tie") < body.index("The other 20 warnings") < body.index("run010.run:10")


def test_a_job_of_a_few_lines_shows_them_all_without_folding(db, client, organizer):
    job = Job.objects.create(kind="runs import", started_by=organizer, status=Job.Status.DONE,
                             params={"files": ["a.run", "b.run"]},
                             result={"lines": ["run a: 3 lines on 1 topics", "run b: 2 lines on 1 topics"]})
    client.force_login(organizer)
    body = client.get(f"/jobs/{job.pk}/?fragment=1").content.decode()
    assert "run a: 3 lines" in body and "run b: 2 lines" in body
    assert "<details" not in body and "the first" not in body
    assert "files: a.run, b.run" in client.get(f"/jobs/{job.pk}/").content.decode()

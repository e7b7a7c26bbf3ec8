"""The full evaluation split into parts any worker claims (``JOB_PARTS``): the job shows the progress of all
its parts, a part whose worker died is done again by another, and the zip is the one a single worker writes."""

from __future__ import annotations

import io
import zipfile
from datetime import timedelta

import pytest

from evaluation.tasks import evaluate_collection
from tests.evaluation.tracks import build_track
from tests.split_jobs import DB_TASKS, assert_each_part_done_once, kill_worker_of, run_worker
from workbench.collections import files as store
from workbench.jobs import lifecycle as jobs
from workbench.jobs import subjobs
from workbench.models import Job

TEAMS = {"alpha": "red", "beta": "red", "late": "blue"}


def _report(job: Job) -> dict[str, bytes]:
    job.refresh_from_db()
    assert (job.status, job.error) == (Job.Status.DONE, ""), job.error
    with store.open_file(jobs.job_output(job, job.result["file"])) as handle:
        archive = zipfile.ZipFile(io.BytesIO(handle.read()))
    return {name.split("/", 1)[1]: archive.read(name) for name in archive.namelist()}


def _evaluate(collection, settings, parts: int) -> Job:
    settings.JOB_PARTS = parts
    return jobs.job_start(evaluate_collection, kind="evaluation", collection=collection,
                          params={"policy": "majority", "measures": ["map", "P.10"]})


@pytest.mark.django_db
def test_a_split_evaluation_shows_its_parts_and_writes_the_zip_of_one_worker(tmp_path, settings):
    settings.VAR_DIR = tmp_path
    collection = build_track(tmp_path, teams=TEAMS)
    whole = _report(_evaluate(collection, settings, 1))
    job = _evaluate(collection, settings, 3)
    split = _report(job)
    assert {"leave_one_run_out.csv", "leave_one_team_out.csv", "leaderboard.json"} <= set(split)
    assert split == whole
    assert split["leave_one_run_out.csv"].decode().count("\n") == 3  # a header, alpha and beta left out
    assert split["leave_one_team_out.csv"].decode().splitlines()[1].startswith("red,")
    # 3 parts asked for, 2 judged topics: a slice of one topic each, every run scored and left out on it
    assert (job.done, job.total) == (2, 2)
    assert [p["topics"] for p in job.parts.order_by("pk").values_list("params", flat=True)] == [["301"], ["302"]]
    assert list(job.parts.values_list("status", flat=True)) == ["done"] * 2
    assert Job.objects.filter(parent__isnull=False).count() == 2


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("killed", ["while running it", "right after claiming it"])
def test_a_part_whose_worker_died_is_done_by_another_worker_once_and_the_zip_is_the_same(tmp_path, settings, client,
                                                                                          organizer, killed):
    settings.VAR_DIR = tmp_path
    collection = build_track(tmp_path, teams=TEAMS)
    whole = _report(_evaluate(collection, settings, 1))
    settings.TASKS = DB_TASKS
    job = _evaluate(collection, settings, 2)
    run_worker("--max-tasks", "1")  # plans: 2 parts queued
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == (Job.Status.RUNNING, 0, 2)
    client.force_login(organizer)
    assert "0 of 2 parts done (waiting for workers)" in client.get(f"/jobs/{job.pk}/?fragment=1").content.decode()
    dead = job.parts.order_by("pk")[1]
    kill_worker_of(dead, began=killed == "while running it")
    run_worker()
    assert _report(job) == whole
    dead.refresh_from_db()
    assert dead.status == Job.Status.DONE and dead.params["retried"]
    assert_each_part_done_once("evaluation.tasks.evaluation_part", "evaluation.tasks.join_evaluation", 2)


@pytest.mark.django_db
def test_an_evaluation_whose_board_is_stored_is_not_split(tmp_path, settings):
    """The version's board job stored the scores and leave-one-out: one worker reads them, no part computes
    them again; the zip is the same."""
    from evaluation import board

    settings.VAR_DIR = tmp_path
    collection = build_track(tmp_path, teams=TEAMS)
    whole = _report(_evaluate(collection, settings, 1))
    board.build(collection, "majority")
    job = _evaluate(collection, settings, 2)
    assert _report(job) == whole
    assert job.parts.count() == 0


@pytest.mark.django_db(transaction=True)
def test_parts_left_by_a_job_of_the_same_id_in_a_reset_database_are_not_joined(tmp_path, settings):
    """A database reset (or a test's rolled-back rows) gives a new job the id of an old one whose parts' outputs
    are still in the file store: they are never joined into its report (each job's parts have their own folder;
    removing the old ones when splitting would wait on the bucket before the job is running)."""
    settings.VAR_DIR = tmp_path
    collection = build_track(tmp_path, teams=TEAMS)
    whole = _report(_evaluate(collection, settings, 1))
    settings.TASKS = DB_TASKS
    job = _evaluate(collection, settings, 2)  # queued, not run yet
    older = Job(pk=job.pk, created_at=job.created_at - timedelta(days=1))  # the old job of this id
    for index in range(2):
        for folder in (subjobs.parts_folder(older), f"jobs/{job.pk}/parts"):  # (and where earlier versions kept them)
            store.put_bytes(f"{folder}/{index}.json", b'{"judge": "another job", "pairs": 18}')
    run_worker()
    assert _report(job) == whole


@pytest.mark.django_db
def test_a_part_reads_the_collections_version_once(tmp_path, settings):
    """A part sees one version of the collection, read once (as one worker's report does): at 1,000 runs each
    reading counts a pool's 3.6 M entries, 0.5 s a time, three times a part before."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from evaluation.report import report_section, report_sections
    from pooling.models import Pool

    settings.VAR_DIR = tmp_path
    collection = build_track(tmp_path, teams=TEAMS)
    pools = Pool.objects.filter(collection=collection).count()
    assert pools >= 1
    section = report_sections(collection, shares=2)[0]
    with CaptureQueriesContext(connection) as queries:
        report_section(collection, section, measures=["map"], policy="majority")
    counts = [q["sql"] for q in queries.captured_queries if "COUNT(" in q["sql"] and "pooling_poolentry" in q["sql"]
              and "GROUP BY" not in q["sql"]]
    assert len(counts) == pools, counts


@pytest.mark.django_db
def test_the_planner_reads_no_version_where_no_board_is_stored(tmp_path, settings):
    """Whether a stored board makes the split needless is asked of the board files first: with none stored the
    planner does not read the version (counting the pool's entries) on the split job's critical path."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from evaluation import board
    from evaluation.tasks import _stored_here

    settings.VAR_DIR = tmp_path
    collection = build_track(tmp_path, teams=TEAMS)
    with CaptureQueriesContext(connection) as queries:
        assert not _stored_here(collection, "majority")
    assert not [q for q in queries.captured_queries if "pooling_poolentry" in q["sql"]]
    board.build(collection, "majority")
    assert board.any_stored(collection, "majority") and not board.any_stored(collection, "adjudicated")

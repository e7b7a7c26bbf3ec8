"""A killed worker leaves nothing behind: the next ``db_worker`` (at start-up and every few seconds) or
``manage.py sweep_jobs`` settles a job whose worker died. An import is retried once (it writes in one
transaction, so a retry cannot double anything); killed again, it is marked failed with its django-tasks
rows, and its staged upload is removed. Real ``db_worker`` processes, killed with SIGKILL."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_tasks.base import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from tests.browser.stack import ROOT, running_stack
from workbench.jobs import lifecycle as jobs
from workbench.models import Job

START = """
from pathlib import Path
from workbench.jobs import lifecycle as jobs
from workbench.collections.services import collection_create
from workbench.tasks import import_documents
c = collection_create(slug="big", name="Big")
job = jobs.job_start(import_documents, kind="documents import", collection=c, params={{"directory": "{folder}"}})
print(job.pk)
"""

STATE = """
import json
from django_tasks_db.models import DBTaskResult
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection, Job
job = Job.objects.get(pk={job})
status, error = jobs.job_view_state(job)
print(json.dumps({{"status": status, "stored": job.status, "done": job.done, "error": error,
                  "retried": bool(job.params.get("retried")), "task": job.task_id,
                  "rows": sorted(DBTaskResult.objects.values_list("status", flat=True)),
                  "documents": Collection.objects.get(slug="big").documents.count()}}))
"""


def _worker(stack, log):
    return subprocess.Popen([sys.executable, "manage.py", "db_worker", "--no-reload", "--interval", "0.2",
                             "--no-startup-delay"], cwd=ROOT, env=stack.env, stdout=log, stderr=subprocess.STDOUT)


def _wait(stack, job_id, until, seconds=90):
    deadline = time.monotonic() + seconds
    state = json.loads(stack.manage("shell", "-c", STATE.format(job=job_id)).strip().splitlines()[-1])
    while not until(state) and time.monotonic() < deadline:
        time.sleep(0.3)
        state = json.loads(stack.manage("shell", "-c", STATE.format(job=job_id)).strip().splitlines()[-1])
    assert until(state), state
    return state


@pytest.mark.track
@pytest.mark.slow
def test_a_job_killed_twice_is_retried_once_then_failed_with_its_task_rows_and_staged_files_gone(tmp_path,
                                                                                                monkeypatch):
    monkeypatch.setenv("JOB_STALE_AFTER_SECONDS", "3")
    with running_stack(tmp_path, organizer="boss", password="organizer-pass-1") as stack:
        folder = tmp_path / "var" / "uploads" / "staged-job"
        folder.mkdir(parents=True)
        with open(folder / "big.jsonl", "w") as out:  # enough documents for the import to take a few seconds
            for i in range(250_000):
                out.write(f'{{"docno": "D{i}", "text": "words of document number {i} about nothing in particular"}}\n')
        job_id = int(stack.manage("shell", "-c", START.format(folder=folder)).strip().splitlines()[-1])
        first = _wait(stack, job_id, lambda s: s["stored"] == "running" and s["done"] > 0)
        stack.worker.send_signal(signal.SIGKILL)
        stack.worker.wait(timeout=10)
        with open(tmp_path / "workers.log", "w") as log:
            second = _worker(stack, log)
            try:  # the new worker's sweep queues the job again, and runs it
                retried = _wait(stack, job_id, lambda s: s["retried"] and s["stored"] == "running" and s["done"] > 0
                                and s["task"] != first["task"])
                assert "FAILED" in retried["rows"] and folder.exists(), retried
                second.send_signal(signal.SIGKILL)
                second.wait(timeout=10)
                third = _worker(stack, log)
                failed = _wait(stack, job_id, lambda s: s["stored"] == "failed")
            finally:
                for worker in (second, locals().get("third")):
                    if worker is not None and worker.poll() is None:
                        worker.kill()
                        worker.wait(timeout=10)
    assert failed["documents"] == 0, failed  # nothing half-written, nothing doubled
    assert "the worker stopped before the job finished" in failed["error"], failed
    assert "it had been started again once" in failed["error"], failed
    assert failed["rows"] == ["FAILED", "FAILED"], failed  # both task rows, none left "RUNNING"
    assert not folder.exists()  # the staged upload is removed


def _dead_job(tmp_path, settings, organizer, **params) -> Job:
    """A running job whose worker stopped long ago, with its task row still RUNNING, as a SIGKILL leaves it."""
    from workbench.collections.services import collection_create

    settings.VAR_DIR = tmp_path / "var"
    folder = tmp_path / "var" / "uploads" / "console" / "abc"
    folder.mkdir(parents=True)
    (folder / "topics.tsv").write_text("1\tfirst topic\n2\tsecond topic\n")
    collection = collection_create(slug="c", name="C")
    row = DBTaskResult.objects.create(status=TaskResultStatus.RUNNING, args_kwargs={"args": [0], "kwargs": {}},
                                      task_path="workbench.tasks.import_topics", backend_name="default",
                                      run_after=timezone.now(), worker_ids=["gone"])
    long_ago = timezone.now() - timedelta(hours=1)
    job = Job.objects.create(kind="topics import", collection=collection, started_by=organizer,
                             status=Job.Status.RUNNING, heartbeat_at=long_ago, started_at=long_ago,
                             task_id=str(row.id), params={"directory": str(folder), **params})
    row.args_kwargs = {"args": [job.pk], "kwargs": {}}
    row.save()
    return job


def test_the_sweep_retries_a_dead_import_once_and_the_retry_imports_it(db, tmp_path, settings, organizer, client):
    job = _dead_job(tmp_path, settings, organizer)
    assert jobs.sweep_dead_jobs() == [(job.pk, "retried")]
    job.refresh_from_db()  # the test settings run a task at once: the retry has run
    assert job.status == "done" and job.collection.topics.count() == 2, (job.status, job.error)
    assert list(DBTaskResult.objects.values_list("status", flat=True)) == ["FAILED"]
    assert not (tmp_path / "var" / "uploads" / "console" / "abc").exists()
    client.force_login(organizer)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "Its worker stopped once; the job was started again" in page


def test_sweep_jobs_fails_a_dead_job_already_retried_and_removes_its_staged_files(db, tmp_path, settings, organizer,
                                                                                  client):
    job = _dead_job(tmp_path, settings, organizer, retried=True)
    fresh = Job.objects.create(kind="topics import", status=Job.Status.RUNNING, heartbeat_at=timezone.now())
    out = io.StringIO()
    call_command("sweep_jobs", stdout=out)
    assert out.getvalue().splitlines() == [f"job {job.pk}: failed", "1 dead job settled"]
    job.refresh_from_db()
    fresh.refresh_from_db()
    assert job.status == "failed" and "it had been started again once" in job.error
    assert fresh.status == "running"  # a job whose worker reports is left alone
    assert list(DBTaskResult.objects.values_list("status", flat=True)) == ["FAILED"]
    assert not (tmp_path / "var" / "uploads" / "console" / "abc").exists()
    client.force_login(organizer)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "The job failed: the worker stopped before the job finished" in page

"""A job whose worker is killed mid-way (SIGKILL, as a crash or an out-of-memory kill would) leaves nothing
half-written, and its page shows it failed once it stops reporting. The worker is a real ``db_worker``
process over the stack's database (a SQLite file; a fresh PostgreSQL database in ``make test-postgres``)."""

from __future__ import annotations

import json
import signal
import time

import pytest

from tests.browser.stack import running_stack

pytestmark = [pytest.mark.track, pytest.mark.slow]

START = """
from pathlib import Path
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection
from workbench.collections.services import collection_create
from workbench.tasks import import_documents
c = collection_create(slug="big", name="Big")
folder = Path("{folder}")
job = jobs.job_start(import_documents, kind="documents import", collection=c, params={{"directory": str(folder)}})
print(job.pk)
"""

STATE = """
import json
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection, Job
job = Job.objects.get(pk={job})
status, error = jobs.job_view_state(job)
print(json.dumps({{"status": status, "stored": job.status, "done": job.done, "error": error,
                  "documents": Collection.objects.get(slug="big").documents.count()}}))
"""


def _state(stack, job_id) -> dict:
    return json.loads(stack.manage("shell", "-c", STATE.format(job=job_id)).strip().splitlines()[-1])


def test_a_killed_worker_leaves_no_documents_and_its_job_shows_failed(tmp_path, monkeypatch):
    monkeypatch.setenv("JOB_STALE_AFTER_SECONDS", "3")
    folder = tmp_path / "var" / "uploads" / "upload"  # staged where the console stages uploads
    folder.mkdir(parents=True)
    with open(folder / "big.jsonl", "w") as out:  # enough documents for the import to take a few seconds
        for i in range(400_000):
            out.write(f'{{"docno": "D{i}", "text": "words of document number {i} about nothing in particular"}}\n')
    with running_stack(tmp_path, organizer="boss", password="organizer-pass-1") as stack:
        job_id = int(stack.manage("shell", "-c", START.format(folder=folder)).strip().splitlines()[-1])
        deadline = time.monotonic() + 60
        state = _state(stack, job_id)
        while state["done"] == 0 and time.monotonic() < deadline:  # running and reporting progress
            time.sleep(0.2)
            state = _state(stack, job_id)
        assert state["stored"] == "running" and state["done"] > 0, state
        stack.worker.send_signal(signal.SIGKILL)
        stack.worker.wait(timeout=10)
        time.sleep(4)
        state = _state(stack, job_id)
    assert state["documents"] == 0  # nothing half-written
    assert state["status"] == "failed" and "the worker stopped before the job finished" in state["error"]

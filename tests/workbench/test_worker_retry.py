"""A ``db_worker`` waits out a locked database instead of exiting (workbench.worker.loop): a real worker process
over a SQLite file whose write lock another process holds for longer than the busy timeout. The job it was
running when its own write failed ends failed with one line, like any failed job; the worker lives on and
runs the next job. SQLite only (the lock is the file's): skipped in the PostgreSQL pass."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.browser.stack import running_stack
from tests.workbench.test_locked_database import HOLD  # a process holding SQLite's write lock
from workbench.worker.loop import MAX_WAIT, next_wait

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.environ.get("DATABASE_URL", "").startswith("postgres"),
                                 reason="the write lock held here is SQLite's")]

START = """
from pathlib import Path
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection
from workbench.collections.services import collection_create
from workbench.tasks import import_documents
c = Collection.objects.filter(slug="big").first() or collection_create(slug="big", name="Big")
job = jobs.job_start(import_documents, kind="documents import", collection=c, params={{"directory": "{folder}"}})
print(job.pk)
"""

STATE = """
import json
from workbench.models import Collection, Job
job = Job.objects.get(pk={job})
print(json.dumps({{"status": job.status, "done": job.done, "error": job.error,
                  "documents": Collection.objects.get(slug="big").documents.count()}}))
"""



def _documents(folder, count: int) -> None:
    folder.mkdir(parents=True)
    with open(folder / "docs.jsonl", "w") as out:
        for i in range(count):
            out.write(f'{{"docno": "{folder.name}-{i}", "text": "words of document number {i} about nothing"}}\n')


def _state(stack, job_id: int) -> dict:
    return json.loads(stack.manage("shell", "-c", STATE.format(job=job_id)).strip().splitlines()[-1])


def _until(stack, job_id: int, done, seconds: float = 60) -> dict:
    deadline = time.monotonic() + seconds
    state = _state(stack, job_id)
    while not done(state) and time.monotonic() < deadline:
        time.sleep(0.3)
        state = _state(stack, job_id)
    return state


def test_the_wait_doubles_from_one_second_up_to_its_cap():
    waits = [next_wait(0)]
    for _ in range(8):
        waits.append(next_wait(waits[-1]))
    assert waits[:4] == [1, 2, 4, 8] and waits[-1] == MAX_WAIT and max(waits) == MAX_WAIT


def test_a_worker_outlives_a_locked_database_and_its_job_fails_in_one_line(tmp_path):
    staged = tmp_path / "var" / "uploads"
    _documents(staged / "big", 300_000)  # a few seconds of reading before its write: the lock comes meanwhile
    _documents(staged / "small", 10)
    with running_stack(tmp_path, organizer="boss", password="organizer-pass-1",
                       env={"SQLITE_BUSY_TIMEOUT": "1"}) as stack:
        database = stack.env["DATABASE_URL"].removeprefix("sqlite:///")
        job_id = int(stack.manage("shell", "-c", START.format(folder=staged / "big")).strip().splitlines()[-1])
        state = _until(stack, job_id, lambda s: s["done"] > 0)
        assert state["status"] == "running", state
        holder = subprocess.Popen([sys.executable, "-c", HOLD, database, "8"], stdout=subprocess.PIPE, text=True)
        assert holder.stdout.readline().strip() == "locked"
        assert holder.wait(timeout=30) == 0
        state = _until(stack, job_id, lambda s: s["status"] in ("done", "failed"))
        assert state["status"] == "failed" and "database is locked" in state["error"], state
        assert state["documents"] == 0  # nothing half-written
        assert stack.worker.poll() is None, "the worker stopped:\n" + stack.log.read_text()[-3000:]

        following = int(stack.manage("shell", "-c", START.format(folder=staged / "small")).strip().splitlines()[-1])
        state = _until(stack, following, lambda s: s["status"] in ("done", "failed"))
        assert state["status"] == "done" and state["documents"] == 10, state
        log = stack.log.read_text()
        assert "could not record a task's outcome (database is locked); trying again in" in log, log[-3000:]

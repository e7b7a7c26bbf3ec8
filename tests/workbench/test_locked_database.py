"""A SQLite database whose write lock is held for a minute by another process (as a long import holds it):
the web server and two ``db_worker`` processes over it, with a busy timeout of 5 s so that the lock outlasts
it. Meanwhile an assessor posts judgments, pages are read and an organizer starts a job. Afterwards both
workers are still running and run the next jobs; no request answered 500; every judgment posted was stored
or answered 503 "try again", and the ones answered 503 are stored when sent again: none lost.

SQLite only (the lock is the file's): skipped in the PostgreSQL pass."""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from contextlib import closing
from pathlib import Path

import pytest

from tests.browser.stack import ROOT, running_stack

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.environ.get("DATABASE_URL", "").startswith("postgres"),
                                 reason="the write lock held here is SQLite's")]

LOCK_SECONDS = 60
BUSY_TIMEOUT = 5

SETUP = """
import json
from django.contrib.auth.models import Group, User
from judging.assignments import assignments_create
from judging.models import AssignmentItem
from pooling.models import Pool, PoolEntry
from workbench.models import Document, Topic
from workbench.collections.services import collection_create
c = collection_create(slug="locked", name="Locked", scale=[{"grade": 0, "label": "Not relevant"},
                                                            {"grade": 1, "label": "Relevant"}])
topic = Topic.objects.create(collection=c, qid="1", title="Locks", description="Databases that wait.")
Document.objects.bulk_create(Document(collection=c, docno=f"d{i}", title=f"Title {i}", text=f"Text of d{i} " * 20)
                             for i in range(80))
pool = Pool.objects.create(collection=c, name="main", strategy="depth", params={"depth": 100})
PoolEntry.objects.bulk_create(PoolEntry(pool=pool, topic=topic, docno=f"d{i}", judging_order=i + 1, pool_rank=i + 1,
                                        min_depth=i + 1) for i in range(80))
user = User.objects.create_user("assessor", password="assessor-pass-1")
user.groups.add(Group.objects.get_or_create(name="assessors")[0])
assignments_create(pool=pool, assessors=[user], topics=["1"])
items = AssignmentItem.objects.filter(assignment__assessor=user).order_by("judging_order")
print(json.dumps([i.pk for i in items]))
"""

# BEGIN IMMEDIATE and a write: the database's write lock, held until the process ends its transaction
HOLD = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute("CREATE TABLE lock_holder (x)")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("ROLLBACK")
"""


class Browser:
    """A person's session on the server: cookies, the CSRF token, redirects not followed."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.jar = http.cookiejar.CookieJar()

        class NoRedirect(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args, **kwargs):
                return None

        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), NoRedirect)

    def send(self, path: str, data: dict | None = None) -> tuple[int, str, dict]:
        body = None
        headers = {"Referer": self.url + path}
        if data is not None:
            token = next((c.value for c in self.jar if c.name == "csrftoken"), "")
            body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": token}).encode()
        request = urllib.request.Request(self.url + path, data=body, headers=headers)
        try:
            with self.opener.open(request, timeout=60) as response:
                return response.status, response.read().decode(), dict(response.headers)
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode(errors="replace"), dict(exc.headers)

    def log_in(self, username: str, password: str) -> None:
        self.send("/accounts/login/")
        status, _, headers = self.send("/accounts/login/", {"username": username, "password": password})
        assert status == 302, (status, headers)


def _worker(stack, log: Path) -> subprocess.Popen:
    with open(log, "w") as out:
        return subprocess.Popen([sys.executable, "manage.py", "db_worker", "--no-reload", "--interval", "0.2",
                                 "--no-startup-delay"], cwd=ROOT, env=stack.env, stdout=out, stderr=subprocess.STDOUT)


def _statuses(database: str, job_ids: list[int]) -> list[str]:
    with closing(sqlite3.connect(database, timeout=10)) as db:
        marks = ",".join("?" * len(job_ids))
        return [row[0] for row in db.execute(f"SELECT status FROM workbench_job WHERE id IN ({marks})", job_ids)]


def _tokens(database: str) -> list[str]:
    with closing(sqlite3.connect(database, timeout=10)) as db:
        return [row[0] for row in db.execute("SELECT client_token FROM judging_judgment")]


def _start_job(organizer: Browser) -> tuple[int, str]:
    status, body, headers = organizer.send("/judge/organize/locked/duplicates/find/", {"threshold": "0.7", "shingle": "3"})
    match = re.search(r"/jobs/(\d+)/", headers.get("Location", ""))
    return status, (match.group(1) if match else body[:300])


def test_a_minute_of_locked_database_loses_no_judgment_and_stops_no_worker(tmp_path):
    env = {"SQLITE_BUSY_TIMEOUT": str(BUSY_TIMEOUT), "JOB_STALE_AFTER_SECONDS": "600"}
    with running_stack(tmp_path, organizer="boss", password="organizer-pass-1", env=env) as stack:
        database = stack.env["DATABASE_URL"].removeprefix("sqlite:///")
        items = json.loads(stack.manage("shell", "-c", SETUP).strip().splitlines()[-1])
        second = _worker(stack, tmp_path / "worker2.log")
        workers = [stack.worker, second]
        try:
            assessor, organizer = Browser(stack.url), Browser(stack.url)
            assessor.log_in("assessor", "assessor-pass-1")
            organizer.log_in("boss", "organizer-pass-1")
            holder = subprocess.Popen([sys.executable, "-c", HOLD, database, str(LOCK_SECONDS)],
                                      stdout=subprocess.PIPE, text=True)
            assert holder.stdout.readline().strip() == "locked"
            locked_until = time.monotonic() + LOCK_SECONDS
            answers: dict[str, int] = {}  # client token -> the status its post answered
            others: list[tuple[str, int]] = []  # (what, status) of the page reads and the job start
            free = iter(items)
            take = threading.Lock()

            def judge() -> None:
                while time.monotonic() < locked_until - 1:
                    with take:
                        item = next(free)
                    status, _, _ = assessor.send(f"/judge/item/{item}/", {"grade": "1", "client_token": f"t{item}"})
                    answers[f"t{item}"] = status

            threads = [threading.Thread(target=judge) for _ in range(3)]
            for thread in threads:
                thread.start()
            others.append(("job start", _start_job(organizer)[0]))
            while time.monotonic() < locked_until - 1:
                for path in ("/judge/", f"/judge/item/{items[-1]}/", "/"):
                    others.append((path, assessor.send(path)[0]))
                time.sleep(1)
            for thread in threads:
                thread.join()
            assert holder.wait(timeout=30) == 0

            refused = [token for token, status in answers.items() if status == 503]
            assert refused, answers  # the lock outlasted the busy timeout: some judgments were told to wait
            assert set(answers.values()) <= {302, 503}, answers  # stored (redirected to the next one) or "try again"
            assert all(status in (200, 302, 503) for _, status in others), others
            stored_during = {token for token, status in answers.items() if status == 302}
            for token in refused:  # the assessor sends each again, as the page says
                status, _, _ = assessor.send(f"/judge/item/{token[1:]}/", {"grade": "1", "client_token": token})
                assert status == 302, (token, status)

            assert all(worker.poll() is None for worker in workers), "a db_worker stopped"
            started = [_start_job(organizer) for _ in range(4)]
            assert all(status == 302 for status, _ in started), started
            job_ids = [int(job) for _, job in started]
            deadline = time.monotonic() + 30
            while set(_statuses(database, job_ids)) != {"done"} and time.monotonic() < deadline:
                time.sleep(0.3)
            assert set(_statuses(database, job_ids)) == {"done"}, _statuses(database, job_ids)
            assert all(worker.poll() is None for worker in workers), "a db_worker stopped"
            tokens = _tokens(database)
            assert sorted(tokens) == sorted(answers), "a judgment was lost or stored twice"
            assert stored_during <= set(tokens)
            logs = [tmp_path / "stack.log", tmp_path / "worker2.log"]
            for log in logs:  # each worker met the lock, waited and went on
                assert "the database answers again" in log.read_text(), log.read_text()[-3000:]
        finally:
            if second.poll() is None:
                second.terminate()
                second.wait(timeout=10)

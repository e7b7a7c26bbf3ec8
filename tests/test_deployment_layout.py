"""The deployment of README's "Several machines" section, as processes: two web processes (gunicorn), two
``db_worker`` processes each in a working directory of its own (its own ``VAR_DIR``: no disk shared with the
web processes or with each other), one database (a SQLite file; a fresh PostgreSQL database in
``make test-postgres``) and an S3 server (SeaweedFS from PyPI, on 127.0.0.1). An upload made on one web
process lives only in the bucket and is imported by a worker; a split evaluation whose worker is killed
mid-part is finished by the other worker, and its report equals the one-worker report."""

from __future__ import annotations

import http.cookiejar
import io
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
import uuid
import zipfile
from contextlib import ExitStack
from pathlib import Path

import pytest

from tests.browser.stack import ROOT, _database, _free_port, _wait_for
from tests.s3server import running_s3

pytestmark = [pytest.mark.track, pytest.mark.slow]

TRACK = """
from pathlib import Path
from tests.evaluation.tracks import build_track
Path("{tmp}").mkdir()
build_track(Path("{tmp}"), teams={{"alpha": "red", "beta": "red", "late": "blue"}})
"""

STATE = """
import json
from django_tasks_db.models import DBTaskResult
from workbench.models import Job
job = Job.objects.get(pk={job})
parts = [{{"status": p.status, "workers": list(DBTaskResult.objects.filter(id=p.task_id).values_list("worker_ids", flat=True))}}
         for p in job.parts.order_by("pk")]
rows = list(DBTaskResult.objects.filter(task_path="evaluation.tasks.evaluation_part").values_list("status", flat=True))
print(json.dumps({{"status": job.status, "error": job.error, "done": job.done, "total": job.total, "parts": parts,
                  "rows": sorted(rows), "result": job.result}}))
"""

BOARDS_BUSY = """
from workbench.models import Job
print(Job.objects.filter(kind="board", status__in=["queued", "running"]).count())
"""

REFERENCE = """
import json, zipfile, io
from evaluation.report import evaluation_report
from workbench.models import Collection
bundle = evaluation_report(Collection.objects.get(slug="robust"), measures=["map", "P.10"], policy="majority")
archive = zipfile.ZipFile(io.BytesIO(bundle.data))
print(json.dumps({{n.split("/", 1)[1]: archive.read(n).decode() for n in archive.namelist()}}))
"""


class Browser:
    """An organizer's session over plain HTTP (cookies kept; the two web processes share them by the database)."""

    def __init__(self) -> None:
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def get(self, url: str) -> tuple[str, str]:
        with self.opener.open(url, timeout=30) as response:
            return response.geturl(), response.read().decode()

    def post(self, url: str, fields: dict, files: dict | None = None) -> tuple[str, str]:
        if not any(c.name == "csrftoken" for c in self.cookies):
            self.get(url)  # a page with a form sets the CSRF cookie
        fields = {**fields, "csrfmiddlewaretoken": next(c.value for c in self.cookies if c.name == "csrftoken")}
        boundary = uuid.uuid4().hex
        body = io.BytesIO()
        for name, value in fields.items():
            body.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
        for name, (filename, data) in (files or {}).items():
            body.write(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                       f"Content-Type: text/plain\r\n\r\n".encode() + data + b"\r\n")
        body.write(f"--{boundary}--\r\n".encode())
        request = urllib.request.Request(url, data=body.getvalue(), headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}"})
        with self.opener.open(request, timeout=30) as response:
            return response.geturl(), response.read().decode()


def _manage(env: dict, *args: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


def _until(env: dict, job: int, condition, seconds: float = 60) -> dict:
    deadline = time.monotonic() + seconds
    while True:
        state = json.loads(_manage(env, "shell", "-c", STATE.format(job=job)))
        if condition(state) or time.monotonic() > deadline:
            assert condition(state), state
            return state
        time.sleep(0.3)


def _files_named(folder: Path, name: str) -> list[Path]:
    return [p for p in folder.rglob(name) if p.is_file()]


def test_two_web_processes_and_two_workers_without_a_shared_disk_run_a_track_through_s3(tmp_path):
    with ExitStack() as stack:
        s3 = stack.enter_context(running_s3())
        database = stack.enter_context(_database(tmp_path))
        base = {**os.environ, "DATABASE_URL": database, "DEBUG": "0", "SECRET_KEY": f"layout-{uuid.uuid4().hex * 2}",
                "ALLOWED_HOSTS": "127.0.0.1,localhost", "PYTHONUNBUFFERED": "1", "JOB_PARTS": "2",
                "JOB_STALE_AFTER_SECONDS": "3", "DJANGO_SUPERUSER_PASSWORD": "organizer-pass-1", **s3.env("track")}
        base.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        web_env = {**base, "WORKBENCH_VAR_DIR": str(tmp_path / "web" / "var")}
        _manage(web_env, "migrate", "--noinput")
        _manage(web_env, "createsuperuser", "--noinput", "--username", "boss", "--email", "boss@example.org")
        _manage(web_env, "shell", "-c", TRACK.format(tmp=tmp_path / "files"))
        log = open(tmp_path / "layout.log", "w")  # noqa: SIM115 - closed by the exit stack
        stack.callback(log.close)
        processes: dict[str, subprocess.Popen] = {}

        def start(name: str, command: list[str], env: dict, cwd: Path) -> subprocess.Popen:
            process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
            processes[name] = process
            stack.callback(lambda: process.poll() is None and (process.kill(), process.wait(10)))
            return process

        ports = [_free_port(), _free_port()]
        for i, port in enumerate(ports):
            start(f"web{i}", [sys.executable, "-m", "gunicorn", "workbench.wsgi", "--workers", "1", "--bind",
                              f"127.0.0.1:{port}", "--no-control-socket"], web_env, ROOT)
        for name in ("A", "B"):
            home = tmp_path / f"worker-{name}"
            home.mkdir()
            start(name, [sys.executable, str(ROOT / "manage.py"), "db_worker", "--no-reload", "--interval", "0.2",
                         "--no-startup-delay", "--worker-id", name],
                  {**base, "WORKBENCH_VAR_DIR": str(home / "var")}, home)
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        for url in urls:
            _wait_for(f"{url}/accounts/login/", list(processes.values()), tmp_path / "layout.log")

        # an upload on one web process, its job followed on the other: the file lives only in the bucket
        browser = Browser()
        browser.post(f"{urls[0]}/accounts/login/", {"username": "boss", "password": "organizer-pass-1"})
        run = "".join(f"{q} Q0 {d} {r + 1} {9 - r} gamma\n" for q in ("301", "302") for r, d in enumerate("abc"))
        where, _ = browser.post(f"{urls[1]}/console/robust/upload/",
                                {"kind": "runs", "runs-contributes": "on"}, {"runs-files": ("gamma.run", run.encode())})
        job = int(re.search(r"/jobs/(\d+)/", where)[1])
        deadline = time.monotonic() + 60
        while "run gamma: 6 lines" not in (page := browser.get(f"{urls[0]}/jobs/{job}/?fragment=1")[1]):
            assert time.monotonic() < deadline and "The job failed" not in page, page[-2000:]
            time.sleep(0.3)
        assert not _files_named(tmp_path / "web", "gamma.run") and not s3.keys("track/uploads/")
        # the board job the new run queued writes to the bucket too: done before the bucket is frozen below
        deadline = time.monotonic() + 60
        while _manage(web_env, "shell", "-c", BOARDS_BUSY) != "0":
            assert time.monotonic() < deadline
            time.sleep(0.3)

        # a split evaluation: worker A is killed in the middle of a part (the S3 server frozen while it writes)
        os.kill(s3.pid, signal.SIGSTOP)
        try:
            where, _ = browser.post(f"{urls[0]}/collections/robust/downloads/evaluation/",
                                    {"measures": "map P.10", "policy": "majority"})
            job = int(re.search(r"/jobs/(\d+)/", where)[1])
            state = _until(web_env, job, lambda s: any(p["status"] == "running" and ["A"] in p["workers"]
                                                       for p in s["parts"]))
            processes["A"].send_signal(signal.SIGKILL)
            processes["A"].wait(timeout=10)
        finally:
            os.kill(s3.pid, signal.SIGCONT)
        state = _until(web_env, job, lambda s: s["status"] in ("done", "failed"), seconds=90)
        assert (state["status"], state["error"], state["done"], state["total"]) == ("done", "", 2, 2), state
        assert state["rows"] == ["FAILED"] + ["SUCCESSFUL"] * 2  # A's part, failed by the sweep, done again by B
        _, page = browser.get(f"{urls[1]}/jobs/{job}/")
        assert state["result"]["file"] in page
        with browser.opener.open(f"{urls[1]}{state['result']['url']}", timeout=30) as response:
            archive = zipfile.ZipFile(io.BytesIO(response.read()))
        report = {n.split("/", 1)[1]: archive.read(n).decode() for n in archive.namelist()}
        assert report == json.loads(_manage(web_env, "shell", "-c", REFERENCE.format()))


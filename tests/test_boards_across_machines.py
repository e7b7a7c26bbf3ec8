"""Stored boards across machines, as processes: a ``db_worker`` in a folder of its own (its own ``VAR_DIR``)
builds the leaderboard's board, which lives in the S3 bucket (SeaweedFS from PyPI, on 127.0.0.1); a gunicorn
web process with another ``VAR_DIR`` serves it; after new judgments the worker builds the board again and the
web process, which had read the old one, serves the new one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from contextlib import ExitStack

import pytest

from tests.browser.stack import ROOT, _database, _free_port, _wait_for
from tests.s3server import running_s3
from tests.test_deployment_layout import TRACK, Browser, _manage

pytestmark = [pytest.mark.track, pytest.mark.slow]

JUDGE = """
from judging.models import Judgment
from workbench.models import Collection
track = Collection.objects.get(slug="robust")
for docno in ("a", "b", "c", "d"):
    Judgment.objects.create(collection=track, topic=track.topics.get(qid="301"), docno=docno, grade=2,
                            assessor="nist", source=Judgment.Source.IMPORT)
"""

EXPECTED = """
import json
from evaluation import scoring
from workbench.models import Collection
scores = scoring.evaluate(Collection.objects.get(slug="robust"))
print(json.dumps({tag: s.aggregate["map"] for tag, s in scores.items()}))
"""


def _board_files(folder) -> list[str]:
    return sorted(p.name for p in folder.rglob("*.parquet") if "extras" not in p.parts) if folder.exists() else []


def _leaderboard(browser: Browser, url: str, expected: dict, seconds: float = 90) -> dict:
    """The leaderboard's MAP by run once it equals ``expected`` (the worker builds the board meanwhile)."""
    deadline, maps = time.monotonic() + seconds, None
    while time.monotonic() < deadline:
        try:
            _, body = browser.get(f"{url}/collections/robust/leaderboard/?_export=json")
            maps = {r["run"]: r["measures"]["map"] for r in json.loads(body)["runs"]}
            if maps.keys() == expected.keys() and all(abs(maps[t] - v) < 1e-9 for t, v in expected.items()):
                return maps
        except OSError:  # 503 while the board is being computed
            pass
        time.sleep(0.3)
    raise AssertionError(f"the leaderboard shows {maps}, not {expected}")


def test_a_board_built_by_a_worker_is_served_by_a_web_process_on_another_disk_and_replaced_when_rebuilt(tmp_path):
    with ExitStack() as stack:
        s3 = stack.enter_context(running_s3())
        database = stack.enter_context(_database(tmp_path))
        base = {**os.environ, "DATABASE_URL": database, "DEBUG": "0", "SECRET_KEY": f"boards-{uuid.uuid4().hex * 2}",
                "ALLOWED_HOSTS": "127.0.0.1,localhost", "PYTHONUNBUFFERED": "1",
                "DJANGO_SUPERUSER_PASSWORD": "organizer-pass-1", **s3.env("track")}
        for name in ("DJANGO_ALLOW_ASYNC_UNSAFE", "BOARD_DIR", "WORK_DIR"):
            base.pop(name, None)
        web_var, worker_var = tmp_path / "web" / "var", tmp_path / "worker" / "var"
        web_env = {**base, "WORKBENCH_VAR_DIR": str(web_var)}
        _manage(web_env, "migrate", "--noinput")
        _manage(web_env, "createsuperuser", "--noinput", "--username", "boss", "--email", "boss@example.org")
        _manage(web_env, "shell", "-c", TRACK.format(tmp=tmp_path / "files"))  # its judgments queue a board job
        log = open(tmp_path / "boards.log", "w")  # noqa: SIM115 - closed by the exit stack
        stack.callback(log.close)
        processes = []

        def start(command: list[str], env: dict, cwd) -> None:
            process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT)
            processes.append(process)
            stack.callback(lambda: process.poll() is None and (process.kill(), process.wait(10)))

        port = _free_port()
        start([sys.executable, "-m", "gunicorn", "workbench.wsgi", "--workers", "1", "--bind", f"127.0.0.1:{port}",
               "--no-control-socket"], web_env, ROOT)
        worker_var.parent.mkdir(parents=True)
        start([sys.executable, str(ROOT / "manage.py"), "db_worker", "--no-reload", "--interval", "0.2",
               "--no-startup-delay", "--worker-id", "W"], {**base, "WORKBENCH_VAR_DIR": str(worker_var)},
              worker_var.parent)
        url = f"http://127.0.0.1:{port}"
        _wait_for(f"{url}/accounts/login/", processes, tmp_path / "boards.log")
        browser = Browser()
        browser.post(f"{url}/accounts/login/", {"username": "boss", "password": "organizer-pass-1"})

        first = json.loads(_manage(web_env, "shell", "-c", EXPECTED))
        _leaderboard(browser, url, first)
        stored = s3.keys("track/boards/")
        assert [k for k in stored if k.endswith(".parquet") and "/extras/" not in k], stored
        built = _board_files(worker_var / "boards")
        assert len(built) == 1 and _board_files(web_var / "boards") == built  # fetched from the bucket

        _manage(web_env, "shell", "-c", JUDGE)  # the new judgments queue the board job again
        second = json.loads(_manage(web_env, "shell", "-c", EXPECTED))
        assert second != first
        _leaderboard(browser, url, second)
        served = _board_files(web_var / "boards")
        assert len(served) == 2 and built[0] in served  # the old one read before, the new one now
        _, page = browser.get(f"{url}/collections/robust/leaderboard/")
        assert 'id="board-updating"' not in page

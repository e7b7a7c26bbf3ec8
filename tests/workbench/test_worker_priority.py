"""``db_worker`` lowers its CPU priority by ``WORKER_NICE`` at start, so that its jobs (imports, boards) yield the
processor to the web server's requests: checked in a real ``manage.py db_worker`` process, whose worker loop is
replaced by a line printing the niceness it runs at."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PRINT_NICENESS = """
import os, sys
import django
django.setup()
from django.core.management import call_command
from workbench.worker.management.commands.db_worker import Command
Command.work = lambda self, **options: print("niceness", os.nice(0))
call_command("db_worker", *sys.argv[1:])
"""


def _worker_niceness(tmp_path, value: str | None, *args: str, reloaded_child: bool = False) -> int:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "workbench.settings", "WORKBENCH_VAR_DIR": str(tmp_path),
           "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env.pop("WORKER_NICE", None)
    if value is not None:
        env["WORKER_NICE"] = value
    if not (tmp_path / "db.sqlite3").exists():
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    env.pop("RUN_MAIN", None)
    if reloaded_child:
        env["RUN_MAIN"] = "true"  # what Django's autoreloader sets in the child it starts
    out = subprocess.run([sys.executable, "-c", PRINT_NICENESS, *(args or ["--no-reload"])], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split("niceness")[-1])


@pytest.mark.skipif(not hasattr(os, "nice"), reason="no process priorities on this system")
def test_worker_lowers_its_priority_by_the_setting(tmp_path):
    base = os.nice(0)
    assert _worker_niceness(tmp_path, None) == min(19, base + 10)  # the default
    assert _worker_niceness(tmp_path, "3") == min(19, base + 3)
    assert _worker_niceness(tmp_path, "0") == base  # 0: the worker keeps the web server's priority
    # --reload: the watching process keeps its priority, the child that runs the jobs lowers its own once
    assert _worker_niceness(tmp_path, None, "--reload") == base
    assert _worker_niceness(tmp_path, None, "--reload", reloaded_child=True) == min(19, base + 10)


def test_the_judging_benchmark_imitates_the_default():
    sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))
    from tests.benchmarks import judging_during_import

    # the setting's default as written (the tests themselves run with WORKER_NICE=0: conftest.py)
    default = re.search(r'WORKER_NICE = env_int\("WORKER_NICE", (\d+)\)', (ROOT / "workbench" / "settings.py").read_text())
    assert judging_during_import.WORKER_NICE == int(default.group(1)) == 10

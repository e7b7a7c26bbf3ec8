"""Judging latency while a 150-run import runs and boards are rebuilt (part of ``bench_pages.py``).

On a fresh database (SQLite file, or PostgreSQL ``h_f_bench``): the collection of ``load_import.py`` (40 topics,
a depth-100 pool) assigned to 20 assessors, gunicorn (4 sync workers) and one ``db_worker`` (the board jobs).
20 client threads judge without pause (the stress case), or each pausing ``--think-ms`` (+-50 %) on a document
before grading it, as a person reading it does; after a few seconds ``manage.py import_runs`` imports 150 generated
runs (40 topics x ``depth`` documents each, written beforehand). Printed per phase (before the import, during it,
after it while the worker rebuilds the board): judgment posts and next-document pages, p50/p95/max, failures, and
when the worker's board jobs ran. Target: p95 <= 300 ms during the import, nothing failed. The worker runs at
``WORKER_NICE`` as a deployment's does and the import, a job of the worker when the console starts it, at the same
niceness (``--worker-nice``, default the setting's 10; ``--worker-nice 0``: both at the web server's priority).

    .venv/bin/python tests/benchmarks/judging_during_import.py [--database sqlite|postgres] [--depth 500]
        [--think-ms 2000] [--worker-nice 0]
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import load_judging  # noqa: E402
from load_import import TimedAssessor, _manage, _setup  # noqa: E402

from tests.browser.stack import _free_port  # noqa: E402

POSTGRES = "postgres://postgres@127.0.0.1:5432/h_f_bench"
WORKER_NICE = 10  # workbench.settings.WORKER_NICE's default
TARGET = 0.3


class PageTimedAssessor(TimedAssessor):
    """Also records (start, latency, ok) of every next-document page (GET of a judging item), and the status
    of every post that was not accepted."""

    def __init__(self, name: str, think_ms: int = 0, seed: int = 0):
        super().__init__(name)
        self.pages: list[tuple[float, float, bool]] = []
        self.refused: list[int] = []
        self.think_ms, self.rng, self.read = think_ms, random.Random(seed), False

    def request(self, path, data=None):
        if self.think_ms and self.read and data is not None and "grade" in data:
            # reading the document shown before grading it (a double submit or a retry follows without a pause)
            self.stop.wait(self.think_ms / 1000 * self.rng.uniform(0.5, 1.5))
        start = time.monotonic()
        status, location, page = super().request(path, data)
        self.read = data is None and path.startswith("/judge/item/")
        if self.read:
            self.pages.append((start, time.monotonic() - start, status == 200))
        if data is not None and "grade" in data and status != 302:
            self.refused.append(status)
        return status, location, page


def write_runs(tmp: Path, runs: int, depth: int) -> list[Path]:
    """``runs`` run files over load_import's 40 topics and its documents P<q>-<n> (seeded)."""
    rng = random.Random(4)
    paths = []
    for r in range(runs):
        path = tmp / f"import{r:03d}.txt"
        with open(path, "w") as out:
            for q in range(1, 41):
                docs = rng.sample(range(20_000), depth)
                out.write("".join(f"{q} Q0 P{q}-{d} {k} {depth + 1 - k}.5 imp{r:03d}\n" for k, d in enumerate(docs, 1)))
        paths.append(path)
    return paths


def _stats(records, start: float, end: float) -> str:
    chosen = [(latency, ok) for t, latency, ok in records if start <= t <= end]
    latencies = sorted(latency for latency, _ in chosen)
    failed = sum(1 for _, ok in chosen if not ok)
    if not latencies:
        return "0 | – | – | – | 0"
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    return (f"{len(latencies)} | {statistics.median(latencies) * 1000:.0f} ms | **{p95 * 1000:.0f} ms** | "
            f"{latencies[-1] * 1000:.0f} ms | {failed}")


def _p95(records, start: float, end: float) -> tuple[float, int]:
    chosen = [(latency, ok) for t, latency, ok in records if start <= t <= end]
    latencies = sorted(latency for latency, _ in chosen)
    return (latencies[int(0.95 * (len(latencies) - 1))] if latencies else float("nan"),
            sum(1 for _, ok in chosen if not ok))


def _environment(database: str, tmp: Path) -> dict:
    env = {**os.environ, "WORKBENCH_VAR_DIR": str(tmp), "SECRET_KEY": "bench-" + "x" * 50, "DEBUG": "0",
           "ALLOWED_HOSTS": "127.0.0.1", "AXES_ENABLED": "0"}
    if database == "postgres":
        for sql in ("drop database if exists h_f_bench", "create database h_f_bench"):
            subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc", sql], check=True,
                           capture_output=True)
        env["DATABASE_URL"] = POSTGRES
    else:
        env["DATABASE_URL"] = f"sqlite:///{tmp / 'judging.sqlite3'}"
    return env


def _serve(env: dict, tmp: Path, worker_nice: int = 0) -> tuple[list[subprocess.Popen], int]:
    port = _free_port()
    log = open(tmp / "server.log", "w")  # noqa: SIM115 - lives as long as the servers
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "workbench.wsgi", "--workers", "4", "--bind",
                               f"127.0.0.1:{port}", "--log-level", "warning"], cwd=ROOT, env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    # the worker lowers its own priority (WORKER_NICE), as a deployment's does
    worker = subprocess.Popen([sys.executable, "manage.py", "db_worker", "--no-reload"], cwd=ROOT,
                              env={**env, "WORKER_NICE": str(worker_nice)}, stdout=log, stderr=subprocess.STDOUT)
    return [server, worker], port


def _board_jobs(env: dict, since: float) -> str:
    """When the worker's board jobs started and ended, in seconds from ``since`` (a wall-clock time)."""
    code = ("from workbench.models import Job\n"
            "for s, f in Job.objects.filter(kind='board', started_at__isnull=False).order_by('started_at')"
            ".values_list('started_at', 'finished_at'):\n"
            "    print(s.timestamp(), f.timestamp() if f else '')\n")
    out = _manage(env, "shell", "-v", "0", "-c", code, capture_output=True, text=True).stdout.split("\n")
    spans = [line.split(" ") for line in out if line.strip()]
    return ", ".join(f"{float(s) - since:.0f}..{float(f) - since:.0f} s" if f else f"{float(s) - since:.0f} s.."
                     for s, f in spans if float(s) >= since - 1)


def judging_during_import(database: str, runs: int = 150, depth: int = 500, assessors: int = 20,
                          think_ms: int = 0, worker_nice: int = WORKER_NICE) -> list[str]:
    """Print the table of one database; the targets missed, as lines."""
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        env = _environment(database, tmp)
        names = [f"loader{i:02d}" for i in range(assessors)]
        _setup(env, tmp, names)
        paths = write_runs(tmp, runs, depth)
        size = sum(p.stat().st_size for p in paths)
        processes, port = _serve(env, tmp, worker_nice)
        load_judging.BASE = f"http://127.0.0.1:{port}"
        people = [PageTimedAssessor(n, think_ms, seed=i) for i, n in enumerate(names)]
        threads: list[threading.Thread] = []
        try:
            for _ in range(150):
                if people[0].request("/accounts/login/")[0] != 599:
                    break
                time.sleep(0.2)
            for person in people:
                person.log_in()
            threads += [threading.Thread(target=p.judge, args=(random.Random(i),), daemon=True)
                        for i, p in enumerate(people)]
            for thread in threads:
                thread.start()
            time.sleep(2)
            before = time.monotonic()
            time.sleep(8)
            start, started_at = time.monotonic(), time.time()
            _manage(env, "import_runs", "load", *map(str, paths), capture_output=True,  # a worker's job, as the
                    preexec_fn=(lambda: os.nice(worker_nice)) if worker_nice else None)  # console starts it
            end, ended_at = time.monotonic(), time.time()
            time.sleep(15)  # the board job of the new runs, in the worker
            after = time.monotonic()
        finally:  # the assessors stop before the server: a request cut short by the shutdown is no failure
            for person in people:
                person.stop.set()
            for thread in threads:
                thread.join(timeout=60)
            for process in processes:
                process.terminate()
                process.wait(timeout=60)
        boards = _board_jobs(env, started_at)
    posts = [x for p in people for x in p.posts]
    pages = [x for p in people for x in p.pages]
    pace = f"each pausing {think_ms} ms (+-50 %) on a document" if think_ms else "without pause"
    print(f"\n{database}: {runs} runs ({size / 2**20:.0f} MiB) imported in {end - start:.1f} s while {assessors} "
          f"assessors judge {pace}; load average {os.getloadavg()[0]:.2f}; board jobs (s from the import's start, "
          f"which ended at {ended_at - started_at:.0f} s): {boards or 'none'}\n\n"
          "| phase | request | count | p50 | p95 | max | failed |\n|---|---|---:|---:|---:|---:|---:|")
    for phase, (a, b) in (("before the import (8 s)", (before, start)), ("during the import", (start, end)),
                          ("after it (15 s, board job)", (end, after))):
        print(f"| {phase} | judgment post | {_stats(posts, a, b)} |\n| {phase} | next document | {_stats(pages, a, b)} |")
    refused = collections.Counter(status for p in people for status in p.refused)
    if refused:
        print("\nposts not accepted, by status (599: no answer): "
              + ", ".join(f"{status}: {count}" for status, count in sorted(refused.items())))
    missed = []
    for label, records in (("judgment post", posts), ("next document", pages)):
        p95, failed = _p95(records, start, after)
        if not p95 <= TARGET or failed:
            missed.append(f"{database}: {label} during the import p95 {p95 * 1000:.0f} ms, {failed} failed")
    return missed


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--depth", type=int, default=500)
    parser.add_argument("--think-ms", type=int, default=0,
                        help="each assessor's pause on a document before grading it (default 0: no pause)")
    parser.add_argument("--worker-nice", type=int, default=WORKER_NICE,
                        help="the db_worker's WORKER_NICE and the import's niceness (a job of the worker when the "
                             f"console starts it); default {WORKER_NICE}, the setting's default")
    options = parser.parse_args()
    sys.exit("\n".join(judging_during_import(options.database, options.runs, options.depth, think_ms=options.think_ms,
                                              worker_nice=options.worker_nice)) or None)

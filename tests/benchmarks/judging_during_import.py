"""Judging latency while a 150-run import runs and boards are rebuilt (part of ``bench_pages.py``).

On a fresh database (SQLite file, or PostgreSQL ``h_f_bench``): the collection of ``load_import.py`` (40 topics,
a depth-100 pool) assigned to 20 assessors, gunicorn (4 sync workers) and one ``db_worker`` (the board jobs).
20 client threads judge without pause; after a few seconds ``manage.py import_runs`` imports 150 generated runs
(40 topics x ``depth`` documents each, written beforehand). Printed per phase (before the import, during it,
after it while the worker rebuilds the board): judgment posts and next-document pages, p50/p95/max, failures.
Target: p95 <= 300 ms during the import, nothing failed.

    .venv/bin/python tests/benchmarks/judging_during_import.py [--database sqlite|postgres] [--depth 500]
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
TARGET = 0.3


class PageTimedAssessor(TimedAssessor):
    """Also records (start, latency, ok) of every next-document page (GET of a judging item), and the status
    of every post that was not accepted."""

    def __init__(self, name: str):
        super().__init__(name)
        self.pages: list[tuple[float, float, bool]] = []
        self.refused: list[int] = []

    def request(self, path, data=None):
        start = time.monotonic()
        status, location, page = super().request(path, data)
        if data is None and path.startswith("/judge/item/"):
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


def _serve(env: dict, tmp: Path) -> tuple[list[subprocess.Popen], int]:
    port = _free_port()
    log = open(tmp / "server.log", "w")  # noqa: SIM115 - lives as long as the servers
    server = subprocess.Popen([sys.executable, "-m", "gunicorn", "workbench.wsgi", "--workers", "4", "--bind",
                               f"127.0.0.1:{port}", "--log-level", "warning"], cwd=ROOT, env=env, stdout=log,
                              stderr=subprocess.STDOUT)
    worker = subprocess.Popen([sys.executable, "manage.py", "db_worker", "--no-reload"], cwd=ROOT, env=env,
                              stdout=log, stderr=subprocess.STDOUT)
    return [server, worker], port


def judging_during_import(database: str, runs: int = 150, depth: int = 500, assessors: int = 20) -> list[str]:
    """Print the table of one database; the targets missed, as lines."""
    with tempfile.TemporaryDirectory() as scratch:
        tmp = Path(scratch)
        env = _environment(database, tmp)
        names = [f"loader{i:02d}" for i in range(assessors)]
        _setup(env, tmp, names)
        paths = write_runs(tmp, runs, depth)
        size = sum(p.stat().st_size for p in paths)
        processes, port = _serve(env, tmp)
        load_judging.BASE = f"http://127.0.0.1:{port}"
        people = [PageTimedAssessor(n) for n in names]
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
            start = time.monotonic()
            _manage(env, "import_runs", "load", *map(str, paths), capture_output=True)
            end = time.monotonic()
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
    posts = [x for p in people for x in p.posts]
    pages = [x for p in people for x in p.pages]
    print(f"\n{database}: {runs} runs ({size / 2**20:.0f} MiB) imported in {end - start:.1f} s while {assessors} "
          f"assessors judge; load average {os.getloadavg()[0]:.2f}\n\n"
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
    options = parser.parse_args()
    sys.exit("\n".join(judging_during_import(options.database, options.runs, options.depth)) or None)

"""Load test: assessors keep judging while an organizer imports a large corpus or a large run, on the
embedded default (SQLite, WAL) under gunicorn.

Builds a collection with a pool on a fresh SQLite file, assigns it to 20 assessors, serves it with
gunicorn (4 sync workers), and has 20 client threads judge continuously. After a few seconds an import
starts in another process (``import_documents`` of 400,000 generated documents, then ``import_runs`` of a
2,000,000-line run). Printed per import: its time, and the judgment posts sent while it ran: count,
p50/p95/max latency and failures. Target: p95 < 1 s and no failure.

Run: .venv/bin/python tests/benchmarks/load_import.py [--documents 400000] [--run-lines 2000000]
Traffic goes to 127.0.0.1 only; every loop is bounded in time and count.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import load_judging
from load_judging import Assessor

ROOT = Path(__file__).resolve().parents[2]
PORT = 8799
load_judging.BASE = f"http://127.0.0.1:{PORT}"


class TimedAssessor(Assessor):
    """Records (start time, latency, accepted) of every judgment post."""

    def __init__(self, name: str):
        super().__init__(name)
        self.posts: list[tuple[float, float, bool]] = []
        self.stop = threading.Event()

    def request(self, path, data=None):
        start = time.monotonic()
        try:
            status, location, page = super().request(path, data)
        except OSError:  # the connection failed (a worker restarted): a failure, and the assessor goes on
            status, location, page = 599, "/judge/next/", ""
        if data is not None and "grade" in data:
            self.posts.append((start, time.monotonic() - start, status == 302))
        return status, location, page

    def judge(self, rng: random.Random) -> None:
        while not self.stop.is_set():
            try:
                self.judge_for(2.0, rng)
            except (AttributeError, AssertionError):  # a page that was not the judging page: try again
                self.errors += 1
                time.sleep(0.1)


def _manage(env, *args, **kwargs):
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, **kwargs)


def _setup(env, tmp: Path, assessors: list[str]) -> None:
    """The collection judged under load: 40 topics, 8 runs of 200 documents, a depth-100 pool, with the pooled
    documents' texts (a grade needs a text the assessor saw), assigned to every assessor."""
    _manage(env, "migrate", "-v0")
    _manage(env, "create_collection", "load", "--grades", "0=No,1=Yes,2=Very", "--max-depth", "100000",
            capture_output=True)
    (tmp / "topics.tsv").write_text("".join(f"{q}\tquery {q}\n" for q in range(1, 41)))
    _manage(env, "import_topics", "load", str(tmp / "topics.tsv"), capture_output=True)
    rng, pooled = random.Random(1), set()
    for r in range(8):
        with open(tmp / f"run{r}.txt", "w") as out:
            for q in range(1, 41):
                docs = rng.sample(range(5000), 200)
                pooled.update(f"P{q}-{d}" for d in docs[:100])
                out.write("".join(f"{q} Q0 P{q}-{d} {k} {1000 - k} run{r}\n" for k, d in enumerate(docs, 1)))
    with open(tmp / "pooled.jsonl", "w") as out:
        out.writelines(f'{{"docno": "{d}", "title": "document {d}", "text": "a text about {d}"}}\n' for d in pooled)
    _manage(env, "import_documents", "load", str(tmp / "pooled.jsonl"), capture_output=True)
    _manage(env, "import_runs", "load", *[str(tmp / f"run{r}.txt") for r in range(8)], capture_output=True)
    _manage(env, "build_pool", "load", "--depth", "100", "--seed", "1", capture_output=True)
    code = ("from django.contrib.auth.models import User\n"
            f"for n in {assessors!r}:\n    User.objects.create_user(n, password='pw')\n")
    _manage(env, "shell", "-v", "0", "-c", code)
    _manage(env, "assign", "load", *[a for n in assessors for a in ("--assessor", n)], capture_output=True)


def _documents(path: Path, n: int) -> None:
    words = "retrieval pooling judgment assessor topic relevance corpus ranking evaluation measure".split()
    rng = random.Random(2)
    with open(path, "w") as out:
        for i in range(n):
            text = " ".join(rng.choices(words, k=40))
            out.write(f'{{"docno": "NEW{i}", "title": "document {i}", "text": "{text}"}}\n')


def _run(path: Path, lines: int) -> None:
    per_topic = lines // 40
    with open(path, "w") as out:
        for q in range(1, 41):
            out.write("".join(f"{q} Q0 R{q}-{k} {k} {per_topic - k}.25 bigrun\n" for k in range(1, per_topic + 1)))


def _window(assessors, start: float, end: float) -> list[tuple[float, bool]]:
    return [(latency, ok) for a in assessors for (t, latency, ok) in a.posts if start <= t <= end]


def _report(name: str, seconds: float, posts) -> bool:
    latencies = sorted(latency for latency, _ in posts)
    failed = sum(1 for _, ok in posts if not ok)
    if not latencies:
        print(f"| {name} | {seconds:.1f} s | 0 | – | – | – | {failed} |")
        return False
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    print(f"| {name} | {seconds:.1f} s | {len(latencies)} | {statistics.median(latencies) * 1000:.0f} ms | "
          f"**{p95 * 1000:.0f} ms** | {latencies[-1] * 1000:.0f} ms | **{failed}** |", flush=True)
    return p95 < 1.0 and failed == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=400_000)
    parser.add_argument("--run-lines", type=int, default=2_000_000)
    parser.add_argument("--assessors", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp / 'load.sqlite3'}", "WORKBENCH_VAR_DIR": str(tmp),
               "SECRET_KEY": "load-test-" + "x" * 50, "DEBUG": "0", "ALLOWED_HOSTS": "127.0.0.1",
               "AXES_ENABLED": "0"}
        names = [f"loader{i:02d}" for i in range(args.assessors)]
        _setup(env, tmp, names)
        _documents(tmp / "docs.jsonl", args.documents)
        _run(tmp / "big.run", args.run_lines)
        server = subprocess.Popen([sys.executable, "-m", "gunicorn", "workbench.wsgi", "--workers", "4", "--bind",
                                   f"127.0.0.1:{PORT}", "--log-level", "warning"], cwd=ROOT, env=env)
        assessors = [TimedAssessor(n) for n in names]
        try:
            for _ in range(150):
                if assessors[0].request("/accounts/login/")[0] != 599:
                    break
                time.sleep(0.2)
            for a in assessors:
                a.log_in()
            threads = [threading.Thread(target=a.judge, args=(random.Random(i),), daemon=True)
                       for i, a in enumerate(assessors)]
            for t in threads:
                t.start()
            time.sleep(5)
            print("| import (while 20 assessors judge) | import time | judgment posts during it | p50 | p95 | max "
                  "| failed |\n|---|---:|---:|---:|---:|---:|---:|", flush=True)
            ok = True
            for name, command in [(f"{args.documents:,} documents (`import_documents`)",
                                   ["import_documents", "load", str(tmp / "docs.jsonl")]),
                                  (f"{args.run_lines:,}-line run (`import_runs`)",
                                   ["import_runs", "load", str(tmp / "big.run"), "--no-pool"])]:
                start = time.monotonic()
                _manage(env, *command, capture_output=True)
                end = time.monotonic()
                ok = _report(name, end - start, _window(assessors, start, end)) and ok
                time.sleep(3)
        finally:
            for a in assessors:
                a.stop.set()
            server.terminate()
            server.wait(timeout=30)
        if not ok:
            sys.exit("target missed: p95 >= 1 s or a judgment post failed during an import")


if __name__ == "__main__":
    main()

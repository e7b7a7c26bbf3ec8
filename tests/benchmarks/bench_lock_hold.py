"""How long the big imports hold SQLite's write lock: the longest time an assessor's write would wait.

On a fresh SQLite file (WAL, as deployed), a probe thread tries a write every 20 ms on a connection of its
own that does not wait (``BEGIN IMMEDIATE`` with no busy timeout) and records how long the lock stayed
taken. Measured: an import of 400,000 documents, of 150 runs (50 topics x 200 documents each), of one
2,000,000-line run, and the join of a split import of 150 runs (staged by two parts, then adopted).

Run: .venv/bin/python tests/benchmarks/bench_lock_hold.py [--documents 400000] [--runs 150] [--run-lines 2000000]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class Probe:
    """The longest stretch during which a write could not start, while ``with`` runs."""

    def __init__(self, path: str) -> None:
        self.path, self.longest, self.stop = path, 0.0, threading.Event()

    def _watch(self) -> None:
        db = sqlite3.connect(self.path, isolation_level=None, timeout=0)
        since = None
        while not self.stop.is_set():
            try:
                db.execute("BEGIN IMMEDIATE")
                db.execute("ROLLBACK")
                if since is not None:
                    self.longest, since = max(self.longest, time.monotonic() - since), None
            except sqlite3.OperationalError:
                since = since or time.monotonic()
            time.sleep(0.02)
        if since is not None:
            self.longest = max(self.longest, time.monotonic() - since)
        db.close()

    def __enter__(self):
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()


def _write_run(path: Path, tag: str, topics: int, depth: int) -> None:
    with open(path, "w") as out:
        for qid in range(1, topics + 1):
            out.writelines(f"{qid} Q0 d{(qid * 7919 + rank * 104729) % 1_000_000} {rank} {1000 - rank / depth:.6f} {tag}\n"
                           for rank in range(1, depth + 1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--documents", type=int, default=400_000)
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--run-lines", type=int, default=2_000_000)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="lock-hold-"))
    database = tmp / "db.sqlite3"
    os.environ.update(DATABASE_URL=f"sqlite:///{database}", WORKBENCH_VAR_DIR=str(tmp / "var"),
                      DJANGO_SETTINGS_MODULE="workbench.settings")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.BOARD_ON_CHANGE = False
    call_command("migrate", verbosity=0)
    from workbench.collections.run_imports import (
        RunSpec,
        runs_adopt,
        runs_check,
        runs_import,
        runs_settle,
        runs_stage,
    )
    from workbench.collections.services import collection_create, documents_import
    from workbench.models import Topic

    collection = collection_create(slug="big", name="Big")
    topics = max(50, args.run_lines // 1000)  # a run holds at most 1,000 documents a topic
    Topic.objects.bulk_create(Topic(collection=collection, qid=str(q), title=f"t{q}") for q in range(1, topics + 1))
    rows = []

    docs = tmp / "docs.jsonl"
    with open(docs, "w") as out:
        out.writelines(f'{{"docno": "D{i}", "text": "words of document number {i} about nothing in particular"}}\n'
                       for i in range(args.documents))
    started = time.monotonic()
    with Probe(str(database)) as probe:
        documents_import(collection=collection, sources=[docs])
    rows.append((f"{args.documents:,} documents", time.monotonic() - started, probe.longest))
    print(*rows[-1], flush=True)

    folder = tmp / "runs"
    folder.mkdir()
    for i in range(args.runs):
        _write_run(folder / f"r{i}.run", f"r{i}", 50, 200)
    specs = [RunSpec(source=p) for p in sorted(folder.glob("*.run"))]
    started = time.monotonic()
    with Probe(str(database)) as probe:
        runs_import(collection=collection, specs=specs)
    rows.append((f"{args.runs} runs of 10,000 lines", time.monotonic() - started, probe.longest))
    print(*rows[-1], flush=True)

    big = tmp / "big.run"
    _write_run(big, "big", topics, args.run_lines // topics)
    started = time.monotonic()
    with Probe(str(database)) as probe:
        runs_import(collection=collection, specs=[RunSpec(source=big)])
    rows.append((f"one run of {args.run_lines:,} lines", time.monotonic() - started, probe.longest))
    print(*rows[-1], flush=True)

    other = collection_create(slug="split", name="Split")
    Topic.objects.bulk_create(Topic(collection=other, qid=str(q), title=f"t{q}") for q in range(1, 51))
    checked, problems = runs_check(other, specs)
    assert not problems, problems
    half = len(checked) // 2
    started = time.monotonic()
    with Probe(str(database)) as probe:
        runs_stage("part-1", checked[:half])
        runs_stage("part-2", checked[half:])
        runs_adopt(other, ["part-1", "part-2"], runs_settle(checked))
    rows.append((f"split import of {args.runs} runs (2 stages + join)", time.monotonic() - started, probe.longest))

    print(f"{'import':48} {'time':>8} {'longest lock':>13}")
    for what, took, longest in rows:
        print(f"{what:48} {took:7.1f}s {longest:12.2f}s")


if __name__ == "__main__":
    main()

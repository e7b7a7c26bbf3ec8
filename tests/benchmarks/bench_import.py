"""Benchmark: importing a 1,000,000-line run with `manage.py import_runs`, and why runs are stored
as one columnar (Arrow IPC) blob each rather than one table row per entry.

Run: .venv/bin/python tests/benchmarks/bench_import.py [--lines 1000000] [--postgres]
Prints markdown tables. Each import is a fresh `manage.py` process on a fresh database.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def write_run(path: Path, topics: int, depth: int, seed: int = 1) -> int:
    rng = np.random.default_rng(seed)
    qids = np.repeat(np.arange(1, topics + 1), depth)
    ranks = np.tile(np.arange(1, depth + 1), topics)
    docs = rng.integers(0, 5_000_000, size=topics * depth)
    # make docnos unique within a topic
    docs = docs + np.tile(np.arange(depth) * 5_000_000, topics)
    scores = np.round(100.0 - ranks * 0.05 + rng.random(topics * depth) * 0.01, 6)
    frame = pd.DataFrame({"qid": qids, "q0": "Q0", "docno": [f"DOC-{d}" for d in docs], "rank": ranks,
                          "score": scores, "tag": "bench"})
    frame.to_csv(path, sep=" ", header=False, index=False)
    return len(frame)


def timed(cmd: list[str], env: dict) -> tuple[float, str]:
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{result.stderr}")
    return elapsed, result.stdout


def peak_rss_mb_of(cmd: list[str], env: dict) -> tuple[float, float]:
    code = ("import resource, subprocess, sys, time; t=time.perf_counter();"
            f"r=subprocess.run({cmd!r}, env={env!r}, cwd={str(ROOT)!r}, capture_output=True);"
            "e=time.perf_counter()-t; assert r.returncode==0, r.stderr.decode();"
            "print(e, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), float(out[1])


def bench_cli(lines: int, database_url: str | None) -> list[tuple[str, float, float]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        topics = max(1, lines // 1000)
        run_path = tmp / "bench.run"
        n = write_run(run_path, topics, 1000)
        topics_path = tmp / "topics.tsv"
        topics_path.write_text("".join(f"{q}\ttopic {q}\n" for q in range(1, topics + 1)))
        env = {"PATH": os.environ["PATH"], "DEBUG": "1", "WORKBENCH_VAR_DIR": str(tmp / "var")}
        label = "SQLite"
        if database_url:
            env["DATABASE_URL"] = database_url
            label = "PostgreSQL"
        py = sys.executable
        timed([py, "manage.py", "migrate", "-v0"], env)
        subprocess.run([py, "manage.py", "flush", "--noinput"], cwd=ROOT, env=env, check=True)
        timed([py, "manage.py", "create_collection", "bench"], env)
        timed([py, "manage.py", "import_topics", "bench", str(topics_path)], env)
        elapsed, peak = peak_rss_mb_of([py, "manage.py", "import_runs", "bench", str(run_path)], env)
        rows.append((f"`import_runs` {n:,} lines ({label}, whole process)", elapsed, peak))
        if database_url:
            subprocess.run([py, "manage.py", "flush", "--noinput"], cwd=ROOT, env=env, check=True)
    return rows


def bench_storage(lines: int) -> list[tuple[str, float]]:
    """One Arrow IPC blob per run versus one SQLite row per entry: write and read back 1M entries."""
    from workbench.collections import runstore

    rng = np.random.default_rng(2)
    topics = max(1, lines // 1000)
    frame = pd.DataFrame({
        "qid": pd.Categorical(np.repeat(np.arange(1, topics + 1), 1000).astype(str)),
        "docno": [f"DOC-{i}" for i in rng.integers(0, 10**9, size=topics * 1000)],
        "rank": np.tile(np.arange(1, 1001), topics).astype("int64"),
        "score": rng.random(topics * 1000),
    })
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = sqlite3.connect(Path(tmp) / "s.sqlite3")
        db.execute("create table blob (run_id integer primary key, data blob)")
        db.execute("create table entry (run_id integer, qid text, docno text, rank integer, score real)")
        db.execute("create index entry_run on entry(run_id)")
        start = time.perf_counter()
        db.execute("insert into blob values (1, ?)", (runstore.encode(frame),))
        db.commit()
        rows.append(("write: one Arrow IPC (LZ4) blob per run", time.perf_counter() - start))
        start = time.perf_counter()
        db.executemany("insert into entry values (1, ?, ?, ?, ?)",
                       zip(frame["qid"].astype(str), frame["docno"], frame["rank"].tolist(),
                           frame["score"].tolist(), strict=True))
        db.commit()
        rows.append(("write: one table row per entry", time.perf_counter() - start))
        start = time.perf_counter()
        blob = db.execute("select data from blob where run_id = 1").fetchone()[0]
        back = runstore.decode(blob)
        rows.append(("read: one Arrow IPC (LZ4) blob per run", time.perf_counter() - start))
        assert len(back) == len(frame)
        start = time.perf_counter()
        back = pd.read_sql_query("select qid, docno, rank, score from entry where run_id = 1", db)
        rows.append(("read: one table row per entry", time.perf_counter() - start))
        assert len(back) == len(frame)
        sizes = (len(runstore.encode(frame)), os.path.getsize(Path(tmp) / "s.sqlite3"))
    rows.append((f"size: blob {sizes[0] / 1e6:.1f} MB vs database with both {sizes[1] / 1e6:.1f} MB", float("nan")))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--postgres", default=None, nargs="?", const="postgres://postgres@127.0.0.1:5432/bench_import",
                        help="also import into this PostgreSQL database")
    args = parser.parse_args()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
    print("| run import | time (s) | peak RSS (MB) |\n|---|---:|---:|")
    for label, elapsed, peak in bench_cli(args.lines, None):
        print(f"| {label} | {elapsed:.2f} | {peak:.0f} |")
    if args.postgres:
        subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-qc",
                        "create database bench_import"], capture_output=True)
        for label, elapsed, peak in bench_cli(args.lines, args.postgres):
            print(f"| {label} | {elapsed:.2f} | {peak:.0f} |")
    print("\n| run storage, 1,000,000 entries (SQLite) | time (s) |\n|---|---:|")
    for label, elapsed in bench_storage(args.lines):
        print(f"| {label} | {'' if elapsed != elapsed else f'{elapsed:.2f}'} |")


if __name__ == "__main__":
    main()

"""Benchmark: `pool_build` from runs stored in the database, for 150 runs x 30 topics x 1,000 documents,
with the time of each stage: read runs (fetch and decode the stored runs; nothing when warm), pool (rank,
union, provenance), write (judging order, the entries, the columnar provenance), rest (commit and
bookkeeping).

Run: .venv/bin/python tests/benchmarks/bench_pool_build.py [--runs 150] [--topics 30] [--repeat 3] [--postgres]
With --repeat N every build is timed N times and the median is shown (the stages: their own medians).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=150)
    parser.add_argument("--topics", type=int, default=30)
    parser.add_argument("--depth", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--docs", choices=["zipf", "uniform"], default="zipf",
                        help="zipf: runs overlap as real runs do (documents drawn by popularity from 5,000 per "
                             "topic); uniform: 1,000 of 20,000 at random, almost no overlap (worst case)")
    parser.add_argument("--repeat", type=int, default=1, help="time every build this many times, show the median")
    parser.add_argument("--postgres", nargs="?", const="postgres://postgres@127.0.0.1:5432/bench_pool", default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.update({"DEBUG": "1", "WORKBENCH_VAR_DIR": tmp, "DJANGO_SETTINGS_MODULE": "workbench.settings"})
        if args.postgres:
            subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-qc",
                            "create database bench_pool"], capture_output=True)
            os.environ["DATABASE_URL"] = args.postgres
        import django

        django.setup()
        from django.core.management import call_command
        from django.db import connection

        call_command("migrate", verbosity=0)
        call_command("flush", interactive=False, verbosity=0)
        from pooling.models import Pool
        from pooling.services import pool_build
        from workbench.collections import runstore
        from workbench.collections.services import RunSpec, collection_create, runs_import
        from workbench.models import Topic

        collection = collection_create(slug="bench")
        Topic.objects.bulk_create(Topic(collection=collection, qid=str(q), title=f"t{q}")
                                  for q in range(1, args.topics + 1))
        rng = np.random.default_rng(0)
        popularity = 1.0 / np.arange(1, 5001) ** 0.8
        popularity /= popularity.sum()
        specs = []
        for r in range(args.runs):
            if args.docs == "zipf":
                docs = np.concatenate([rng.choice(5000, size=1000, replace=False, p=popularity)
                                       for _ in range(args.topics)])
            else:
                docs = np.concatenate([rng.choice(20_000, size=1000, replace=False) for _ in range(args.topics)])
            qids = np.repeat(np.arange(1, args.topics + 1), 1000)
            # scores fall with the order drawn, so popular documents tend to rank high, as in real runs
            scores = np.tile(np.linspace(100, 1, 1000), args.topics) + rng.random(len(docs)) * 0.01
            frame = pd.DataFrame({"qid": qids, "q0": "Q0", "docno": [f"D{d}" for d in docs],
                                  "rank": np.tile(np.arange(1, 1001), args.topics),
                                  "score": np.round(scores, 4), "tag": f"run{r}"})
            path = Path(tmp) / f"run{r}.txt"
            frame.sample(frac=1, random_state=r).to_csv(path, sep=" ", header=False, index=False)
            specs.append(RunSpec(source=path))
        start = time.perf_counter()
        runs_import(collection=collection, specs=specs)
        imported = time.perf_counter() - start
        print(f"{connection.vendor}: imported {args.runs} runs x {args.topics} topics x 1,000 documents "
              f"({args.docs} documents, shuffled files) in {imported:.1f} s\n")

        def timed(depth: int, *, cold: bool) -> tuple[int, str]:
            times, stages = [], []
            for _ in range(args.repeat):
                Pool.objects.all().delete()
                if cold:
                    runstore.frame_cache.clear()
                start = time.perf_counter()
                summary = pool_build(collection=collection, depth=depth, seed=1)
                times.append(time.perf_counter() - start)
                stages.append(summary.timings)
            total = float(np.median(times))
            parts = [float(np.median([s.get(k, 0.0) for s in stages])) for k in ("read runs", "pool", "write")]
            rest = float(np.median([t - sum(s.values()) for t, s in zip(times, stages, strict=True)]))
            cells = " | ".join(f"{v:.2f}" for v in [total, *parts, rest])
            return summary.total, cells

        print(f"| pool_build ({connection.vendor}{f', median of {args.repeat}' if args.repeat > 1 else ''}) "
              "| pooled documents | total (s) | read runs | pool | write | rest |\n|---|---:|---:|---:|---:|---:|---:|")
        for depth in args.depth:
            pooled, cells = timed(depth, cold=True)
            print(f"| depth {depth}, {args.runs} runs x {args.topics} topics, cold (decode from the database) "
                  f"| {pooled:,} | {cells} |")
            pooled, cells = timed(depth, cold=False)
            print(f"| depth {depth}, warm (runs decoded in memory) | {pooled:,} | {cells} |")


if __name__ == "__main__":
    main()

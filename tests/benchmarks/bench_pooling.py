"""Pooling benchmark on generated runs: ranking + union + provenance, time and peak memory, and the time to
encode the provenance as the columnar table a pool stores (pooling.provenance).

Usage: python tests/benchmarks/bench_pooling.py [--quick]

Scenarios (targets from issue 4):
  - 150 runs x 30 topics x 1,000 documents, depth-k pool: under 2 s;
  - 100 runs x 250 topics x 1,000 documents (25 M entries), depth-k pool: under 30 s, peak memory < 4 GB.
"shuffled" rows shuffle every run file (topics interleaved, no score order): the slow path of the ranking,
one stable sort of all entries. Each scenario runs in its own process so that its peak resident memory (VmHWM) is its own; the table also
gives the resident memory of the generated runs alone, before pooling. Generated runs look like real ones:
qid and docno strings (pyarrow-backed), scores with ties, a rank column that is deliberately wrong, every
run drawing its 1,000 documents per topic from a shared set of 5,000 so that runs overlap.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from pooling import provenance as provenance_store  # noqa: E402
from pooling.strategies import depth_pool  # noqa: E402

UNIVERSE = 5000
STR = pd.StringDtype("pyarrow", na_value=np.nan)


def generate(n_runs: int, n_topics: int, n_docs: int, seed: int = 0, shuffled: bool = False) -> dict[str, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    topics = np.arange(401, 401 + n_topics)
    qid_strings = pa.array(np.repeat(topics, n_docs)).cast(pa.string())
    runs = {}
    for r in range(n_runs):
        start = rng.integers(0, UNIVERSE, n_topics)
        stride = rng.choice(np.array([1, 3, 7, 9, 11, 13, 17, 19, 21, 23]), n_topics)
        local = (start[:, None] + np.arange(n_docs)[None, :] * stride[:, None]) % UNIVERSE
        doc_ids = (topics[:, None] * UNIVERSE + local).ravel()
        scores = np.round(np.sort(rng.random((n_topics, n_docs)), axis=1)[:, ::-1] * 100, 2).ravel()
        runs[f"run{r:03d}"] = pd.DataFrame({
            "qid": pd.Series(qid_strings, dtype=STR),
            "docno": pd.Series(pa.array(doc_ids).cast(pa.string()), dtype=STR),
            "rank": rng.permutation(n_topics * n_docs) + 1,
            "score": scores,
        })
        if shuffled:  # worst case: topics interleaved, nothing in score order
            runs[f"run{r:03d}"] = runs[f"run{r:03d}"].sample(frac=1.0, random_state=r).reset_index(drop=True)
    return runs


def _rss(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def scenario(n_runs: int, n_topics: int, n_docs: int, depth: int, shuffled: int = 0) -> dict:
    runs = generate(n_runs, n_topics, n_docs, shuffled=bool(shuffled))
    data_rss = _rss("VmRSS")
    started = time.perf_counter()
    result = depth_pool(runs, depth)
    pooled = time.perf_counter() - started
    blob = provenance_store.encode(result.provenance)
    with_table = time.perf_counter() - started
    return {"runs": n_runs, "topics": n_topics, "docs": n_docs, "depth": depth,
            "entries": n_runs * n_topics * n_docs, "pool": len(result), "provenance_rows": len(result.provenance),
            "seconds": pooled, "seconds_with_table": with_table, "table_bytes": len(blob),
            "data_rss": data_rss, "peak_rss": _rss("VmHWM")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the 150 x 30 scenarios")
    parser.add_argument("--scenario", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.scenario:
        print(json.dumps(scenario(*map(int, args.scenario.split(",")))))
        return 0
    plans = [(150, 30, 1000, 10, 0, 2.0), (150, 30, 1000, 100, 0, 2.0), (150, 30, 1000, 100, 1, 2.0)]
    if not args.quick:
        plans += [(100, 250, 1000, 10, 0, 30.0), (100, 250, 1000, 100, 0, 30.0), (100, 250, 1000, 100, 1, 30.0)]
    rows, failed = [], False
    for n_runs, n_topics, n_docs, depth, shuffled, target in plans:
        out = subprocess.run([sys.executable, __file__, "--scenario",
                              f"{n_runs},{n_topics},{n_docs},{depth},{shuffled}"],
                             capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        ok = r["seconds"] < target and (r["entries"] < 10_000_000 or r["peak_rss"] < 4 * 2**30)
        failed |= not ok
        rows.append(f"| {n_runs} x {n_topics} x {n_docs:,} ({r['entries'] / 1e6:.1f} M) | "
                    f"{'shuffled' if shuffled else 'score order'} | {depth} | "
                    f"{r['pool']:,} | {r['provenance_rows']:,} | {r['seconds']:.2f} s | "
                    f"{r['seconds_with_table']:.2f} s ({r['table_bytes'] / 2**20:.1f} MB) | {r['data_rss'] / 2**30:.2f} GB | "
                    f"{r['peak_rss'] / 2**30:.2f} GB | < {target:g} s | {'ok' if ok else 'MISSED'} |")
    print("| runs x topics x docs | file order | depth | pool pairs | provenance rows | depth_pool | + provenance table "
          "| RSS of the runs | peak RSS | target | |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|---|")
    print("\n".join(rows))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

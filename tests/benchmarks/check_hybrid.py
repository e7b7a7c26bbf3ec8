"""Hybrid judging on real public data: TREC-COVID round 2, with a real retrieval signal as the "machine".

    .venv/bin/python tests/benchmarks/check_hybrid.py [--data DIR] [--budget 0.2] [--runs 10] [--seeds 5]

No real LLM labels are available here, so the machine judge is a fusion of the best submitted runs: for each
pair of the official round-2 qrels (12,037 pairs, 35 topics, grades 0/1/2, relevant from 1), its margin is the
reciprocal-rank fusion (k=60) of the ``--runs`` best runs by the leaderboard's NDCG@10, standardized over the
pairs, and its grade 2 in the top 15% of that margin, 1 in the next 20%, else 0 (a rule that reads no human
grade). The human qrels are NIST's. ``judging.machine.hybrid_simulation.simulate`` then replays the router at
``--budget``: the hybrid labels (the human grade where asked, else the calibrated machine label), random
routing with the same budget and the raw machine labels are each compared with the full human qrels (Cohen's
kappa, binary at grade >= 1 and linearly weighted). Figures are the mean over ``--seeds`` seeds; exit 1 if the
routed hybrid is not above random routing.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
DATA = ROOT.parent / "shared" / "peer-tests" / "trec_covid_round2"

from judging.machine.hybrid_simulation import simulate  # noqa: E402


def machine_signal(data: Path, runs: int) -> pd.DataFrame:
    qrels = pd.read_csv(data / "qrels.covid-round2.txt", sep=r"\s+", header=None, names=["qid", "it", "docno", "rel"],
                        dtype={"qid": str, "docno": str})
    board = pd.read_csv(data / "leaderboard.csv").sort_values("NDCG@10", ascending=False)
    fused = pd.Series(0.0, index=pd.MultiIndex.from_frame(qrels[["qid", "docno"]]))
    for tag in board["tag"].head(runs):
        run = pd.read_csv(data / "runs" / f"{tag}.gz", sep=r"\s+", header=None,
                          names=["qid", "q0", "docno", "rank", "score", "tag"], dtype={"qid": str, "docno": str})
        run["rank"] = run.groupby("qid")["score"].rank(ascending=False, method="first")
        rr = pd.Series(1.0 / (60 + run["rank"].to_numpy()), index=pd.MultiIndex.from_frame(run[["qid", "docno"]]))
        fused = fused.add(rr[~rr.index.duplicated()].reindex(fused.index).fillna(0.0))
    qrels["margin"] = ((fused - fused.mean()) / fused.std()).to_numpy()
    cut = qrels["margin"].rank(pct=True)
    qrels["machine"] = np.where(cut > 0.85, 2, np.where(cut > 0.65, 1, 0))
    return qrels


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--budget", type=float, default=0.2)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    pairs = machine_signal(args.data, args.runs)
    start = time.perf_counter()
    results = [simulate(pairs["qid"], pairs["margin"], pairs["machine"], pairs["rel"], budget=args.budget,
                        grades=[0, 1, 2], relevant_from=1, seed=seed) for seed in range(args.seeds)]
    elapsed = (time.perf_counter() - start) / args.seeds
    print(f"TREC-COVID round 2: {len(pairs)} pairs, {pairs['qid'].nunique()} topics, machine = RRF of the "
          f"{args.runs} best runs; budget {args.budget:.0%} ({results[0]['asked']} human grades read), "
          f"{args.seeds} seeds, {elapsed:.1f} s per simulation")
    for side in ("hybrid", "random", "machine"):
        binary = [r[side]["kappa_binary"] for r in results]
        graded = [r[side]["kappa_graded"] for r in results]
        print(f"  {side:8s} kappa binary {np.mean(binary):.3f} (min {min(binary):.3f})  "
              f"graded {np.mean(graded):.3f}  relevant share {np.mean([r[side]['relevant_share'] for r in results]):.3f}")
    better = np.mean([r["hybrid"]["kappa_binary"] for r in results]) > np.mean(
        [r["random"]["kappa_binary"] for r in results])
    print("hybrid above random routing" if better else "FAIL: hybrid not above random routing")
    return 0 if better else 1


if __name__ == "__main__":
    sys.exit(main())

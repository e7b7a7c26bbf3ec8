"""Benchmark: the budget planner on TREC-COVID round 2 (136 runs, 35 topics, 12,037 judgments).

The judgments are ordered by pool depth (the best rank any of the 52 contributing runs gave the document;
judged documents no contributing run retrieved come last). With ALL of them, the depth-subsampling curve shows
how many judgments the runs' MAP ranking needs to reach Kendall's τ ≥ 0.9 with the final ranking (interpolated
between depths). The planner is then given only the shallower HALF of the judgments (what an organizer has
half-way through judging in pool order) and the planned budget (12,037), and predicts the same number.
Both are printed, with the prediction's interval and the relative error (the target: within ±15%).

Run: .venv/bin/python tests/benchmarks/bench_budget_planner.py [--data ../shared/peer-tests/trec_covid_round2]
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from evaluation.engine.budget import plan_budget  # noqa: E402
from workbench.formats import read_qrels, read_run  # noqa: E402

DEFAULT_DATA = ROOT.parent.parent / "shared" / "peer-tests" / "trec_covid_round2"


def ranked_runs(folder: Path) -> pd.DataFrame:
    """tag, qid, docno, rank of every run: score descending, ties by docno descending (trec_eval's order)."""
    frames = []
    for path in sorted((folder / "runs").glob("*.gz")):
        run = read_run(path).frame
        run = run.assign(tag=path.name[:-3]).sort_values(["qid", "score", "docno"], ascending=[True, False, False])
        run["rank"] = run.groupby("qid").cumcount() + 1
        frames.append(run[["tag", "qid", "docno", "rank"]])
    return pd.concat(frames, ignore_index=True).astype({"qid": str, "docno": str})


def observed_crossing(curve: pd.DataFrame, target: float = 0.9) -> float:
    """Judgments where τ first reaches ``target`` on the curve, linearly interpolated between depths."""
    n, tau = curve["judgments"].to_numpy(float), curve["tau"].to_numpy(float)
    above = np.flatnonzero(tau >= target)
    i = above[0]
    if i == 0:
        return n[0]
    return n[i - 1] + (target - tau[i - 1]) * (n[i] - n[i - 1]) / (tau[i] - tau[i - 1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    start = time.perf_counter()
    ranked = ranked_runs(args.data)
    with open(args.data / "leaderboard.csv", newline="") as f:
        contributing = {row["tag"] for row in csv.DictReader(f) if row["contributed judgments"] == "yes"}
    qrels = read_qrels(args.data / "qrels.covid-round2.txt").astype({"qid": str, "docno": str})
    best = ranked[ranked["tag"].isin(contributing)].groupby(["qid", "docno"])["rank"].min()
    keys = pd.MultiIndex.from_frame(qrels[["qid", "docno"]])
    qrels["depth"] = best.reindex(keys).to_numpy()
    print(f"read {ranked['tag'].nunique()} runs, {len(qrels):,} judgments in {time.perf_counter() - start:.0f} s",
          flush=True)
    start = time.perf_counter()
    full = plan_budget(ranked, qrels)
    observed = observed_crossing(full.curve)
    order = qrels["depth"].fillna(np.inf).sort_values(kind="stable")
    cut = order.iloc[len(qrels) // 2 - 1]
    half_qrels = qrels[qrels["depth"].fillna(np.inf) <= cut]
    half = plan_budget(ranked, half_qrels, planned=len(qrels))
    elapsed = time.perf_counter() - start
    error = (half.judgments_to_tau - observed) / observed
    print("| judgments given | planned | τ now vs final (model) | judgments to τ ≥ 0.9 | interval (5-95%) |")
    print("|---:|---:|---:|---:|---|")
    print(f"| all {full.judgments:,} (observed on the curve) | {full.planned:,} | {full.tau_now:.3f} | {observed:,.0f} | — |")
    print(f"| half: {half.judgments:,} (depth ≤ {cut:.0f}) | {half.planned:,} | {half.tau_now:.3f} | "
          f"{half.judgments_to_tau:,} | {half.interval[0]:,}–{half.interval[1]:,} |")
    depths, taus = full.curve["judgments"].to_numpy(float), full.curve["tau"].to_numpy(float)
    print(f"\nprediction from half vs full: {error:+.1%} (target within ±15%); both plans in {elapsed:.0f} s")
    print(f"τ of the ranking at {half.judgments:,} judgments with the final one: predicted from half "
          f"{half.tau_now:.3f}, observed {np.interp(half.judgments, depths, taus):.3f}")
    print("\nthe full curve (depth, judgments, τ, τ top 10, top run stays top):")
    for row in full.curve.itertuples():
        print(f"  {row.depth:>4} {row.judgments:>6,} {row.tau:.3f} {row.tau_top10:.3f} {row.top_same}")
    print(f"topics to judge next (from half): {', '.join(half.next_topics)}")


if __name__ == "__main__":
    main()

"""Replay a collection with complete qrels: relevant documents found versus judgments spent, per strategy.

Usage (``make simulate-pooling`` runs it with the defaults):

    python tests/benchmarks/simulate_pooling.py                       # TREC-COVID round 2 from ../shared
    python tests/benchmarks/simulate_pooling.py --runs DIR --qrels FILE [--leaderboard CSV] [--condensed]

Every strategy draws from the same candidates: the documents the contributing runs rank within
``--depth`` (100). A simulated assessor answers from the qrels; a document the qrels do not contain counts
as non-relevant (``--condensed`` instead removes unjudged documents from the runs first, Sakai's condensed
lists, so that every candidate has a real judgment). Strategies:

- depth: judge the depth-100 pool in pool_rank order (min_depth, then RRF), i.e. depth-1 first, then
  depth-2...; cut at budget b it is the depth-k pool plus part of depth k+1.
- rrf / borda: judge in fused order. mtf / maxmean / bandit: adaptive (pooling.strategies.adaptive),
  averaged over ``--seeds`` seeds (ties and Thompson draws are random).
- sampled: all of depth 10 plus a uniform sample of the rest (several rates) and the Horvitz-Thompson
  estimate of the number of relevant documents among the candidates.

With ``--leaderboard`` (a CSV with ``tag`` and ``contributed judgments`` columns, as TREC-COVID's), only runs
marked ``yes`` contribute, and ``--check-nist`` verifies that the depth-7 pool of those runs has exactly
``--nist-pool-size`` pairs (5,961 for TREC-COVID round 2), all judged. Exit status 1 if the check fails.
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

from pooling.strategies import (  # noqa: E402
    Stratum,
    adaptive_pool,
    depth_pool,
    estimate_relevant,
    fusion_pool,
    replay,
    stratified_pool,
)

COVID = ROOT.parent / "shared" / "peer-tests" / "trec_covid_round2"
RUN_COLUMNS = ["qid", "q0", "docno", "rank", "score", "tag"]


def file_tag(path: Path) -> str:
    return path.name.removesuffix(".gz")


def read_run(path: Path) -> tuple[str, pd.DataFrame]:
    """(tag, frame) of a TREC run file, through workbench.formats when it exists."""
    try:
        from workbench.formats import read_run as formats_read_run  # type: ignore[attr-defined]
    except ImportError:
        formats_read_run = None
    if formats_read_run is not None:
        frame = formats_read_run(path).frame
    else:
        frame = pd.read_csv(path, sep=r"\s+", header=None, names=RUN_COLUMNS, dtype=str)
        frame["score"] = frame["score"].astype(np.float64)
    tag = str(frame["tag"].iloc[0]) if "tag" in frame.columns and len(frame) else file_tag(path)
    return tag, frame


def read_qrels(path: Path) -> pd.DataFrame:
    qrels = pd.read_csv(path, sep=r"\s+", header=None, names=["qid", "iter", "docno", "relevance"],
                        dtype={"qid": str, "iter": str, "docno": str, "relevance": np.int64})
    return qrels.drop_duplicates(["qid", "docno"], keep="last")


def load_runs(directory: Path, only: list[str] | None) -> dict[str, pd.DataFrame]:
    runs = {}
    for path in sorted(p for p in directory.iterdir() if p.is_file()):
        if only is not None and file_tag(path) not in only:
            continue
        tag, frame = read_run(path)
        runs[tag] = frame
    if only is not None:
        missing = sorted(set(only) - set(runs))
        if missing:
            raise SystemExit(f"{directory}: no run file for {', '.join(missing)}")
    return runs


def condense(runs: dict[str, pd.DataFrame], qrels: pd.DataFrame) -> dict[str, pd.DataFrame]:
    judged = pd.MultiIndex.from_arrays([qrels["qid"], qrels["docno"]])
    return {t: f[pd.MultiIndex.from_arrays([f["qid"].astype(str), f["docno"].astype(str)]).isin(judged)]
            for t, f in runs.items()}


def sequences(order: pd.DataFrame, grades: dict, relevant_from: int) -> dict[str, np.ndarray]:
    """qid -> cumulative relevant count along the judging order (order has qid, docno in order)."""
    rel = np.array([grades.get((q, d), 0) >= relevant_from
                    for q, d in zip(order["qid"].astype(str), order["docno"].astype(str), strict=True)])
    out = {}
    qids = order["qid"].astype(str).to_numpy()
    for qid in pd.unique(qids):
        out[qid] = np.cumsum(rel[qids == qid])
    return out


def found_at(curves: dict[str, np.ndarray], budget: dict[str, int]) -> int:
    return int(sum(c[min(budget.get(q, 0), len(c)) - 1] for q, c in curves.items() if min(budget.get(q, 0), len(c)) > 0))


def simulate(runs, qrels, *, depth, budgets, seeds, relevant_from, label) -> str:
    grades = {(q, d): g for q, d, g in zip(qrels["qid"], qrels["docno"], qrels["relevance"], strict=True)}
    lines = []
    started = time.perf_counter()
    pool = depth_pool(runs, depth)
    candidates = pool.entries
    sizes = candidates.groupby("qid").size().to_dict()
    total_rel = int(sum(grades.get((q, d), 0) >= relevant_from
                        for q, d in zip(candidates["qid"], candidates["docno"], strict=True)))
    all_rel = int((qrels["relevance"] >= relevant_from).sum())
    curves: dict[str, list[dict[str, np.ndarray]]] = {"depth": [sequences(candidates, grades, relevant_from)]}
    for method in ("rrf", "borda"):
        curves[method] = [sequences(fusion_pool(runs, None, method=method, depth=depth).entries, grades,
                                    relevant_from)]
    judge = lambda q, d: grades.get((q, d), 0) >= relevant_from  # noqa: E731
    variants = [("mtf", {}), ("maxmean", {}), ("bandit", {}), ("maxmean", {"shared": True})]
    for name, extra in variants:
        column = name + ("-shared" if extra else "")
        curves[column] = []
        for seed in range(seeds):
            strategy = adaptive_pool(name, runs, None, depth=depth, seed=seed, **extra)
            curves[column].append(sequences(replay(strategy, judge), grades, relevant_from))
    columns = list(curves)
    lines.append(f"### {label}\n")
    lines.append(f"{len(runs)} runs, {len(sizes)} topics, candidates = depth-{depth} pool: {len(candidates):,} "
                 f"documents, {total_rel:,} of them relevant ({all_rel:,} relevant in the qrels). "
                 f"Adaptive strategies: mean of {seeds} seed(s).\n")
    lines.append("Relevant documents found (sum over topics) with the same budget of judgments per topic:\n")
    lines.append("| judgments per topic | total judgments | " + " | ".join(columns) + " |")
    lines.append("|---:|---:|" + "---:|" * len(columns))
    for b in budgets:
        per_topic = {q: min(b, n) for q, n in sizes.items()}
        cells = [np.mean([found_at(c, per_topic) for c in curves[col]]) for col in columns]
        lines.append(f"| {b} | {sum(per_topic.values()):,} | " + " | ".join(f"{x:,.0f}" for x in cells) + " |")
    lines.append("\nAt the size of each depth-k pool (every topic gets as many judgments as its depth-k pool):\n")
    lines.append("| k | total judgments | " + " | ".join(columns) + " |")
    lines.append("|---:|---:|" + "---:|" * len(columns))
    for k in (1, 2, 3, 5, 7, 10, 20, 30, 50):
        if k > depth:
            continue
        per_topic = candidates[candidates["min_depth"] <= k].groupby("qid").size().to_dict()
        cells = [np.mean([found_at(c, per_topic) for c in curves[col]]) for col in columns]
        lines.append(f"| {k} | {sum(per_topic.values()):,} | " + " | ".join(f"{x:,.0f}" for x in cells) + " |")
    lines.append("")
    lines.append(sampling_table(runs, grades, depth=depth, total_rel=total_rel, relevant_from=relevant_from))
    lines.append(f"\n({time.perf_counter() - started:.1f} s)\n")
    return "\n".join(lines)


def sampling_table(runs, grades, *, depth, total_rel, relevant_from, repeats=10) -> str:
    if depth <= 10:
        return f"(No sampling table: the candidates stop at depth {depth}, inside the fully judged top 10.)\n"
    lines = [f"Stratified sampling: all of depth 10 plus a uniform sample of depths 11-{depth}; "
             f"Horvitz-Thompson estimate of R = {total_rel:,} (relevant among the candidates); "
             f"mean over {repeats} seeds, the interval is seed 0's 95% CI.\n",
             f"| rate 11-{depth} | judgments | relevant found | estimate R (seed 0) | 95% CI | mean estimate |",
             "|---:|---:|---:|---:|---|---:|"]
    for rate in (0.05, 0.1, 0.2, 0.5):
        strata = [Stratum(1, 10, 1.0), Stratum(11, depth, rate)]
        estimates, judged, found, first = [], [], [], None
        for seed in range(repeats):
            entries = stratified_pool(runs, strata, seed=seed).entries
            relevant = [grades.get((q, d), 0) >= relevant_from
                        for q, d in zip(entries["qid"], entries["docno"], strict=True)]
            est = estimate_relevant(entries.assign(relevant=relevant))
            estimates.append(est.total)
            judged.append(len(entries))
            found.append(sum(relevant))
            first = first or est
        lines.append(f"| {rate:g} | {np.mean(judged):,.0f} | {np.mean(found):,.0f} | {first.total:,.0f} | "
                     f"{first.ci_low:,.0f}-{first.ci_high:,.0f} | {np.mean(estimates):,.0f} |")
    return "\n".join(lines)


def check_nist(runs, qrels, *, depth, expected) -> tuple[bool, str]:
    pool = depth_pool(runs, depth)
    pairs = pool.pairs()
    judged = pd.MultiIndex.from_arrays([pairs["qid"], pairs["docno"]]).isin(
        pd.MultiIndex.from_arrays([qrels["qid"], qrels["docno"]]))
    ok = len(pairs) == expected and judged.all()
    return ok, (f"NIST pool check: depth-{depth} pool over the {len(runs)} contributing runs = {len(pairs):,} "
                f"(topic, document) pairs (expected {expected:,}); {int(judged.sum()):,} of them judged in the "
                f"qrels -> {'OK' if ok else 'MISMATCH'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=Path, default=COVID / "runs", help="directory of run files")
    parser.add_argument("--qrels", type=Path, default=COVID / "qrels.covid-round2.txt")
    parser.add_argument("--leaderboard", type=Path, default=None,
                        help="CSV with tag and 'contributed judgments' columns (default: TREC-COVID's when "
                             "--runs is the default)")
    parser.add_argument("--all-runs", action="store_true", help="ignore the leaderboard: every run contributes")
    parser.add_argument("--depth", type=int, default=100, help="candidate depth (default 100)")
    parser.add_argument("--budgets", default="10,20,50,100,200,300", help="judgments per topic")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--relevant-from", type=int, default=1)
    parser.add_argument("--condensed", action="store_true", help="also simulate on condensed runs")
    parser.add_argument("--check-nist", action="store_true", help="verify NIST's depth-7 pool size")
    parser.add_argument("--nist-depth", type=int, default=7)
    parser.add_argument("--nist-pool-size", type=int, default=5961)
    parser.add_argument("-o", "--output", type=Path, help="also write the markdown here")
    args = parser.parse_args(argv)
    default_data = args.runs == COVID / "runs"
    if default_data:
        if not args.runs.is_dir():
            print(f"no data at {args.runs}: give --runs DIR --qrels FILE", file=sys.stderr)
            return 0
        args.leaderboard = args.leaderboard or COVID / "leaderboard.csv"
        args.check_nist = True
        args.condensed = True
    only = None
    if args.leaderboard is not None and not args.all_runs:
        board = pd.read_csv(args.leaderboard)
        only = board.loc[board["contributed judgments"].astype(str).str.strip().str.lower() == "yes", "tag"] \
            .astype(str).tolist()
    runs = load_runs(args.runs, only)
    qrels = read_qrels(args.qrels)
    budgets = [int(b) for b in args.budgets.split(",")]
    out = [f"## Pooling simulation: {args.runs}\n"]
    status = 0
    if args.check_nist:
        ok, message = check_nist(runs, qrels, depth=args.nist_depth, expected=args.nist_pool_size)
        out.append(message + "\n")
        status = 0 if ok else 1
    out.append(simulate(runs, qrels, depth=args.depth, budgets=budgets, seeds=args.seeds,
                        relevant_from=args.relevant_from, label="Unjudged documents count as non-relevant"))
    if args.condensed:
        out.append(simulate(condense(runs, qrels), qrels, depth=args.depth, budgets=budgets, seeds=args.seeds,
                            relevant_from=args.relevant_from,
                            label="Condensed runs (unjudged documents removed before pooling)"))
    text = "\n".join(out)
    print(text)
    if args.output:
        args.output.write_text(text + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())

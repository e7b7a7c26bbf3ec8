"""Replay collections with complete judgments: relevant documents found versus judgments spent, per strategy.

Usage (``make simulate-pooling`` runs it with the defaults: TREC-COVID round 2 from ../shared, then the
demo collection):

    python tests/benchmarks/simulate_pooling.py                        # TREC-COVID round 2 and the demo
    python tests/benchmarks/simulate_pooling.py --collection demo      # or covid
    python tests/benchmarks/simulate_pooling.py --runs DIR --qrels FILE [--leaderboard CSV]

Protocol (Losada, Parapar and Barreiro, SAC 2016 and IP&M 53(5) 2017, after Cormack, Palmer and Clarke,
SIGIR 1998): the pooled runs of a collection whose qrels judge every document of their pool (TREC-5 to 8,
depth-100 pools), each run cut at the pool depth, so that every document a strategy can pick has a
judgment; a simulated assessor answers from the qrels; each strategy is charged the same number of
judgments per topic and scored by the relevant documents it has found. Here the budgets are the sizes of
each topic's depth-k pool, k = 1, 2, 3, 5, 7, 10, 20, ...

When the qrels come from a shallower pool than the candidates (TREC-COVID round 2: NIST's depth-7 pool,
plus some further judgments, while the candidates go to depth 100), a run ranks unjudged documents, and
an unjudged document can only be scored as non-relevant, which charges the adaptive strategies for
documents nobody judged. The faithful analogue is used by default:

- ``condensed`` (main table): every run restricted to the documents the qrels judge for the topic, in the
  run's own order (Sakai's condensed lists), then cut at ``--depth`` (100). Every candidate has a real
  judgment, as in the papers' setting.
- ``pool depth`` (TREC-COVID): the raw runs cut at NIST's pool depth 7, i.e. the candidates are exactly
  the official pool (5,961 pairs, all judged). The literal analogue, but the budgets stop at k = 7.
- ``raw`` (secondary table, for comparison): the raw runs cut at ``--depth``, unjudged documents counted
  as non-relevant.

The demo (``workbench.demo``: 6 runs, of which the 5 contributing ones are pooled to depth 10, and the
organizer's judgments of that whole pool on topics 7-30) is already in the papers' setting: runs cut at
the pool depth 10, every candidate judged. Its budgets are small (2.4 judgments per topic at k = 1), so the
adaptive strategies are averaged over at least 100 seeds there.

Strategies: depth (the depth-``--depth`` pool in pool_rank order: min_depth, then RRF; cut at the size of
the depth-k pool it is exactly the depth-k pool), rrf / borda (judge in fused order), mtf / maxmean /
bandit (pooling.strategies.adaptive, mean over ``--seeds`` seeds) and maxmean-shared (MaxMean crediting
every run that retrieved the judged document). Below each table: whether each adaptive strategy found at
least as many relevant documents as depth-k at every k.

With ``--leaderboard`` (a CSV with ``tag`` and ``contributed judgments`` columns, as TREC-COVID's), only runs
marked ``yes`` contribute. For TREC-COVID (or with ``--check-nist``) the script verifies that the depth-7
pool of those runs has exactly ``--nist-pool-size`` pairs (5,961 for TREC-COVID round 2), all judged; exit
status 1 if that check fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
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
KS = (1, 2, 3, 5, 7, 10, 20, 30, 50, 100)
ADAPTIVE = [("mtf", "mtf", {}), ("maxmean", "maxmean", {}), ("bandit", "bandit", {}),
            ("maxmean-shared", "maxmean", {"shared": True})]
CHECKED = ("mtf", "maxmean", "bandit")  # the strategies the claim "at least as many as depth-k" is about
DEMO_LATE_RUN = "ql-dir"  # workbench.demo.install.DEMO_LATE_RUN (importing that module needs Django)
DEMO_DEPTH = 10  # workbench.demo.install.DEMO_DEPTH: the demo pool, judged completely on topics 7-30
DEMO_SEEDS = 100  # the demo is small: differences of a fraction of a document need many seeds to settle


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


def _pairs(frame: pd.DataFrame) -> pd.MultiIndex:
    return pd.MultiIndex.from_arrays([frame["qid"].astype(str), frame["docno"].astype(str)])


def condense(runs: dict[str, pd.DataFrame], qrels: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each run restricted to the (topic, document) pairs the qrels judge, rows kept in file order (the
    ranking rule ranks by score, so ranks close up over the documents removed)."""
    judged = _pairs(qrels)
    return {t: f[_pairs(f).isin(judged)] for t, f in runs.items()}


def only_topics(runs: dict[str, pd.DataFrame], qids) -> dict[str, pd.DataFrame]:
    keep = {str(q) for q in qids}
    return {t: f[f["qid"].astype(str).isin(keep)] for t, f in runs.items()}


def sequences(order: pd.DataFrame, grades: dict, relevant_from: int) -> dict[str, np.ndarray]:
    """qid -> cumulative relevant count along the judging order (order has qid, docno in order)."""
    rel = np.array([grades.get((q, d), 0) >= relevant_from
                    for q, d in zip(order["qid"].astype(str), order["docno"].astype(str), strict=True)])
    out = {}
    qids = order["qid"].astype(str).to_numpy()
    for qid in pd.unique(qids):
        out[qid] = np.cumsum(rel[qids == qid])
    return out


def found_at(curve: dict[str, np.ndarray], budget: dict[str, int]) -> int:
    """Relevant documents found when each topic has had ``budget[qid]`` judgments."""
    total = 0
    for qid, c in curve.items():
        n = min(budget.get(qid, 0), len(c))
        if n > 0:
            total += int(c[n - 1])
    return total


def simulate(runs, qrels, *, depth, seeds, relevant_from, label, note, sampling=False) -> str:
    grades = {(str(q), str(d)): g for q, d, g in zip(qrels["qid"], qrels["docno"], qrels["relevance"],
                                                     strict=True)}
    started = time.perf_counter()
    candidates = depth_pool(runs, depth).entries
    candidates = candidates.assign(qid=candidates["qid"].astype(str), docno=candidates["docno"].astype(str))
    sizes = candidates.groupby("qid").size().to_dict()
    keys = list(zip(candidates["qid"], candidates["docno"], strict=True))
    judged = sum(k in grades for k in keys)
    total_rel = sum(grades.get(k, 0) >= relevant_from for k in keys)
    curves: dict[str, list[dict[str, np.ndarray]]] = {"depth": [sequences(candidates, grades, relevant_from)]}
    for method in ("rrf", "borda"):
        curves[method] = [sequences(fusion_pool(runs, None, method=method, depth=depth).entries, grades,
                                    relevant_from)]
    judge = lambda q, d: grades.get((q, d), 0) >= relevant_from  # noqa: E731
    for column, name, extra in ADAPTIVE:
        curves[column] = [sequences(replay(adaptive_pool(name, runs, None, depth=depth, seed=seed, **extra),
                                           judge), grades, relevant_from) for seed in range(seeds)]
    columns = list(curves)
    lines = [f"### {label}\n", note + "\n",
             f"{len(runs)} runs, {len(sizes)} topics; candidates (depth-{depth} pool): {len(candidates):,} "
             f"documents, {judged:,} of them judged, {total_rel:,} relevant. Adaptive strategies: mean of "
             f"{seeds} seeds.\n",
             "Relevant documents found when every topic gets as many judgments as its depth-k pool:\n",
             "| k | judgments | " + " | ".join(columns) + " |",
             "|---:|---:|" + "---:|" * len(columns)]
    below: dict[str, list[str]] = {c: [] for c in CHECKED}
    worst_seed: dict[str, list[str]] = {c: [] for c in CHECKED}
    decimals = 1 if total_rel < 1000 else 0  # small collections: show the fractions the seeds average to
    for k in KS:
        if k > depth:
            continue
        per_topic = candidates[candidates["min_depth"] <= k].groupby("qid").size().to_dict()
        found = {c: [found_at(curve, per_topic) for curve in curves[c]] for c in columns}
        mean = {c: float(np.mean(v)) for c, v in found.items()}
        lines.append(f"| {k} | {sum(per_topic.values()):,} | "
                     + " | ".join(f"{mean[c]:,.{decimals}f}" for c in columns) + " |")
        for c in CHECKED:
            if mean[c] < mean["depth"]:
                below[c].append(f"k={k} ({mean[c]:,.1f} < {mean['depth']:,.0f})")
            if min(found[c]) < found["depth"][0]:
                worst_seed[c].append(f"k={k} (seed min {min(found[c]):,})")
    lines.append("")
    for c in CHECKED:
        verdict = "yes" if not below[c] else "NO: " + ", ".join(below[c])
        seeds_note = "" if not worst_seed[c] else f" (single seeds below depth-k at {', '.join(worst_seed[c])})"
        lines.append(f"- {c} >= depth-k at every k (mean of seeds): {verdict}{seeds_note}")
    lines.append("")
    if sampling:
        lines.append(sampling_table(runs, grades, depth=depth, total_rel=total_rel, relevant_from=relevant_from))
    lines.append(f"({time.perf_counter() - started:.1f} s)\n")
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
            relevant = [grades.get((str(q), str(d)), 0) >= relevant_from
                        for q, d in zip(entries["qid"], entries["docno"], strict=True)]
            est = estimate_relevant(entries.assign(relevant=relevant))
            estimates.append(est.total)
            judged.append(len(entries))
            found.append(sum(relevant))
            first = first or est
        lines.append(f"| {rate:g} | {np.mean(judged):,.0f} | {np.mean(found):,.0f} | {first.total:,.0f} | "
                     f"{first.ci_low:,.0f}-{first.ci_high:,.0f} | {np.mean(estimates):,.0f} |")
    return "\n".join(lines) + "\n"


def check_nist(runs, qrels, *, depth, expected) -> tuple[bool, str]:
    pool = depth_pool(runs, depth)
    pairs = pool.pairs()
    judged = _pairs(pairs).isin(_pairs(qrels))
    ok = len(pairs) == expected and judged.all()
    return ok, (f"NIST pool check: depth-{depth} pool over the {len(runs)} contributing runs = {len(pairs):,} "
                f"(topic, document) pairs (expected {expected:,}); {int(judged.sum()):,} of them judged in the "
                f"qrels -> {'OK' if ok else 'MISMATCH'}")


CONDENSED_NOTE = ("Faithful protocol (main table): every run restricted to the documents the qrels judge for "
                  "the topic (condensed lists, order kept), cut at depth {depth}; every candidate has a "
                  "real judgment, as in Losada et al.'s setting (TREC-5 to 8 runs cut at their fully "
                  "judged depth-100 pools).")
POOL_DEPTH_NOTE = ("Literal protocol: the raw runs cut at NIST's pool depth {depth}, so the candidates are "
                   "exactly the official pool, every one judged (as the papers cut runs at the depth-100 "
                   "pool); budgets stop at k = {depth}.")
RAW_NOTE = ("Secondary table, not the papers' protocol: the raw runs cut at depth {depth}; a document the "
            "qrels do not contain counts as non-relevant. NIST judged this collection's depth-7 pool (and "
            "some more), so below depth 7 most documents are unjudged: a strategy that leaves the top ranks "
            "early is charged for documents nobody judged, and depth-k, which stays in the judged top "
            "ranks, is favoured.")
DEMO_NOTE = ("Papers' protocol as it stands: the demo's 5 contributing runs cut at the demo pool depth "
             "{depth}; the organizer judged that whole pool on topics 7-30.")


def collection_covid(args, out: list[str]) -> int:
    if not args.runs.is_dir():
        out.append(f"(no TREC-COVID data at {args.runs}: skipped)\n")
        return 0
    leaderboard = args.leaderboard or COVID / "leaderboard.csv"
    return run_collection(args, out, label="TREC-COVID round 2", runs_dir=args.runs, qrels_path=args.qrels,
                          leaderboard=leaderboard, check=True)


def run_collection(args, out, *, label, runs_dir, qrels_path, leaderboard, check) -> int:
    only = None
    if leaderboard is not None and not args.all_runs:
        board = pd.read_csv(leaderboard)
        only = board.loc[board["contributed judgments"].astype(str).str.strip().str.lower() == "yes", "tag"] \
            .astype(str).tolist()
    runs = load_runs(runs_dir, only)
    qrels = read_qrels(qrels_path)
    runs = only_topics(runs, qrels["qid"].unique())
    out.append(f"## Pooling simulation: {label} ({runs_dir})\n")
    status = 0
    if check:
        ok, message = check_nist(runs, qrels, depth=args.nist_depth, expected=args.nist_pool_size)
        out.append(message + "\n")
        status = 0 if ok else 1
    common = {"seeds": args.seeds, "relevant_from": args.relevant_from}
    out.append(simulate(condense(runs, qrels), qrels, depth=args.depth, label=f"{label}: condensed runs",
                        note=CONDENSED_NOTE.format(depth=args.depth), sampling=True, **common))
    if check:
        out.append(simulate(runs, qrels, depth=args.nist_depth, label=f"{label}: runs cut at the pool depth",
                            note=POOL_DEPTH_NOTE.format(depth=args.nist_depth), **common))
    if not args.no_raw:
        out.append(simulate(runs, qrels, depth=args.depth, label=f"{label}: raw runs",
                            note=RAW_NOTE.format(depth=args.depth), **common))
    return status


def collection_demo(args, out: list[str]) -> int:
    from workbench.demo import build_demo_files
    from workbench.demo.judgments import JUDGED_TOPICS, JUDGMENTS

    with tempfile.TemporaryDirectory() as tmp:
        files = build_demo_files(Path(tmp))
        runs = {}
        for run in files.runs:
            if run.tag != DEMO_LATE_RUN:
                tag, frame = read_run(run.path)
                runs[tag] = frame
    qrels = pd.DataFrame([(qid, "0", docno, grade) for qid, docs in JUDGMENTS.items()
                          for docno, grade in docs.items()], columns=["qid", "iter", "docno", "relevance"])
    runs = only_topics(runs, JUDGED_TOPICS)
    out.append("## Pooling simulation: the demo collection (workbench.demo)\n")
    out.append(simulate(runs, qrels, depth=DEMO_DEPTH, seeds=max(args.seeds, DEMO_SEEDS), relevant_from=args.relevant_from,
                        label="Demo: runs cut at the pool depth", note=DEMO_NOTE.format(depth=DEMO_DEPTH)))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collection", choices=["all", "covid", "demo"], default="all",
                        help="which of the built-in collections to simulate (default: both)")
    parser.add_argument("--runs", type=Path, default=None, help="directory of run files (another collection)")
    parser.add_argument("--qrels", type=Path, default=None)
    parser.add_argument("--leaderboard", type=Path, default=None,
                        help="CSV with tag and 'contributed judgments' columns (default: TREC-COVID's for "
                             "TREC-COVID)")
    parser.add_argument("--all-runs", action="store_true", help="ignore the leaderboard: every run contributes")
    parser.add_argument("--depth", type=int, default=100, help="candidate depth (default 100)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds for the adaptive strategies (default 5; "
                        f"at least {DEMO_SEEDS} on the demo, which is small and quick)")
    parser.add_argument("--relevant-from", type=int, default=1)
    parser.add_argument("--no-raw", action="store_true", help="leave out the raw-runs table")
    parser.add_argument("--check-nist", action="store_true",
                        help="with --runs: verify that the depth --nist-depth pool has --nist-pool-size pairs, all "
                             "judged, and add the table of runs cut at that depth (always done for TREC-COVID)")
    parser.add_argument("--nist-depth", type=int, default=7)
    parser.add_argument("--nist-pool-size", type=int, default=5961)
    parser.add_argument("-o", "--output", type=Path, help="also write the markdown here")
    args = parser.parse_args(argv)
    out: list[str] = []
    status = 0
    if args.runs is not None:
        if args.qrels is None:
            parser.error("--runs needs --qrels")
        status = run_collection(args, out, label=args.runs.name, runs_dir=args.runs, qrels_path=args.qrels,
                                leaderboard=args.leaderboard, check=args.check_nist)
    else:
        args.runs, args.qrels = COVID / "runs", args.qrels or COVID / "qrels.covid-round2.txt"
        if args.collection in ("all", "covid"):
            status = collection_covid(args, out)
        if args.collection in ("all", "demo"):
            status = max(status, collection_demo(args, out))
    text = "\n".join(out)
    print(text)
    if args.output:
        args.output.write_text(text + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())

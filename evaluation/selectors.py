"""Reads of evaluation: leaderboards with pool-bias flags, per-run and per-topic reports, significance,
precision-recall curves, leave-one-out, recall estimates and assessor agreement on rankings.

Scores follow trec_eval 9.0.8 (see :mod:`evaluation.scoring`); measure names are trec_eval's printed
names (``ndcg_cut_10``). Everything is computed once per version of the collection (its judgments, runs
and pools) and kept in process, so a page that asks again gets the same objects back at once.

Statistics on a leaderboard:

* ``ci``: 95% confidence interval of a run's mean over its topics, ``mean +- t_{0.975, n-1} sd / sqrt(n)``
  (Student's t; ``CI_METHOD = "t"``), NaN with fewer than 2 topics.
* ``letter``: compact letter display (Piepho 2004) of the paired test on the first measure, multiplicity
  corrected over all pairs: two runs share a letter iff they are not significantly different. Same
  letters as :func:`evaluation.engine.significance.significance_letters` while they fit in 26 letters;
  beyond (many runs, many differences) it falls back to letters for runs of consecutive ranks
  (``Leaderboard.letters_method``, see :func:`evaluation.engine.leaderboard_stats.compact_letters`). For ``test="t"``
  the pairwise t-tests are vectorised here (all pairs of 150 runs in milliseconds).
* ``worse_than_best`` / ``p_vs_best``: the test against the best run, corrected over the k - 1
  comparisons (:func:`~evaluation.engine.significance.compare_to_best`).

Paired tests need one value per topic for every run: a topic a run returned nothing for counts 0
(trec_eval's ``-c`` convention), while the leaderboard means stay trec_eval's (its topics only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from evaluation import cache, scoring, snapshot
from evaluation.engine.leaderboard_stats import compact_letters, competition_ranks, pairwise_t, t_interval
from evaluation.engine.significance import TESTS, compare_to_best, holm, pairwise_tests
from evaluation.measures import DEFAULT_MEASURES, ROBUST_MEASURES
from evaluation.recall_estimates import recall_estimates, run_recall
from evaluation.reusability import LeaveOneOut, assessor_ranking_agreement, leave_one_out
from evaluation.scoring import EvaluationError, Scores
from pooling import strategies as S
from workbench.models import Collection

__all__ = [
    "CI_METHOD", "DEFAULT_MEASURES", "ROBUST_MEASURES", "EvaluationError", "LeaveOneOut", "Leaderboard", "RunScore",
    "assessor_ranking_agreement", "leave_one_out", "leaderboard", "pr_curves", "recall_estimates", "run_recall",
    "run_report", "significance_matrix", "topic_report",
]

CI_METHOD = "t"
NOT_CONTRIBUTED = "did not contribute to the pool"


@dataclass(frozen=True)
class RunScore:
    tag: str
    team: str
    contributed: bool
    measures: dict[str, float]                 # printed name -> trec_eval's "all" value
    judged_at_10: float
    judged_at_k: dict[int, float]              # 10, and the pool depth for a depth pool
    flags: list[str]                           # why the score may be unfair to the run
    ci: dict[str, tuple[float, float]]         # 95% CI of the mean (CI_METHOD)
    letter: str                                # compact letter display on the first measure
    rank: int                                  # competition rank on the first measure (ties share)
    robust: dict[str, float] = field(default_factory=dict)   # bpref, condensed measures, infAP
    worse_than_best: bool = False
    p_vs_best: float | None = None
    topics: int = 0                            # topics evaluated (in the run and the qrels)
    notes: list[str] = field(default_factory=list)           # e.g. topics without results


@dataclass(frozen=True)
class Leaderboard:
    collection: str
    measures: list[str]                        # printed names, in the order asked
    runs: list[RunScore]                       # by the first measure, best first
    per_topic: Mapping[str, pd.DataFrame]      # tag -> index qid, one column per measure (built lazily)
    topics: list[str]                          # topics evaluated (in the qrels and some run), natural order
    qrels_policy: str
    judged_threshold: float
    robust_measures: list[str] = field(default_factory=list)
    test: str = "t"
    correction: str = "holm"
    ci_method: str = CI_METHOD
    pool: str | None = None                    # "main (depth, depth 10)"
    letters_method: str = "piepho"             # or "rank-intervals" (see leaderboard_stats.compact_letters)


# ------------------------------------------------------------------------------------ leaderboard
def _policy_key(qrels_policy: str | None, assessor: str | None) -> str:
    return scoring.normalise_policy(qrels_policy) if assessor is None else f"assessor:{assessor}"


def _natural(qids) -> list[str]:
    return S.sorted_topics([str(q) for q in qids])


def _topics(scores: dict[str, Scores]) -> list[str]:
    seen: set[str] = set()
    for s in scores.values():
        seen.update(map(str, s.qids))
    return _natural(seen)


def _matrix(scores: dict[str, Scores], name: str, topics: list[str]) -> pd.DataFrame:
    """Topics x runs of one measure; a topic without results counts 0."""
    return _table(scores, name, topics, fill=0.0)


def _table(scores: dict[str, Scores], name: str, topics: list[str], fill: float = np.nan) -> pd.DataFrame:
    """Topics x runs of one measure, ``fill`` where a run has no value (built from the arrays)."""
    values = np.column_stack([s.column(name, topics, fill) for s in scores.values()]) if scores else \
        np.zeros((len(topics), 0))
    return pd.DataFrame(values, index=pd.Index(topics, name="qid"), columns=list(scores))


def _significance(matrix: pd.DataFrame, test: str, correction: str, alpha: float
                  ) -> tuple[dict[str, str], dict[str, tuple[bool, float | None]], str]:
    """Letters, (worse than best, adjusted p vs best) per run, and the letters' method."""
    tags = list(matrix.columns)
    if len(tags) < 2 or len(matrix) < 2:
        return {t: "a" for t in tags}, {t: (False, None) for t in tags}, "none (fewer than 2 runs or topics)"
    if test not in TESTS:
        raise EvaluationError(f"unknown test {test!r}; choose one of {', '.join(TESTS)}")
    values = matrix.to_numpy(dtype=float)
    means = values.mean(axis=0)
    if test == "t":
        pairs = pairwise_t(values)
        p_adjusted = _adjust(pairs["p_value"], correction)
        best = int(np.argsort(-means, kind="stable")[0])
        others = [int(i) for i in np.argsort(-means, kind="stable")[1:]]
        lookup = {(int(i), int(j)): k for k, (i, j) in enumerate(zip(pairs["i"], pairs["j"], strict=True))}
        p_best = np.array([pairs["p_value"][lookup[(min(i, best), max(i, best))]] for i in others])
        p_best_adjusted = _adjust(p_best, correction)
        vs_best = {tags[best]: (False, None)}
        for i, p in zip(others, p_best_adjusted, strict=True):
            vs_best[tags[i]] = (bool(p < alpha and means[i] != means[best]), float(p))
    else:
        results = pairwise_tests(matrix, test=test, correction=correction, n_resamples=2000)
        p_adjusted = np.array([r.p_adjusted for r in results])
        table = compare_to_best(matrix, test=test, correction=correction, alpha=alpha, n_resamples=2000)
        vs_best = {run: (row.significantly_worse, None if row.result is None else row.result.p_adjusted)
                   for run, row in table.items()}
    letters, method = compact_letters(means, p_adjusted < alpha)
    return dict(zip(tags, letters, strict=True)), vs_best, method


def _adjust(p_values: np.ndarray, correction: str) -> np.ndarray:
    if correction == "holm":
        return holm(p_values)
    if correction == "bonferroni":
        return np.minimum(1.0, np.asarray(p_values) * len(p_values))
    if correction == "none":
        return np.asarray(p_values, dtype=float)
    raise EvaluationError(f"unknown correction {correction!r}; choose holm, bonferroni or none")


@cache.reads
def leaderboard(collection: Collection, *, measures: Sequence[str] | None = None, tags: Sequence[str] | None = None,
                qrels_policy: str = "adjudicated", assessor: str | None = None, judged_threshold: float = 0.8,
                test: str = "t", correction: str = "holm", alpha: float = 0.05) -> Leaderboard:
    """Every run (or ``tags``) scored with ``measures`` (trec_eval syntax, default ``DEFAULT_MEASURES``),
    flagged when it did not contribute to the pool or when judged@10 < ``judged_threshold``, with CIs,
    significance letters on the first measure and the robust measures beside. Cached per version."""
    requests = list(measures) if measures else list(DEFAULT_MEASURES)
    names = scoring.measure_names(requests)
    snap = snapshot.snapshot(collection)
    policy = _policy_key(qrels_policy, assessor)
    key = (snap.version, "leaderboard", tuple(requests), None if tags is None else tuple(tags), policy,
           float(judged_threshold), test, correction, alpha)
    return cache.cached(key, lambda: _leaderboard(collection, snap, requests, names, tags, qrels_policy,
                                                     assessor, judged_threshold, test, correction, alpha))


def _leaderboard(collection, snap, requests, names, tags, qrels_policy, assessor, threshold, test, correction,
                 alpha) -> Leaderboard:
    policy = scoring.normalise_policy(qrels_policy)
    scores = scoring.evaluate(collection, [*requests, *ROBUST_MEASURES], policy=policy, assessor=assessor,
                               tags=tags)
    robust_names = scoring.measure_names(ROBUST_MEASURES)
    infap = scoring.infap_scores(collection, policy=policy, assessor=assessor)
    if infap is not None:
        robust_names.append("infAP")
    pool = snap.main_pool
    depths = sorted({10, *([pool.depth] if pool is not None and pool.depth else [])})
    topics = _topics(scores)
    first = names[0]
    per_topic_first = first in next(iter(scores.values())).values
    if per_topic_first:
        letters, vs_best, letters_method = _significance(_matrix(scores, first, topics), test, correction, alpha)
    else:
        letters, vs_best = {t: "" for t in scores}, {t: (False, None) for t in scores}
        letters_method = f"none ({first} has no per-topic values)"
    n_qrels = len(scoring.qrels_frame(collection, policy=policy, assessor=assessor)["qid"].unique())
    rows = []
    for tag, s in scores.items():
        contributed = snap.contributed[tag]
        judged = {k: float(s.aggregate.get(f"judged_{k}", np.nan)) for k in depths}
        flags = [] if contributed else [NOT_CONTRIBUTED]
        if judged[10] < threshold:
            flags.append(f"judged@10 = {judged[10]:.2f} < {threshold:.2f}")
        ci = {n: t_interval(np.asarray(s.values[n], dtype=float)) if n in s.values else (np.nan, np.nan)
              for n in names}
        robust = {n: s.aggregate[n] for n in robust_names if n in s.aggregate}
        if infap is not None:
            robust["infAP"] = infap[tag]
        notes = []
        if len(s.qids) < n_qrels:
            notes.append(f"no results for {n_qrels - len(s.qids)} of {n_qrels} judged topics")
        worse, p_best = vs_best[tag]
        rows.append(RunScore(tag=tag, team=snap.teams[tag], contributed=contributed,
                             measures={n: s.aggregate[n] for n in names if n in s.aggregate},
                             judged_at_10=judged[10], judged_at_k=judged, flags=flags, ci=ci,
                             letter=letters[tag], rank=0, robust=robust, worse_than_best=worse, p_vs_best=p_best,
                             topics=len(s.qids), notes=notes))
    rows.sort(key=lambda r: (-_number(r.measures.get(first)), r.tag))
    ranks = competition_ranks(np.array([_number(r.measures.get(first)) for r in rows]))
    rows = [_with_rank(r, int(k)) for r, k in zip(rows, ranks, strict=True)]
    pool_text = None if pool is None else f"{pool.name} ({pool.strategy}" + (
        f", depth {pool.depth})" if pool.depth else ")")
    return Leaderboard(collection=snap.slug, measures=names, runs=rows,
                       per_topic=_PerTopic(scores), topics=topics,
                       qrels_policy=policy if assessor is None else f"assessor {assessor}",
                       judged_threshold=float(threshold), robust_measures=robust_names, test=test,
                       correction=correction, pool=pool_text, letters_method=letters_method)


class _PerTopic(Mapping):
    """tag -> the run's per-topic frame, built when asked for (a page shows one run's at most)."""

    def __init__(self, scores: dict[str, Scores]) -> None:
        self._scores = scores

    def __getitem__(self, tag: str) -> pd.DataFrame:
        return self._scores[tag].per_topic

    def __iter__(self):
        return iter(self._scores)

    def __len__(self) -> int:
        return len(self._scores)


def _number(value) -> float:
    return float(value) if value is not None and not pd.isna(value) else -np.inf


def _with_rank(run: RunScore, rank: int) -> RunScore:
    return replace(run, rank=rank)


# ----------------------------------------------------------------------------------------- reports
def _one_name(measure: str) -> str:
    names = scoring.measure_names([measure])
    if len(names) != 1:
        raise EvaluationError(f"choose one measure value: {measure!r} gives {len(names)} ({', '.join(names)})")
    return names[0]


@cache.reads
def run_report(collection: Collection, tag: str, *, measure: str = "map", qrels_policy: str = "adjudicated",
               assessor: str | None = None) -> pd.DataFrame:
    """The TREC participant report: per topic, the run's score against the best, median and worst of all runs.

    Columns: qid, score, best, median, worst, best_run, has_results. Best/median/worst are over the runs
    that returned results for the topic; a topic the run has no results for scores 0 (has_results False).
    """
    name = _one_name(measure)
    scores = scoring.evaluate(collection, [measure], policy=qrels_policy, assessor=assessor)
    if tag not in scores:
        raise EvaluationError(f"no run {tag!r} in collection {collection.slug!r}")
    topics = _topics(scores)
    table = _table(scores, name, topics)
    own = table[tag]
    out = pd.DataFrame({
        "qid": topics, "score": own.fillna(0.0).to_numpy(), "best": table.max(axis=1).to_numpy(),
        "median": table.median(axis=1).to_numpy(), "worst": table.min(axis=1).to_numpy(),
        "best_run": table.fillna(-np.inf).idxmax(axis=1).to_numpy(), "has_results": own.notna().to_numpy()})
    return out


def _topic_lines(frame: pd.DataFrame, qid: str) -> pd.DataFrame:
    """A run's lines for one topic (on the category codes of a stored run: no string comparison)."""
    column = frame["qid"]
    if isinstance(column.dtype, pd.CategoricalDtype):
        position = column.cat.categories.get_indexer([qid])[0]
        if position < 0:
            return frame.iloc[:0]
        rows = np.flatnonzero(column.cat.codes.to_numpy() == position)
        if rows.size and rows[-1] - rows[0] + 1 == rows.size:  # stored runs hold a topic's lines together
            return frame.iloc[rows[0]: rows[-1] + 1]
        return frame.iloc[rows]
    return frame[column == qid]


@cache.reads
def topic_report(collection: Collection, qid: str, *, measures: Sequence[str] | None = None,
                 qrels_policy: str = "adjudicated", assessor: str | None = None,
                 depths: Sequence[int] = (1, 5, 10, 20, 50, 100)) -> dict:
    """One topic: its text, pool size, judgments, relevant documents found per pool depth, recall
    estimate, and every run's scores on it.

    ``relevant_by_depth`` (:func:`pooling.strategies.relevant_by_depth`) ranks the contributing runs the
    way pools rank them, to the deepest of ``depths``: within the stored pool's depth it is the pool's
    own provenance, below it it shows how much a deeper pool would still need to judge.
    """
    topic = collection.topics.filter(qid=qid).first()
    if topic is None:
        raise EvaluationError(f"no topic {qid!r} in collection {collection.slug!r}")
    requests = list(measures) if measures else list(DEFAULT_MEASURES)
    names = scoring.measure_names(requests)
    snap = snapshot.snapshot(collection)
    qrels = scoring.qrels_frame(collection, policy=qrels_policy, assessor=assessor)
    mine = qrels[qrels["qid"].astype(str) == qid]
    scores = scoring.evaluate(collection, requests, policy=qrels_policy, assessor=assessor)
    pool = snap.main_pool
    pool_size = 0 if pool is None else pool.pool.entries.filter(topic=topic).count()
    contributing = [t for t, c in snap.contributed.items() if c]
    topic_runs = {t: _topic_lines(f, qid) for t, f in scoring.frames(collection, contributing).items()}
    provenance = S.ranked_entries(topic_runs, max(depths)) if topic_runs else pd.DataFrame(
        columns=["qid", "docno", "tag", "rank"])
    by_depth = S.relevant_by_depth(provenance, mine, depths, relevant_from=snap.relevant_from) \
        if len(provenance) else pd.DataFrame(columns=["depth", "pool_size", "judged", "judged_fraction", "relevant",
                                                      "relevant_per_judgment"])
    rows = []
    for tag, s in scores.items():
        has = qid in s.qids
        row = {"run": tag, "team": snap.teams[tag], "contributed": snap.contributed[tag], "has_results": has}
        for n in [*names, "judged_10"]:
            row[n] = float(s.column(n, [qid], 0.0)[0])
        rows.append(row)
    runs = pd.DataFrame(rows).sort_values([names[0], "run"], ascending=[False, True], kind="stable") \
        .reset_index(drop=True) if rows else pd.DataFrame()
    estimates = recall_estimates(collection, qrels_policy=qrels_policy, assessor=assessor)
    estimate = estimates[estimates["qid"] == qid]
    return {"qid": qid, "title": topic.title, "description": topic.description, "narrative": topic.narrative,
            "pool": None if pool is None else pool.name, "pool_size": pool_size, "judged": int(len(mine)),
            "relevant": int((mine["rel"] >= snap.relevant_from).sum()), "relevant_by_depth": by_depth,
            "measures": names, "runs": runs,
            "recall": estimate.iloc[0].to_dict() if len(estimate) else None}


@cache.reads
def significance_matrix(collection: Collection, *, measure: str = "map", test: str = "t", correction: str = "holm",
                        tags: Sequence[str] | None = None, qrels_policy: str = "adjudicated",
                        assessor: str | None = None, alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of runs (run_a ranked above run_b) on one measure: run_a, run_b, mean_a, mean_b, mean_diff,
    statistic, p_value, p_adjusted, significant, effect_size (Cohen's d_z), ci_low, ci_high (95% interval
    of the mean difference: Student's t for ``test="t"``, else the engine's BCa bootstrap)."""
    name = _one_name(measure)
    snap = snapshot.snapshot(collection)
    key = (snap.version, "significance", name, test, correction, None if tags is None else tuple(tags),
           _policy_key(qrels_policy, assessor), alpha)

    def compute() -> pd.DataFrame:
        scores = scoring.evaluate(collection, [measure], policy=qrels_policy, assessor=assessor, tags=tags)
        matrix = _matrix(scores, name, _topics(scores))
        order = np.argsort(-matrix.mean(axis=0).to_numpy(), kind="stable")
        matrix = matrix.iloc[:, order]
        if matrix.shape[1] < 2 or len(matrix) < 2:
            return pd.DataFrame(columns=["run_a", "run_b", "mean_a", "mean_b", "mean_diff", "statistic", "p_value",
                                         "p_adjusted", "significant", "effect_size", "ci_low", "ci_high"])
        if test == "t":
            pairs = pairwise_t(matrix.to_numpy(dtype=float))
            tags_ = list(matrix.columns)
            out = pd.DataFrame({"run_a": [tags_[i] for i in pairs["i"]], "run_b": [tags_[j] for j in pairs["j"]],
                                **{k: pairs[k] for k in ("mean_a", "mean_b", "mean_diff", "statistic", "p_value")}})
            out["p_adjusted"] = _adjust(pairs["p_value"], correction)
            out["effect_size"], out["ci_low"], out["ci_high"] = pairs["effect_size"], pairs["ci_low"], pairs["ci_high"]
        else:
            if test not in TESTS:
                raise EvaluationError(f"unknown test {test!r}; choose one of {', '.join(TESTS)}")
            results = pairwise_tests(matrix, test=test, correction=correction, n_resamples=2000)
            out = pd.DataFrame([r.__dict__ for r in results]).drop(columns=["test", "n"])
        out.insert(out.columns.get_loc("p_adjusted") + 1, "significant", out["p_adjusted"] < alpha)
        return out[["run_a", "run_b", "mean_a", "mean_b", "mean_diff", "statistic", "p_value", "p_adjusted",
                    "significant", "effect_size", "ci_low", "ci_high"]]

    return cache.cached(key, compute)


@cache.reads
def pr_curves(collection: Collection, tags: Sequence[str], *, qrels_policy: str = "adjudicated",
              assessor: str | None = None) -> pd.DataFrame:
    """Interpolated precision at recall 0.0, 0.1, ..., 1.0 (trec_eval's ``iprec_at_recall``, averaged over
    topics) of each run: columns tag, recall, precision."""
    scores = scoring.evaluate(collection, ["iprec_at_recall"], policy=qrels_policy, assessor=assessor,
                               tags=list(tags))
    levels = [round(0.1 * i, 1) for i in range(11)]
    rows = [{"tag": tag, "recall": level, "precision": float(s.aggregate[f"iprec_at_recall_{level:3.2f}"])}
            for tag, s in scores.items() for level in levels]
    return pd.DataFrame(rows, columns=["tag", "recall", "precision"])


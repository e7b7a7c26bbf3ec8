"""Leaderboards: every run scored with the chosen measures, flagged where pooling may be unfair to it, with
confidence intervals, significance groups on the first measure and the robust measures beside.

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

import math
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from evaluation import cache, scoring, snapshot
from evaluation import scores as stored_scores
from evaluation.engine import significance
from evaluation.engine.leaderboard_stats import (
    compact_letters,
    competition_ranks,
    pair_index,
    pairwise_t,
    t_interval,
)
from evaluation.inferred import xinfap_scores
from evaluation.measures import DEFAULT_MEASURES, ROBUST_MEASURES
from evaluation.scoring import EvaluationError, Scores
from workbench.formats.ids import sorted_topics
from workbench.models import Collection

__all__ = ["CI_METHOD", "NOT_CONTRIBUTED", "Leaderboard", "RunScore", "adjust", "assemble", "leaderboard",
           "leaderboard_of", "policy_key", "topic_matrix", "topic_table", "topics_of"]

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
    per_topic: _PerTopic                       # tag -> index qid, one column per measure (built lazily)
    topics: list[str]                          # topics evaluated (in the qrels and some run), natural order
    qrels_policy: str
    judged_threshold: float
    robust_measures: list[str] = field(default_factory=list)
    test: str = "t"
    correction: str = "holm"
    ci_method: str = CI_METHOD
    pool: str | None = None                    # "main (depth, depth 10)"
    letters_method: str = "piepho"             # or "rank-intervals" (see leaderboard_stats.compact_letters)
    board_version: str | None = None           # the stored board it was read from (evaluation.board)

    def as_dict(self, *, per_topic: bool = False, runs: Set[str] | None = None) -> dict:
        """The leaderboard as JSON-ready data (NaN and infinities as None), for the page's JSON export and
        ``manage.py evaluate --format json`` alike; ``per_topic`` adds each run's values per topic (natural
        topic order) for its measures and judged@10. ``runs``: only these tags' rows (the others' per-topic
        values are not read)."""
        rows = []
        for r in self.runs if runs is None else [r for r in self.runs if r.tag in runs]:
            row = {"run": r.tag, "team": r.team, "contributed": r.contributed, "rank": r.rank,
                   "measures": r.measures, "ci95": {k: list(v) for k, v in r.ci.items()}, "group": r.letter,
                   "judged_at_10": r.judged_at_10, "judged_at_k": {str(k): v for k, v in r.judged_at_k.items()},
                   "flags": r.flags, "robust": r.robust, "topics": r.topics}
            row.update({"per_topic": self._per_topic_values(r.tag)} if per_topic else {})
            rows.append(row)
        return _plain({"collection": self.collection, "measures": self.measures, "qrels": self.qrels_policy,
                       "topics": [str(q) for q in self.topics],
                       "pool": self.pool, "judged_threshold": self.judged_threshold, "runs": rows})

    def _per_topic_values(self, tag: str) -> dict[str, dict[str, float]]:
        found = self.per_topic.scores(tag)  # the run's arrays, not its frame: 4 s for 1,000 runs' frames
        where = {q: i for i, q in enumerate(found.qids)}
        present = [c for c in [*self.measures, "judged_10"] if c in found.values]
        columns = {c: np.asarray(found.values[c]).tolist() for c in present}
        return {str(q): {c: columns[c][where[q]] for c in present} for q in self.topics if q in where}


def _plain(value):
    """JSON-safe: NaN and infinities become None, numpy scalars Python numbers."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


# ------------------------------------------------------------------------------------ leaderboard
def policy_key(qrels_policy: str | None, assessor: str | None) -> str:
    policy = scoring.normalise_policy(qrels_policy)
    return policy if assessor is None else f"assessor:{assessor}" + policy[len(policy.removesuffix(scoring.COMPLETE)):]


def topics_of(scores: dict[str, Scores]) -> list[str]:
    seen: set[str] = set()
    for s in scores.values():
        seen.update(map(str, s.qids))
    return sorted_topics(seen)


def topic_matrix(scores: dict[str, Scores], name: str, topics: list[str]) -> pd.DataFrame:
    """Topics x runs of one measure; a topic without results counts 0."""
    return topic_table(scores, name, topics, fill=0.0)


def topic_table(scores: dict[str, Scores], name: str, topics: list[str], fill: float = np.nan) -> pd.DataFrame:
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
    if test not in significance.TESTS:
        raise EvaluationError(f"unknown test {test!r}; choose one of {', '.join(significance.TESTS)}")
    values = matrix.to_numpy(dtype=float)
    means = values.mean(axis=0)
    if test == "t":
        pairs = pairwise_t(values)
        p_adjusted = adjust(pairs["p_value"], correction)
        order = np.argsort(-means, kind="stable")
        best, others = int(order[0]), order[1:]
        p_best_adjusted = adjust(pairs["p_value"][pair_index(len(tags), others, best)], correction)
        vs_best = {tags[best]: (False, None)}
        for i, p in zip(others.tolist(), p_best_adjusted, strict=True):
            vs_best[tags[i]] = (bool(p < alpha and means[i] != means[best]), float(p))
    else:
        results = significance.pairwise_tests(matrix, test=test, correction=correction, n_resamples=2000)
        p_adjusted = np.array([r.p_adjusted for r in results])
        table = significance.compare_to_best(matrix, test=test, correction=correction, alpha=alpha, n_resamples=2000)
        vs_best = {run: (row.significantly_worse, None if row.result is None else row.result.p_adjusted)
                   for run, row in table.items()}
    letters, method = compact_letters(means, p_adjusted < alpha)
    return dict(zip(tags, letters, strict=True)), vs_best, method


def adjust(p_values: np.ndarray, correction: str) -> np.ndarray:
    """The engine's multiple-comparison correction, refused in the pages' words when unknown."""
    if correction not in significance.CORRECTIONS:
        raise EvaluationError(f"unknown correction {correction!r}; choose holm, bonferroni or none")
    return significance.adjust_p_values(p_values, correction)


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
    policy = policy_key(qrels_policy, assessor)
    key = (snap.version, "leaderboard", tuple(requests), None if tags is None else tuple(tags), policy,
           float(judged_threshold), test, correction, alpha)
    return cache.cached(key, lambda: _leaderboard(collection, snap, requests, names, tags, qrels_policy,
                                                     assessor, judged_threshold, test, correction, alpha))


def _leaderboard(collection, snap, requests, names, tags, qrels_policy, assessor, threshold, test, correction,
                 alpha) -> Leaderboard:
    policy = scoring.normalise_policy(qrels_policy)
    scores = stored_scores.evaluate(collection, [*requests, *ROBUST_MEASURES], policy=policy, assessor=assessor,
                               tags=tags)
    return _of_scores(collection, snap, scores, names, policy, assessor, threshold, test, correction, alpha)


def leaderboard_of(collection: Collection, scores: dict[str, Scores], *, measures: Sequence[str] | None = None,
                   qrels_policy: str = "adjudicated", n_qrels: int | None = None) -> Leaderboard:
    """The leaderboard :func:`leaderboard` gives (default options), of every run's scores computed elsewhere
    (for ``measures`` and ``ROBUST_MEASURES``, as :func:`evaluation.scoring.evaluate` gives them): a
    split evaluation's (``evaluation.report_topics``)."""
    names = scoring.measure_names(list(measures) if measures else list(DEFAULT_MEASURES))
    return _of_scores(collection, snapshot.snapshot(collection), scores, names,
                      scoring.normalise_policy(qrels_policy), None, 0.8, "t", "holm", 0.05, n_qrels)


def _of_scores(collection, snap, scores, names, policy, assessor, threshold, test, correction, alpha,
               n_qrels: int | None = None) -> Leaderboard:
    infap = scoring.infap_scores(collection, policy=policy, assessor=assessor)
    if infap is not None:
        inferred = xinfap_scores(collection, policy=policy, assessor=assessor)
        infap = {tag: {"infAP": value, **inferred.get(tag, {})} for tag, value in infap.items()}
    pool = snap.main_pool
    pool_text = None if pool is None else f"{pool.name} ({pool.strategy}" + (
        f", depth {pool.depth})" if pool.depth else ")")
    if n_qrels is None:
        n_qrels = len(scoring.qrels_frame(collection, policy=policy, assessor=assessor)["qid"].unique())
    return assemble(scores, names, infap=infap, teams=snap.teams, contributed=snap.contributed,
                     pool_depth=None if pool is None else pool.depth, pool_text=pool_text, n_qrels=n_qrels,
                     slug=snap.slug, policy_text=policy if assessor is None else f"assessor {assessor}",
                     threshold=threshold, test=test, correction=correction, alpha=alpha)


def assemble(scores: dict[str, Scores], names: list[str], *, infap, teams, contributed, pool_depth, pool_text,
              n_qrels, slug, policy_text, threshold, test, correction, alpha) -> Leaderboard:
    robust_names = scoring.measure_names(ROBUST_MEASURES)
    if infap is not None:
        robust_names += ["infAP", "xinfAP", "infNDCG"]
    depths = sorted({10, *([pool_depth] if pool_depth else [])})
    topics = topics_of(scores)
    first = names[0]
    per_topic_first = first in next(iter(scores.values())).values
    if per_topic_first:
        letters, vs_best, letters_method = _significance(topic_matrix(scores, first, topics), test, correction, alpha)
    else:
        letters, vs_best = {t: "" for t in scores}, {t: (False, None) for t in scores}
        letters_method = f"none ({first} has no per-topic values)"
    rows = [_run_score(tag, s, teams[tag], bool(contributed[tag]), names, robust_names, infap, depths, threshold,
                       n_qrels, letters[tag], vs_best[tag]) for tag, s in scores.items()]
    rows.sort(key=lambda r: (-_number(r.measures.get(first)), r.tag))
    ranks = competition_ranks(np.array([_number(r.measures.get(first)) for r in rows]))
    rows = [_with_rank(r, int(k)) for r, k in zip(rows, ranks, strict=True)]
    return Leaderboard(collection=slug, measures=names, runs=rows,
                       per_topic=_PerTopic(scores), topics=topics, qrels_policy=policy_text,
                       judged_threshold=float(threshold), robust_measures=robust_names, test=test,
                       correction=correction, pool=pool_text, letters_method=letters_method)


def _run_score(tag: str, s: Scores, team: str, contributed: bool, names: list[str], robust_names: list[str],
               infap: dict | None, depths: list[int], threshold: float, n_qrels: int, letter: str,
               vs_best: tuple[bool, float | None]) -> RunScore:
    """One run's leaderboard row (ranked later): measures, flags, CIs, robust measures, notes."""
    judged = {k: float(s.aggregate.get(f"judged_{k}", np.nan)) for k in depths}
    flags = [] if contributed else [NOT_CONTRIBUTED]
    # judged@10 is a mean of fractions: 0.8 may come out as 0.7999999999999999, which is not below 0.8
    if round(judged[10], 9) < round(threshold, 9):
        flags.append(f"judged@10 = {_below(judged[10], threshold)} < {threshold:.2f}")
    ci = {n: t_interval(np.asarray(s.values[n], dtype=float)) if n in s.values else (np.nan, np.nan)
          for n in names}
    robust = {n: s.aggregate[n] for n in robust_names if n in s.aggregate}
    if infap is not None:
        robust |= infap.get(tag, {})
    notes = []
    if len(s.qids) < n_qrels:
        notes.append(f"no results for {n_qrels - len(s.qids)} of {n_qrels} judged topics")
    worse, p_best = vs_best
    return RunScore(tag=tag, team=team, contributed=contributed,
                    measures={n: s.aggregate[n] for n in names if n in s.aggregate},
                    judged_at_10=judged[10], judged_at_k=judged, flags=flags, ci=ci, letter=letter, rank=0,
                    robust=robust, worse_than_best=worse, p_vs_best=p_best, topics=len(s.qids), notes=notes)


def _below(value: float, threshold: float) -> str:
    """``value`` with two decimals, or as many more as it takes to show it is below ``threshold``
    (0.7999 is "0.7999", not "0.80 < 0.80")."""
    for digits in range(2, 7):
        text = f"{value:.{digits}f}"
        if float(text) < threshold:
            return text
    return f"{value:.6f}"


class _PerTopic(Mapping):
    """tag -> the run's per-topic frame, built when asked for (a page shows one run's at most)."""

    def __init__(self, scores: dict[str, Scores]) -> None:
        self._scores = scores

    def __getitem__(self, tag: str) -> pd.DataFrame:
        return self._scores[tag].per_topic

    def scores(self, tag: str) -> Scores:
        return self._scores[tag]

    def __iter__(self):
        return iter(self._scores)

    def __len__(self) -> int:
        return len(self._scores)


def _number(value) -> float:
    return float(value) if value is not None and not pd.isna(value) else -np.inf


def _with_rank(run: RunScore, rank: int) -> RunScore:
    return replace(run, rank=rank)

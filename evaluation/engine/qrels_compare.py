"""Two qrels of the same topics compared as a meta-evaluator compares them: how far their labels agree, and
how far the rankings of the same runs they give agree. Django-free.

Labels, on the (topic, document) pairs both judged: Cohen's kappa on relevant / not relevant (a grade >=
``relevant_from`` is relevant) and linearly weighted kappa on the grades, with each side's share of relevant
(the base rates kappa depends on). Rankings, of the runs' mean scores over the topics both qrels judged:
Kendall's tau-b (scipy), tau_AP (Yilmaz, Aslam & Robertson, SIGIR 2008: swaps near the top cost more; A's
ranking is the reference), Kendall's tau of the ten runs A ranks first, and the pairs of runs significantly
different under one qrels (paired test over topics, ``evaluation.engine.significance``) that the other
ranks the other way round ("swapped") or does not tell apart ("tied").
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evaluation.engine.corrections import adjust_p_values
from evaluation.engine.leaderboard_stats import pairwise_t
from evaluation.engine.significance import pairwise_tests
from judging.agreement import cohen_kappa, tau_ap, weighted_kappa

__all__ = ["TOP", "QrelsComparison", "compare_qrels", "label_agreement", "per_topic_table", "ranking_agreement"]

#: the leading runs (by A) whose ranking is compared on its own
TOP = 10


@dataclass
class QrelsComparison:
    labels: dict
    rankings: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"labels": self.labels, "rankings": self.rankings}


def _nan_to_none(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


def label_agreement(a: pd.DataFrame, b: pd.DataFrame, *, relevant_from: int, grades=None) -> dict:
    """Agreement of two qrels frames (qid, docno, rel) on the pairs both judged; kappa is None (not NaN) where
    it is undefined (no shared pair, or one side gives every pair the same label)."""
    key = ["qid", "docno"]
    left = a[[*key, "rel"]].astype({"qid": str, "docno": str})
    right = b[[*key, "rel"]].astype({"qid": str, "docno": str})
    both = left.merge(right, on=key, suffixes=("_a", "_b"))
    ra, rb = both["rel_a"].to_numpy(np.int64), both["rel_b"].to_numpy(np.int64)
    out = {"pairs_a": len(left), "pairs_b": len(right), "shared": len(both),
           "relevant_a": _share(ra >= relevant_from), "relevant_b": _share(rb >= relevant_from),
           "relevant_a_all": _share(left["rel"].to_numpy() >= relevant_from),
           "relevant_b_all": _share(right["rel"].to_numpy() >= relevant_from),
           "kappa_binary": None, "kappa_graded": None}
    if len(both):
        out["kappa_binary"] = _kappa(lambda: cohen_kappa((ra >= relevant_from).astype(int),
                                                         (rb >= relevant_from).astype(int)))
        categories = sorted(set(grades) | set(ra.tolist()) | set(rb.tolist())) if grades is not None else None
        out["kappa_graded"] = _kappa(lambda: weighted_kappa(ra, rb, weights="linear", categories=categories))
    return out


def _share(relevant: np.ndarray) -> float | None:
    return float(relevant.mean()) if len(relevant) else None


def _kappa(compute) -> float | None:
    try:
        return _nan_to_none(compute())
    except (ValueError, ZeroDivisionError):
        return None


def _kendall(x: np.ndarray, y: np.ndarray) -> float | None:
    from scipy import stats

    if len(x) < 2 or (x == x[0]).all() or (y == y[0]).all():
        return None
    return _nan_to_none(float(stats.kendalltau(x, y, variant="b").statistic))


def _order(means: pd.Series) -> list[str]:
    """Runs by mean descending, ties by name."""
    return sorted(means.index, key=lambda run: (-means[run], run))


def _tau_ap(means_a: pd.Series, means_b: pd.Series) -> float | None:
    if len(means_a) < 2 or means_a.nunique() == 1 or means_b.nunique() == 1:
        return None
    return _nan_to_none(tau_ap(means_a.to_dict(), means_b.to_dict()))


def _significant(scores: pd.DataFrame, test: str, correction: str, alpha: float) -> dict[tuple[str, str], bool]:
    """Per pair of columns (in column order), whether it differs significantly; the paired t test vectorised
    (``leaderboard_stats.pairwise_t``, the p-values of ``significance.paired_test``), any other test pair by pair."""
    names = [str(c) for c in scores.columns]
    if test != "t":
        return {(r.run_a, r.run_b): bool(r.p_adjusted < alpha)
                for r in pairwise_tests(scores, test=test, correction=correction)}
    found = pairwise_t(scores.to_numpy(dtype=float))
    adjusted = adjust_p_values(found["p_value"].tolist(), correction)
    return {(names[i], names[j]): bool(p < alpha)
            for i, j, p in zip(found["i"].tolist(), found["j"].tolist(), adjusted, strict=True)}


def _disagreeing_pairs(a: pd.DataFrame, b: pd.DataFrame, test: str, correction: str, alpha: float) -> list[dict]:
    """Pairs significant under one side and swapped or tied under the other (columns in the same order)."""
    sig_a, sig_b = _significant(a, test, correction, alpha), _significant(b, test, correction, alpha)
    mean_a, mean_b = a.mean(), b.mean()
    out = []
    for (x, y), under_a in sig_a.items():
        under_b = sig_b[(x, y)]
        if under_a == under_b and (not under_a or np.sign(mean_a[x] - mean_a[y]) == np.sign(mean_b[x] - mean_b[y])):
            continue
        side, sure, other = ("A", mean_a, mean_b) if under_a else ("B", mean_b, mean_a)
        first, second = (x, y) if sure[x] >= sure[y] else (y, x)
        swapped = other[first] < other[second]
        if under_a and under_b:  # both significant, opposite ways: listed once, under A
            side = "A"
        out.append({"better": first, "worse": second, "significant_under": side,
                    "other": "swapped" if swapped else "tied",
                    "a": [float(mean_a[first]), float(mean_a[second])],
                    "b": [float(mean_b[first]), float(mean_b[second])]})
    return sorted(out, key=lambda p: (p["significant_under"], p["better"], p["worse"]))


def ranking_agreement(a: pd.DataFrame, b: pd.DataFrame, *, top: int = TOP, test: str = "t",
                      correction: str = "holm", alpha: float = 0.05) -> dict:
    """Agreement of the rankings two per-topic score tables give (index topic, one column per run, the same
    runs and topics on both sides; a run without a result for a topic scores 0 there). Figures are None
    where there is nothing to rank (fewer than two runs, or one side ties them all)."""
    runs = sorted(set(a.columns) & set(b.columns))
    topics = a.index.intersection(b.index)
    a, b = a.loc[topics, runs].fillna(0.0), b.loc[topics, runs].fillna(0.0)
    mean_a, mean_b = a.mean(), b.mean()
    order_a, order_b = _order(mean_a), _order(mean_b)
    x, y = mean_a[runs].to_numpy(float), mean_b[runs].to_numpy(float)
    leaders = order_a[:top]
    out = {"runs": len(runs), "topics": len(topics), "tau": _kendall(x, y), "tau_ap": _tau_ap(mean_a, mean_b),
           "tau_top": _kendall(mean_a[leaders].to_numpy(float), mean_b[leaders].to_numpy(float)), "top": top,
           "systems": [{"run": run, "a": float(mean_a[run]), "b": float(mean_b[run]),
                        "rank_a": order_a.index(run) + 1, "rank_b": order_b.index(run) + 1} for run in order_a],
           "pairs": [], "test": test, "correction": correction, "alpha": alpha}
    if len(runs) >= 2 and len(topics) >= 2:
        out["pairs"] = _disagreeing_pairs(a, b, test, correction, alpha)
    return out


def per_topic_table(qrels: pd.DataFrame, runs: dict, measure: str, *, relevant_from: int, topics,
                    max_depth: int | None = 1000) -> pd.DataFrame:
    """Each run's ``measure`` per topic under ``qrels`` (index: ``topics``, one column per run; 0 where a run
    has no result for a topic, as trec_eval's ``-c``), the first value the measure prints."""
    from evaluation.engine import Evaluator, Qrels

    evaluator = Evaluator(Qrels.from_frame(qrels), [measure], relevance_level=relevant_from, max_depth=max_depth)
    results = evaluator.evaluate_many(runs)
    topics = list(topics)
    table = {}
    for tag, result in results.items():
        name = next(iter(result.values), None)
        table[tag] = result.column(name, topics, fill=0.0) if name is not None else np.zeros(len(topics))
    return pd.DataFrame(table, index=pd.Index(topics, name="qid"))


def compare_qrels(a: pd.DataFrame, b: pd.DataFrame, runs: dict, *, measure: str = "map", relevant_from: int = 1,
                  grades=None, max_depth: int | None = 1000, top: int = TOP, alpha: float = 0.05) -> QrelsComparison:
    """Qrels ``a`` and ``b`` (frames qid, docno, rel) compared: their labels, and the rankings of ``runs``
    (``{tag: run frame}``) by ``measure`` over the topics both judged."""
    labels = label_agreement(a, b, relevant_from=relevant_from, grades=grades)
    topics = sorted(set(a["qid"].astype(str)) & set(b["qid"].astype(str)))
    labels["topics"] = len(topics)
    if len(runs) < 2 or not topics:
        return QrelsComparison(labels, {"runs": len(runs), "topics": len(topics), "tau": None, "tau_ap": None,
                                        "tau_top": None, "top": top, "systems": [], "pairs": []})
    shared = set(topics)
    ta = per_topic_table(a[a["qid"].astype(str).isin(shared)], runs, measure, relevant_from=relevant_from,
                         topics=topics, max_depth=max_depth)
    tb = per_topic_table(b[b["qid"].astype(str).isin(shared)], runs, measure, relevant_from=relevant_from,
                         topics=topics, max_depth=max_depth)
    rankings = ranking_agreement(ta, tb, top=top, alpha=alpha)
    rankings["measure"] = measure
    return QrelsComparison(labels, rankings)

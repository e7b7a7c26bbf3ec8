"""Calibration of a machine judge's scores on the human judgments, and its agreement with them. Django-free.

A raw score (a cosine similarity) means different things for different topics, so each score is read
beside its z-score within the topic's pool. A logistic regression on z gives the probability that a
document is relevant; the grade thresholds on that probability are fitted on the same human judgments: the
relevant/not-relevant cut where it agrees best with the humans (Cohen's kappa), the higher grades by the
humans' share of each grade among the relevant. :func:`cross_validate` fits on some topics and predicts the
others, so agreement is always measured on topics the calibration did not see.

Example::

    cal = fit(raw=[.9, .5, .8, .4], z=[1, -1, 1, -1], grades=[1, 0, 1, 0], scale=(0, 1), relevant_from=1)
    cal.grade(cal.probability([.85], [1.0]))   # -> array([1])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from judging.agreement import cohen_kappa, weighted_kappa

__all__ = ["Calibration", "agreement", "auc", "cross_validate", "default_calibration", "fit", "routed_kappa",
           "topic_z"]


def topic_z(scores: Sequence[float], topics: Sequence) -> np.ndarray:
    """Each score's z-score among the scores of its topic (0 for a topic with one score or no spread)."""
    frame = pd.DataFrame({"s": np.asarray(scores, dtype=float), "t": list(topics)})
    grouped = frame.groupby("t", sort=False)["s"]
    mean, std = grouped.transform("mean"), grouped.transform("std").fillna(0.0)
    return ((frame["s"] - mean) / std.where(std > 1e-9, 1.0)).to_numpy()


def _features(raw, z) -> np.ndarray:
    """The z-score alone: the probability then ranks pairs as the z-scores do (measured on the demo collection,
    adding the raw cosine lowered the held-out AUC), and the raw score stays in the provenance."""
    z = np.asarray(z, dtype=float)
    return np.column_stack([np.ones(len(z)), z])


@dataclass(frozen=True)
class Calibration:
    """Scores -> probability of relevance -> grade. ``thresholds``: for each grade above the lowest, the
    probability from which a document gets at least that grade (ascending)."""

    coef: tuple[float, ...]
    grades: tuple[int, ...]
    thresholds: tuple[float, ...]
    relevant_from: int
    trained_on: int = 0

    def probability(self, raw, z) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-_features(raw, z) @ np.asarray(self.coef)))

    def grade(self, probability) -> np.ndarray:
        p = np.asarray(probability, dtype=float)
        return np.asarray(self.grades)[np.searchsorted(np.asarray(self.thresholds), p, side="right")]

    @property
    def relevant_threshold(self) -> float:
        """The probability from which a document counts as relevant."""
        return self.thresholds[list(self.grades).index(self.relevant_from) - 1] if self.relevant_from in self.grades[1:] \
            else 0.5

    def uncertainty(self, probability) -> np.ndarray:
        """How unsure the judge is (1 at the relevance cut, falling to 0 away from it): routing sends
        humans the highest first."""
        return 1.0 - np.abs(np.asarray(probability, dtype=float) - self.relevant_threshold) * 2

    def as_dict(self) -> dict:
        return {"coef": list(self.coef), "grades": list(self.grades), "thresholds": list(self.thresholds),
                "relevant_from": self.relevant_from, "trained_on": self.trained_on}


def default_calibration(scale: Sequence[int], relevant_from: int) -> Calibration:
    """Before any human judgment: relevant from a z-score of 1 in the topic's pool, higher grades higher up."""
    grades = tuple(sorted(scale))
    above = [g for g in grades[1:]]
    thresholds = tuple(0.5 + 0.4 * (i / max(len(above), 1)) if g > relevant_from else (0.5 if g == relevant_from
                       else 0.3) for i, g in enumerate(above))
    return Calibration(coef=(-3.0, 3.0), grades=grades, thresholds=tuple(sorted(thresholds)),
                       relevant_from=relevant_from)


def _logistic(x: np.ndarray, y: np.ndarray, l2: float = 1e-2, steps: int = 50) -> np.ndarray:
    """Logistic regression by Newton's method with a small ridge (the intercept too: two classes always)."""
    w = np.zeros(x.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-x @ w))
        gradient = x.T @ (p - y) + l2 * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def fit(*, raw, z, grades, scale: Sequence[int], relevant_from: int) -> Calibration:
    """The calibration that best matches these human ``grades`` (see the module's docstring)."""
    grades_arr = np.asarray(grades, dtype=int)
    relevant = (grades_arr >= relevant_from).astype(float)
    scale = tuple(sorted(scale))
    if len(grades_arr) < 4 or relevant.min() == relevant.max():
        base = default_calibration(scale, relevant_from)
        return Calibration(base.coef, base.grades, base.thresholds, relevant_from, len(grades_arr))
    w = _logistic(_features(raw, z), relevant)
    p = 1.0 / (1.0 + np.exp(-_features(raw, z) @ w))
    # the relevance cut: the probability where binary agreement with the humans is best
    candidates = np.unique(np.quantile(p, np.linspace(0.02, 0.98, 97)))
    kappas = [_binary_kappa(relevant.astype(bool), p >= c) for c in candidates]
    cut = float(candidates[int(np.nanargmax(kappas))]) if len(candidates) else 0.5
    thresholds = []
    for g in scale[1:]:
        if g < relevant_from:  # grades below the cut share the space under it by the humans' proportions
            share = float(np.mean(grades_arr[~relevant.astype(bool)] >= g)) if (~relevant.astype(bool)).any() else 0
            below = p[p < cut]
            thresholds.append(float(np.quantile(below, 1 - share)) if len(below) else cut)
        elif g == relevant_from:
            thresholds.append(cut)
        else:  # higher grades: the humans' share of this grade or above among the relevant
            share = float(np.mean(grades_arr[relevant.astype(bool)] >= g))
            above = p[p >= cut]
            thresholds.append(float(np.quantile(above, 1 - share)) if len(above) and share > 0 else 1.0 + 1e-9)
    return Calibration(tuple(float(v) for v in w), scale, tuple(np.maximum.accumulate(thresholds).tolist()),
                       relevant_from, len(grades_arr))


def _binary_kappa(a: np.ndarray, b: np.ndarray) -> float:
    if a.all() or (~a).all():
        return float("nan")
    return cohen_kappa(a.astype(int), b.astype(int))


def cross_validate(frame: pd.DataFrame, *, scale: Sequence[int], relevant_from: int, folds: int = 2,
                   train_topics: Sequence[str] | None = None) -> pd.DataFrame:
    """Held-out predictions. ``frame`` has qid, raw, z and the human ``grade``; topics are split into
    ``folds`` groups (in sorted order, alternately), each predicted by a calibration fitted on the others;
    with ``train_topics``, one split: fitted on those, predicted on the rest. Adds ``probability`` and
    ``predicted`` (a grade), and keeps only held-out rows. Rows without a human grade (NaN) are predicted, never
    fitted on."""
    topics = sorted(frame["qid"].astype(str).unique(), key=lambda q: (len(q), q))
    if train_topics is not None:
        splits = [(set(map(str, train_topics)), set(topics) - set(map(str, train_topics)))]
    else:
        groups = [set(topics[i::folds]) for i in range(folds)]
        splits = [(set(topics) - g, g) for g in groups if g]
    parts = []
    qids = frame["qid"].astype(str)
    for train, test in splits:
        seen, held = frame[qids.isin(train) & frame["grade"].notna()], frame[qids.isin(test)].copy()
        cal = fit(raw=seen["raw"], z=seen["z"], grades=seen["grade"].astype(int), scale=scale,
                  relevant_from=relevant_from)
        held["probability"] = cal.probability(held["raw"], held["z"])
        held["predicted"] = cal.grade(held["probability"])
        held["uncertainty"] = cal.uncertainty(held["probability"])
        parts.append(held)
    return pd.concat(parts).sort_index() if parts else frame.assign(probability=[], predicted=[], uncertainty=[])


def auc(relevant: Sequence[bool], probability: Sequence[float]) -> float:
    """Area under the ROC curve (Mann-Whitney U / (positives * negatives), ties count half); nan without
    both classes."""
    y = np.asarray(relevant, dtype=bool)
    p = np.asarray(probability, dtype=float)
    positives, negatives = int(y.sum()), int((~y).sum())
    if not positives or not negatives:
        return float("nan")
    ranks = pd.Series(p).rank(method="average").to_numpy()
    return float((ranks[y].sum() - positives * (positives + 1) / 2) / (positives * negatives))


def agreement(human: Sequence[int], machine: Sequence[int], probability: Sequence[float], *,
              scale: Sequence[int], relevant_from: int) -> dict:
    """Cohen's kappa on relevant/not (binary) and weighted (linear) on the grades, AUC of the probability,
    and the confusion matrix (rows: human grade, columns: machine grade)."""
    h, m = np.asarray(human, dtype=int), np.asarray(machine, dtype=int)
    scale = sorted(scale)
    confusion = pd.crosstab(pd.Categorical(h, categories=scale), pd.Categorical(m, categories=scale),
                            dropna=False).to_numpy().tolist() if len(h) else [[0] * len(scale) for _ in scale]
    return {
        "pairs": len(h),
        "kappa_binary": _binary_kappa(h >= relevant_from, m >= relevant_from) if len(h) else float("nan"),
        "kappa_weighted": weighted_kappa(h, m, weights="linear", categories=scale) if len(h) else float("nan"),
        "auc": auc(h >= relevant_from, probability),
        "confusion": confusion, "grades": scale,
    }


def routed_kappa(human: np.ndarray, machine: np.ndarray, order: np.ndarray, share: float, *,
                 relevant_from: int) -> float:
    """Binary kappa against the humans of qrels where the first ``share`` of the pairs in ``order`` take the
    human grade and the rest the machine's: what routing that share of the work to humans buys."""
    mixed = np.asarray(machine, dtype=int).copy()
    chosen = np.asarray(order)[: int(round(share * len(mixed)))]
    mixed[chosen] = np.asarray(human, dtype=int)[chosen]
    return _binary_kappa(np.asarray(human) >= relevant_from, mixed >= relevant_from)

"""Hybrid judging, Django-free: a machine judge's labels calibrated per topic on the human judgments so far,
the human budget routed to the pairs whose calibrated label is least sure, and the hybrid labels (the human
grade where there is one, else the calibrated machine label).

The machine's signal for a pair is a *margin*, 0 at the machine's own relevance cut (:func:`margin_of`: the
log-odds of its probability where it gave one, else its grade's distance from the collection's first relevant
grade). Per topic, ``P(human says relevant | margin)`` is a logistic curve ``a + b * margin``; its two
coefficients are the maximum a posteriori fit on that topic's human judgments under a Gaussian prior centred on
the curve fitted on every topic (the slope kept positive) (scikit-learn's logistic regression), so a topic with few or one-sided human
judgments keeps the collection's curve and a topic with many gets its own (scipy's TNC). Fitting costs
milliseconds: it is redone whenever it is read (routing, the ``hybrid`` qrels policy, each round of a simulation).

Routing by expected gain: asking a human about a pair corrects the calibrated label with probability
``min(p, 1 - p)`` (the chance that it is wrong), so the router asks the highest first, and draws a stated
``audit_share`` of each batch at random so that agreement stays measurable on pairs of every kind.

Example::

    cal = fit_topics(qids=["1"] * 6, margin=[-2, -1, 0, 1, 2, 3], relevant=[0, 0, 0, 1, 1, 1])
    cal.probability(["1", "2"], [2.5, 2.5])     # topic 2 has no human judgment: the collection's curve
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

# SciPy and scikit-learn are imported where a calibration is fitted or applied, not with this module: the machine
# judges' registry imports it at every start-up (every command, every web worker), and they cost ~1.5 CPU s there

__all__ = ["DEFAULT_COEF", "PRIOR_STRENGTH", "TopicCalibration", "fit_topics", "hybrid_grades", "hybrid_qrels", "margin_of",
           "route_next"]

#: before any human judgment (or while they are all one class): the machine's own cut, fairly sure of itself
DEFAULT_COEF = (0.0, 2.0)
#: the Gaussian prior's precision pulling a topic's intercept and slope towards the collection's curve: a
#: topic's own cut moves readily (judges over- or under-call whole topics), its slope far less (few judgments
#: near the cut say little about it)
PRIOR_STRENGTH = (2.0, 20.0)
#: the least slope a topic's curve may have: a higher machine margin never means a lower probability
MIN_SLOPE = 0.05


def margin_of(grades: Sequence[float], probabilities: Sequence[float] | None, *, relevant_from: int) -> np.ndarray:
    """The machine's margin per pair: ``logit(probability)`` where one is given (not NaN), else
    ``grade - relevant_from + 0.5`` (a first relevant grade is +0.5, the grade under it -0.5)."""
    margin = np.asarray(grades, dtype=float) - relevant_from + 0.5
    if probabilities is not None:
        p = np.asarray(probabilities, dtype=float)
        given = ~np.isnan(p)
        from scipy.special import logit

        margin[given] = logit(np.clip(p[given], 1e-4, 1 - 1e-4))
    return margin


@dataclass(frozen=True)
class TopicCalibration:
    """Per topic (a, b) of ``P(relevant) = expit(a + b * margin)``; topics without their own use ``overall``."""

    overall: tuple[float, float] = DEFAULT_COEF
    topics: dict = field(default_factory=dict)
    trained_on: int = 0

    def coefficients(self, qids: Sequence) -> np.ndarray:
        keys = pd.Series(qids, dtype=object).astype(str)
        a = keys.map({q: c[0] for q, c in self.topics.items()}).fillna(self.overall[0]).to_numpy(float)
        b = keys.map({q: c[1] for q, c in self.topics.items()}).fillna(self.overall[1]).to_numpy(float)
        return np.column_stack([a, b])

    def probability(self, qids: Sequence, margin: Sequence[float]) -> np.ndarray:
        from scipy.special import expit

        coef = self.coefficients(qids)
        return expit(coef[:, 0] + coef[:, 1] * np.asarray(margin, dtype=float))

    def as_dict(self) -> dict:
        return {"overall": list(self.overall), "topics_fitted": len(self.topics), "trained_on": self.trained_on,
                "prior_strength": list(PRIOR_STRENGTH)}


def _overall(margin: np.ndarray, relevant: np.ndarray) -> tuple[float, float]:
    if len(relevant) < 2 or relevant.min() == relevant.max():
        return DEFAULT_COEF
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=10.0).fit(margin[:, None], relevant)
    return float(model.intercept_[0]), max(float(model.coef_[0, 0]), MIN_SLOPE)


def _topic(margin: np.ndarray, relevant: np.ndarray, prior: np.ndarray) -> tuple[float, float]:
    """The MAP coefficients of one topic under the Gaussian prior centred on ``prior``."""
    from scipy.optimize import minimize
    from scipy.special import expit

    x = np.column_stack([np.ones(len(margin)), margin])

    def loss(w):
        z = x @ w
        p = expit(z)
        nll = np.sum(np.logaddexp(0, z) - relevant * z)
        gap = w - prior
        return nll + 0.5 * gap @ (strength * gap), x.T @ (p - relevant) + strength * gap

    strength = np.asarray(PRIOR_STRENGTH)
    start = np.array([prior[0], max(prior[1], MIN_SLOPE)])
    found = minimize(loss, start, jac=True, method="TNC", bounds=[(None, None), (MIN_SLOPE, None)])
    return float(found.x[0]), float(found.x[1])


def fit_topics(*, qids: Sequence, margin: Sequence[float], relevant: Sequence[bool]) -> TopicCalibration:
    """The per-topic calibration learned from these human judgments (``relevant``) of pairs with the machine's
    ``margin`` (see the module's docstring)."""
    margin_arr, y = np.asarray(margin, dtype=float), np.asarray(relevant, dtype=float)
    overall = _overall(margin_arr, y)
    prior = np.asarray(overall)
    keys = pd.Series(qids, dtype=object).astype(str).to_numpy()
    topics = {}
    for qid in pd.unique(keys):
        mine = keys == qid
        topics[qid] = _topic(margin_arr[mine], y[mine], prior)
    return TopicCalibration(overall=overall, topics=topics, trained_on=len(y))


def hybrid_grades(machine_grades: Sequence[int], probability: Sequence[float], *, grades: Sequence[int],
                  relevant_from: int) -> np.ndarray:
    """The calibrated machine label: relevant where the calibrated probability is at least 0.5, keeping the
    machine's grade where it is on the same side, else the nearest grade on that side of the cut."""
    m = np.asarray(machine_grades, dtype=int)
    scale = sorted(grades)
    below = [g for g in scale if g < relevant_from]
    top_below = max(below) if below else min(scale)
    relevant = np.asarray(probability, dtype=float) >= 0.5
    return np.where(relevant, np.maximum(m, relevant_from), np.minimum(m, top_below))


def route_next(calibration: TopicCalibration, qids: Sequence, margin: Sequence[float], unasked: np.ndarray, count: int,
               *, audit_share: float, rng: np.random.Generator) -> np.ndarray:
    """Positions of the next ``count`` pairs to ask among the ``unasked`` ones (a boolean mask): an
    ``audit_share`` of them at random, the rest those whose calibrated label is most likely wrong."""
    candidates = np.flatnonzero(unasked)
    count = min(count, len(candidates))
    if count <= 0:
        return candidates[:0]
    audit = rng.choice(candidates, size=int(round(audit_share * count)), replace=False)
    rest = np.setdiff1d(candidates, audit)
    p = calibration.probability(np.asarray(qids, dtype=object)[rest], np.asarray(margin, dtype=float)[rest])
    gain = np.minimum(p, 1 - p) + rng.random(len(rest)) * 1e-9  # ties broken at random
    chosen = rest[np.argsort(-gain, kind="stable")[: count - len(audit)]]
    return np.concatenate([audit, chosen])


def hybrid_qrels(human: pd.DataFrame, machine: pd.DataFrame, *, grades: Sequence[int], relevant_from: int
                 ) -> tuple[pd.DataFrame, TopicCalibration]:
    """The ``hybrid`` qrels (qid, docno, rel, and the calibrated ``probability`` of relevance, NaN for a human
    grade; unsorted): every human grade, and for each pair only a machine labelled, its calibrated label. ``machine`` has qid, docno, rel (the machine grade) and margin; the
    calibration is fitted on the pairs both graded."""
    key = ["qid", "docno"]
    human = human.astype({"qid": str, "docno": str})
    both = machine.astype({"qid": str, "docno": str}).merge(human.rename(columns={"rel": "human"}), on=key, how="left")
    seen = both["human"].notna().to_numpy()
    calibration = fit_topics(qids=both["qid"][seen], margin=both["margin"][seen],
                             relevant=both["human"][seen].to_numpy(float) >= relevant_from)
    rest = both[~seen]
    labels = hybrid_grades(rest["rel"].to_numpy(int), calibration.probability(rest["qid"], rest["margin"]),
                           grades=grades, relevant_from=relevant_from)
    probability = calibration.probability(rest["qid"], rest["margin"])
    fill = pd.DataFrame({"qid": rest["qid"].to_numpy(), "docno": rest["docno"].to_numpy(), "rel": labels,
                         "probability": probability})
    return pd.concat([human[["qid", "docno", "rel"]].assign(probability=np.nan), fill], ignore_index=True), calibration

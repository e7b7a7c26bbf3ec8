"""When may a topic's active-learning review stop? Stopping rules that say what recall they claim. Django-free.

A *review* is the sequence of documents the classifier put in front of the assessor, with their
judgments. Some rules also use a *side sample*: documents drawn uniformly at random from the collection
(without replacement, seeded per topic) and judged apart from the review; it never trains the classifier.
Each rule returns a :class:`StopDecision` per topic: stopped or not, why, and the recall it claims with
the confidence of that claim (None where the rule makes no statistical claim).

* :class:`Knee` -- G. V. Cormack and M. R. Grossman, "Engineering quality and reliability in
  technology-assisted review", SIGIR 2016, Section 4: the knee of the gain curve (relevant found against
  documents reviewed) is the point farthest from the straight line through (0, 0) and (s, rel(s)); the
  slope ratio there is rho = (rel(i) / i) / ((rel(s) - rel(i) + 1) / (s - i)). Stop once s >= 150 and
  rho >= 156 - min(rel(s), 150). No recall is claimed (the paper measured recall >= 0.7 most of the time).
* :class:`Target` -- the same paper's target method, with the sample size of D. D. Lewis, E. Yang and
  O. Frieder, "Certifying one-phase technology-assisted reviews", CIKM 2021: draw random documents until
  K of them are relevant (the target set), then review until the review has found all K. The position of
  the K target documents among all relevant ones is uniform, so the recall when the last is found is the
  largest of K uniforms and exceeds t with probability 1 - t^K: K = ceil(log(1 - conf) / log t)
  (t = 0.8, conf = 0.95: K = 14).
* :class:`QBCB` -- Lewis, Yang and Frieder's Quantile Binomial Coefficient Bound: a fixed-size sample
  holds r relevant documents; stop once the review has found j of them, j the smallest integer with
  P(Binomial(r, t) < j) >= conf (the recall at which the j-th is found is Beta(j, r - j + 1)). When even
  j = r does not reach conf the sample is too small to certify t: the rule never stops and says so.

Recall estimates (any rule with a side sample): the review's recall is the share of the sample's
relevant documents it has found, with a Clopper-Pearson interval; the number of relevant documents is
N * r / n with the Clopper-Pearson interval of r / n, never below what has been found.

>>> Target(0.8).target_size
14
>>> qbcb_threshold(30, 0.8, 0.95)   # 30 relevant in the sample: stop at the 28th
28
>>> qbcb_threshold(10, 0.8, 0.95) is None
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy comes with the first rule checked, not with the pool registry every start-up reads
    import numpy as np

__all__ = ["QBCB", "RULES", "Knee", "StopDecision", "StopRule", "Target", "clopper_pearson", "knee_point",
           "make_rule", "qbcb_threshold", "recall_estimate", "relevant_estimate"]


@dataclass(frozen=True)
class StopDecision:
    """A topic's stopping state: ``at`` = review judgments when it stopped (None while it goes on)."""

    stopped: bool
    rule: str
    reason: str
    at: int | None = None
    claimed_recall: float | None = None
    confidence: float | None = None

    def as_dict(self) -> dict:
        return {"stopped": self.stopped, "rule": self.rule, "reason": self.reason, "at": self.at,
                "claimed_recall": self.claimed_recall, "confidence": self.confidence}


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact binomial interval of a proportion k / n (C. J. Clopper and E. S. Pearson, Biometrika 1934).

    >>> [round(x, 4) for x in clopper_pearson(0, 10)]
    [0.0, 0.3085]
    """
    if n <= 0:
        return 0.0, 1.0
    a = 1.0 - confidence
    from scipy.stats import beta  # scipy.stats weighs 50 MB: imported when an interval is asked for

    low = 0.0 if k <= 0 else float(beta.ppf(a / 2, k, n - k + 1))
    high = 1.0 if k >= n else float(beta.ppf(1 - a / 2, k + 1, n - k))
    return low, high


def recall_estimate(found_in_sample: int, sample_relevant: int, confidence: float = 0.95) -> dict | None:
    """The review's recall from the side sample: found / relevant in the sample, with its interval."""
    if sample_relevant <= 0:
        return None
    low, high = clopper_pearson(found_in_sample, sample_relevant, confidence)
    return {"estimate": found_in_sample / sample_relevant, "low": low, "high": high, "confidence": confidence}


def relevant_estimate(sample_relevant: int, sample_size: int, population: int, found: int,
                      confidence: float = 0.95) -> dict | None:
    """Relevant documents of the topic: population * r / n, interval from r / n, at least ``found``."""
    if sample_size <= 0:
        return None
    low, high = clopper_pearson(sample_relevant, sample_size, confidence)
    point = population * sample_relevant / sample_size
    return {"estimate": max(point, found), "low": max(low * population, found),
            "high": max(high * population, found), "confidence": confidence}


def knee_point(gain: np.ndarray) -> int:
    """1-based rank i of the knee of ``gain`` (cumulative relevant found after 1..s documents): the point
    farthest above the line from (0, 0) to (s, gain[s-1]).

    >>> import numpy as np
    >>> knee_point(np.array([1, 2, 3, 3, 3, 3]))
    3
    """
    import numpy as np

    s = len(gain)
    ranks = np.arange(1, s + 1, dtype=np.float64)
    distance = gain * s - ranks * gain[-1]  # proportional to the distance above the chord
    return int(np.argmax(distance)) + 1


class StopRule:
    """Base: a rule sees the review's judgments (in order) and, if it samples, the side sample."""

    name = "none"
    samples = False

    def wants_sample(self, sampled: int, positives: int, population: int) -> bool:
        """Whether the side sample (``sampled`` documents so far, ``positives`` of them relevant, drawn from
        ``population``) needs another document."""
        return False

    def check(self, review: Sequence[bool], sample_positives: int, sample_found: int) -> StopDecision:
        """``sample_positives``: relevant documents in the side sample; ``sample_found``: how many of them
        the review has reached."""
        return StopDecision(False, self.name, "no stopping rule")


class Knee(StopRule):
    name = "knee"

    def __init__(self, min_reviewed: int = 150):
        self.min_reviewed = min_reviewed

    def check(self, review, sample_positives=0, sample_found=0) -> StopDecision:
        s = len(review)
        if s < self.min_reviewed:
            return StopDecision(False, self.name, f"fewer than {self.min_reviewed} documents reviewed")
        import numpy as np

        gain = np.cumsum(np.asarray(review, dtype=np.float64))
        i = knee_point(gain)
        rel_i, rel_s = gain[i - 1], gain[-1]
        rho = (rel_i / i) / ((rel_s - rel_i + 1.0) / max(s - i, 1))
        needed = 156 - min(rel_s, 150)
        if rho >= needed:
            return StopDecision(True, self.name, f"knee at {i}: slope ratio {rho:.1f} >= {needed:.0f}", s)
        return StopDecision(False, self.name, f"knee at {i}: slope ratio {rho:.1f} < {needed:.0f}")


class _Sampled(StopRule):
    samples = True

    def __init__(self, target_recall: float = 0.8, confidence: float = 0.95):
        if not 0 < target_recall < 1:
            raise ValueError(f"target recall must be between 0 and 1 (exclusive), not {target_recall}")
        if not 0 < confidence < 1:
            raise ValueError(f"confidence must be between 0 and 1 (exclusive), not {confidence}")
        self.target_recall = target_recall
        self.confidence = confidence

    def _stop(self, review, reason: str) -> StopDecision:
        return StopDecision(True, self.name, reason, len(review), self.target_recall, self.confidence)


class Target(_Sampled):
    name = "target"

    @property
    def target_size(self) -> int:
        return math.ceil(math.log(1 - self.confidence) / math.log(self.target_recall) - 1e-12)

    def wants_sample(self, sampled, positives, population) -> bool:
        return positives < self.target_size and sampled < population

    def check(self, review, sample_positives, sample_found) -> StopDecision:
        k = self.target_size
        if sample_positives < k:
            return StopDecision(False, self.name, f"target set incomplete: {sample_positives} of {k} relevant "
                                                  "documents drawn")
        if sample_found >= k:
            return self._stop(review, f"the review found all {k} target documents")
        return StopDecision(False, self.name, f"the review found {sample_found} of {k} target documents")


def qbcb_threshold(positives: int, target_recall: float, confidence: float) -> int | None:
    """Smallest j with P(Binomial(positives, target_recall) < j) >= confidence, None if none <= positives."""
    from scipy.stats import binom

    for j in range(1, positives + 1):
        if binom.cdf(j - 1, positives, target_recall) >= confidence:
            return j
    return None


class QBCB(_Sampled):
    name = "qbcb"

    def __init__(self, target_recall: float = 0.8, confidence: float = 0.95, sample_size: int = 1000):
        super().__init__(target_recall, confidence)
        if sample_size < 1:
            raise ValueError(f"the QBCB sample needs at least one document, not {sample_size}")
        self.sample_size = sample_size

    def wants_sample(self, sampled, positives, population) -> bool:
        return sampled < min(self.sample_size, population)

    def check(self, review, sample_positives, sample_found) -> StopDecision:
        j = qbcb_threshold(sample_positives, self.target_recall, self.confidence)
        if j is None:
            return StopDecision(False, self.name, f"the sample holds {sample_positives} relevant documents: too "
                                f"few to certify recall {self.target_recall} at {self.confidence}")
        if sample_found >= j:
            return self._stop(review, f"the review found {sample_found} of the sample's {sample_positives} "
                                      f"relevant documents (needs {j})")
        return StopDecision(False, self.name, f"the review found {sample_found} of the sample's "
                                              f"{sample_positives} relevant documents (needs {j})")


RULES = ("knee", "target", "qbcb")


def make_rule(name: str | None, *, target_recall: float = 0.8, confidence: float = 0.95,
              sample_size: int = 1000) -> StopRule:
    """The rule called ``name`` (None: never stop before the budget)."""
    if name is None or name == "none":
        return StopRule()
    if name == "knee":
        return Knee()
    if name == "target":
        return Target(target_recall, confidence)
    if name == "qbcb":
        return QBCB(target_recall, confidence, sample_size)
    raise ValueError(f"unknown stopping rule {name!r} ({', '.join(RULES)})")

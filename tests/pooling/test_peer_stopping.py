"""The knee rule against a peer implementation: tarexp 0.1.4's KneeStoppingRule (test-only dependency).

tarexp (E. Yang, D. D. Lewis and O. Frieder's TAR experiment framework) states the same rule of Cormack
and Grossman (SIGIR 2016) differently, in two ways that both make it stop sooner:

* it takes the largest slope ratio over every rank i, where the paper (and :class:`Knee`) takes the ratio
  at the knee, the rank farthest above the chord of the gain curve;
* its tail rate divides by s - i + 1 documents where the paper divides by s - i;
* it has no "at least 150 documents reviewed" condition (which rarely matters: rho <= s - i).

So, one document per round, wherever the workbench's rule stops tarexp's stops too; the converse fails
exactly where those differences matter, which the second test shows on a worked case.
"""

from __future__ import annotations

import numpy as np
import pytest

from pooling.strategies.stopping import Knee

tarexp_stopping = pytest.importorskip("tarexp.component.stopping")
tarexp_ledger = pytest.importorskip("tarexp.ledger")


def tarexp_stops(review: list[bool]) -> bool:
    ledger = tarexp_ledger.Ledger(len(review) + 1)
    for i, relevant in enumerate(review):
        ledger.annotate({i: int(relevant)})
    ledger.annotate({})  # tarexp counts the rounds before the current one
    return bool(tarexp_stopping.KneeStoppingRule().checkStopping(ledger))


def reviews(count: int, seed: int = 0):
    """Gain curves shaped like active learning's: relevant documents dense at first, then rarer."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        s = int(rng.integers(150, 700))
        rate = rng.uniform(0.3, 0.9) * np.exp(-np.arange(s) / rng.uniform(5, 60))
        yield list(rng.random(s) < rate)


def test_where_the_workbench_knee_rule_stops_tarexp_stops_too():
    stops = 0
    for review in reviews(300):
        if Knee().check(review).stopped:
            stops += 1
            assert tarexp_stops(review)
    assert stops > 20  # the property was exercised on reviews that do stop


def test_the_two_differ_by_one_document_on_a_review_that_has_run_dry():
    # 10 relevant, then only non-relevant: the knee is at 10 and the rule needs rho >= 156 - 10 = 146.
    # The paper: rho = (10 / 10) / (1 / (s - 10)) = s - 10, so it stops at s = 156; tarexp's
    # (10 / 10) / (1 / (s - 10 + 1)) = s - 9 reaches 146 at s = 155.
    review = [True] * 10 + [False] * 145
    assert tarexp_stops(review) and not Knee().check(review).stopped
    assert not tarexp_stops(review[:-1])
    assert Knee().check(review + [False]).stopped

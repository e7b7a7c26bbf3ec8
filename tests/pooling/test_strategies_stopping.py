"""Stopping rules and recall estimates: the numbers each rule states, checked against their definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from pooling.strategies.stopping import (
    QBCB,
    Knee,
    Target,
    clopper_pearson,
    knee_point,
    make_rule,
    qbcb_threshold,
    recall_estimate,
    relevant_estimate,
)


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (7, 200)])
def test_clopper_pearson_matches_scipys_exact_binomial_interval(k, n):
    expected = binomtest(k, n).proportion_ci(0.95, method="exact")
    low, high = clopper_pearson(k, n)
    assert low == pytest.approx(expected.low, abs=1e-9)
    assert high == pytest.approx(expected.high, abs=1e-9)


@pytest.mark.parametrize(("target", "confidence"), [(0.7, 0.95), (0.8, 0.95), (0.9, 0.9)])
def test_the_target_set_is_the_smallest_whose_last_member_certifies_the_target(target, confidence):
    k = Target(target, confidence).target_size
    assert 1 - target ** k >= confidence > 1 - target ** (k - 1)


def test_the_target_sizes_of_the_papers():
    assert Target(0.7, 0.95).target_size == 9  # Cormack & Grossman took 10; 1 - 0.7**9 = 0.9596 already
    assert Target(0.8, 0.95).target_size == 14


@pytest.mark.parametrize("positives", [14, 20, 50, 100])
def test_qbcb_stops_at_the_first_order_statistic_that_certifies_the_target(positives):
    j = qbcb_threshold(positives, 0.8, 0.95)

    def certainty(j):  # P(recall when the j-th sample positive is found >= 0.8) = P(Bin(r, 0.8) < j)
        return sum(math.comb(positives, i) * 0.8 ** i * 0.2 ** (positives - i) for i in range(j))

    assert certainty(j) >= 0.95 > certainty(j - 1)


def test_qbcb_refuses_to_certify_with_too_few_sample_positives():
    rule = QBCB(0.8, 0.95, sample_size=100)
    decision = rule.check([True] * 50, sample_positives=13, sample_found=13)
    assert not decision.stopped
    assert "too few" in decision.reason
    assert rule.check([True] * 50, 14, 14).stopped  # with 14 the rule is the target method's


def test_the_stated_recall_holds_at_the_stated_confidence_in_simulation():
    """1,000 reviews, each finding the relevant documents in random order: QBCB's recall when it stops is
    below the target in at most 5% of them (plus sampling noise)."""
    rng = np.random.default_rng(1)
    misses, rule = 0, QBCB(0.8, 0.95, sample_size=400)
    for _ in range(1000):
        relevant = 200
        in_sample = rng.random(relevant) < 0.1  # which relevant documents a 10% sample holds
        j = qbcb_threshold(int(in_sample.sum()), 0.8, 0.95)
        if j is None:
            continue
        order = rng.permutation(relevant)
        found_sample = np.cumsum(in_sample[order])
        stop = int(np.argmax(found_sample >= j)) + 1
        assert rule.check([True] * stop, int(in_sample.sum()), int(found_sample[stop - 1])).stopped
        misses += stop / relevant < 0.8
    assert misses / 1000 <= 0.05 + 0.02


def test_the_knee_is_where_the_gain_curve_bends():
    gain = np.cumsum([1] * 10 + [0] * 90)
    assert knee_point(gain) == 10


def test_the_knee_rule_waits_for_150_documents():
    assert not Knee().check([True] * 10 + [False] * 100).stopped
    decision = Knee().check([True] * 10 + [False] * 146)
    # rho = (10/10) / (1/146) = 146 >= 156 - 10
    assert decision.stopped and decision.at == 156


def test_recall_and_relevant_estimates_carry_their_intervals():
    est = recall_estimate(8, 10)
    assert est["estimate"] == 0.8
    assert (est["low"], est["high"]) == pytest.approx(clopper_pearson(8, 10))
    assert recall_estimate(0, 0) is None
    rel = relevant_estimate(sample_relevant=5, sample_size=100, population=10_000, found=700)
    assert rel["estimate"] == 700  # the sample says 500, but 700 have been found
    assert rel["high"] == pytest.approx(clopper_pearson(5, 100)[1] * 10_000)


def test_rules_by_name_refuse_bad_values():
    assert make_rule(None).check([], 0, 0).stopped is False
    with pytest.raises(ValueError, match="target recall"):
        make_rule("target", target_recall=1.5)
    with pytest.raises(ValueError, match="unknown stopping rule"):
        make_rule("elbow")

"""``rbp_graded``: rank-biased precision with gains grade / max grade of the topic, the way NIST's trec_eval
(``m_rbp.c``) computes the ``rbp_p5`` TREC reports. Every expected value is worked out by hand below."""

from __future__ import annotations

import random

import pytest

from evaluation.engine import MeasureError
from tests.engine.conftest import QRELS_A, RUN_A, evaluate

#: topic 1, grades 0..2: a=2, b=0, c=1, u=-1 (in the qrels, not judged); x is not in the qrels at all
QRELS_GRADED = [("1", "a", 2), ("1", "b", 0), ("1", "c", 1), ("1", "u", -1)]
#: ranked a b c x u: gains 2/2, 0, 1/2, 0, 0
RUN_GRADED = [("1", "a", 5.0), ("1", "b", 4.0), ("1", "c", 3.0), ("1", "x", 2.0), ("1", "u", 1.0)]


def test_gain_is_the_grade_over_the_topics_highest_grade():
    result = evaluate(QRELS_GRADED, RUN_GRADED, ["rbp_graded.p=0.5"])
    # (1 - p) (g1 + g2 p + g3 p^2 + ...) = 0.5 (1 + 0 + 0.5 * 0.25) = 0.5625
    assert result.aggregate["rbp_graded_p=0.5"] == pytest.approx(0.5625)
    assert result.per_topic.loc["1", "rbp_graded_p=0.5"] == pytest.approx(0.5625)


def test_binary_rbp_counts_the_grade_1_document_as_fully_relevant_where_graded_rbp_gives_half():
    agg = evaluate(QRELS_GRADED, RUN_GRADED, ["rbp.p=0.5", "rbp_graded.p=0.5"]).aggregate
    assert agg["rbp_p=0.5"] == pytest.approx(0.5 * (1 + 0.25))
    assert agg["rbp_graded_p=0.5"] == pytest.approx(0.5 * (1 + 0.125))


def test_with_binary_qrels_it_equals_binary_rbp():
    agg = evaluate(QRELS_A, RUN_A, ["rbp.p=0.5", "rbp_graded.p=0.5"]).aggregate
    # d2(0) d1(1) x d3(1) d5(unjudged): 0.5 (0.5 + 0.125)
    assert agg["rbp_graded_p=0.5"] == pytest.approx(0.5 * (0.5 + 0.125))
    assert agg["rbp_graded_p=0.5"] == agg["rbp_p=0.5"]


def test_the_highest_grade_is_per_topic():
    # topic 2's best document has grade 1, so there grade 1 is worth a full gain (trec_eval's gains 0..1 are
    # already within [0, 1]); in topic 3 (grades up to 3) grade 1 is worth a third
    qrels = [*QRELS_GRADED, ("2", "e", 1), ("2", "f", 0), ("3", "g", 1), ("3", "h", 3)]
    run = [*RUN_GRADED, ("2", "f", 2.0), ("2", "e", 1.0), ("3", "g", 2.0), ("3", "h", 1.0)]
    result = evaluate(qrels, run, ["rbp_graded.p=0.5"])
    per_topic = result.per_topic["rbp_graded_p=0.5"]
    assert per_topic["2"] == pytest.approx(0.5 * (0 + 1 * 0.5))
    assert per_topic["3"] == pytest.approx(0.5 * (1 / 3 + 3 / 3 * 0.5))
    assert result.aggregate["rbp_graded_p=0.5"] == pytest.approx((0.5625 + 0.25 + 0.5 * (1 / 3 + 0.5)) / 3)


def test_a_topic_without_a_positive_grade_scores_zero():
    result = evaluate([("1", "a", 0), ("1", "b", 0)], [("1", "a", 2.0), ("1", "b", 1.0)], ["rbp_graded.p=0.5"])
    assert result.aggregate["rbp_graded_p=0.5"] == 0.0


def test_the_relevance_level_does_not_change_the_gains():
    at_1 = evaluate(QRELS_GRADED, RUN_GRADED, ["rbp_graded.p=0.5"], relevance_level=1).aggregate
    at_2 = evaluate(QRELS_GRADED, RUN_GRADED, ["rbp_graded.p=0.5"], relevance_level=2).aggregate
    assert at_1["rbp_graded_p=0.5"] == at_2["rbp_graded_p=0.5"] == pytest.approx(0.5625)
    # binary rbp at level 2 sees only a
    assert evaluate(QRELS_GRADED, RUN_GRADED, ["rbp.p=0.5"], relevance_level=2).aggregate["rbp_p=0.5"] == 0.5


def test_default_persistence_is_0_9():
    result = evaluate(QRELS_GRADED, [("1", "b", 2.0), ("1", "a", 1.0)], ["rbp_graded"])
    # a (gain 1) at rank 2: 0.1 * 0.9
    assert result.aggregate["rbp_graded"] == pytest.approx(0.09)


def test_persistence_outside_0_1_is_refused():
    with pytest.raises(MeasureError, match="persistence"):
        evaluate(QRELS_GRADED, RUN_GRADED, ["rbp_graded.p=1.5"])
    with pytest.raises(MeasureError, match="unknown parameter"):
        evaluate(QRELS_GRADED, RUN_GRADED, ["rbp_graded.q=0.5"])


def test_a_long_ranking_matches_trec_eval_loop_exactly():
    """300 documents, grades 0..2 at random: the same doubles as m_rbp.c's loop (cur_p *= p, sum += g cur_p)."""
    rng = random.Random(7)
    docs = [f"d{i:03d}" for i in range(300)]
    grades = {d: rng.choice([0, 0, 1, 2]) for d in docs}
    qrels = [("1", d, g) for d, g in grades.items()]
    run = [("1", d, float(300 - i)) for i, d in enumerate(docs)]
    p = 0.9
    total, cur_p = 0.0, 1.0
    for d in docs:
        gain = grades[d] / 2
        if gain != 0:
            total += gain * cur_p
        cur_p = cur_p * p
    assert evaluate(qrels, run, ["rbp_graded.p=0.9"]).aggregate["rbp_graded_p=0.9"] == (1.0 - p) * total

"""Hand-computed values of every measure family on tiny topics (see conftest: topic A is
d2(non-rel) d1(rel) x(unpooled) d3(rel) d5(pooled, unjudged) with R = 3)."""

from __future__ import annotations

import math

import pytest

from tests.engine.conftest import QRELS_A, RUN_A, evaluate

EPS = 0.00001


def test_precision_recall_and_success_count_missing_ranks_as_non_relevant():
    agg = evaluate(QRELS_A, RUN_A, ["P.1,2,5,10", "recall.5", "success.1,2", "relative_P.2,10"]).aggregate
    assert agg["P_1"] == 0.0
    assert agg["P_2"] == 0.5
    assert agg["P_5"] == pytest.approx(2 / 5)
    assert agg["P_10"] == pytest.approx(2 / 10)
    assert agg["recall_5"] == pytest.approx(2 / 3)
    assert (agg["success_1"], agg["success_2"]) == (0.0, 1.0)
    assert agg["relative_P_2"] == 0.5 and agg["relative_P_10"] == pytest.approx(2 / 3)


def test_average_precision_divides_by_all_relevant_documents():
    agg = evaluate(QRELS_A, RUN_A, ["map", "Rprec", "recip_rank", "map_cut.2"]).aggregate
    assert agg["map"] == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert agg["Rprec"] == pytest.approx(1 / 3)
    assert agg["recip_rank"] == 0.5
    assert agg["map_cut_2"] == pytest.approx((1 / 2) / 3)


def test_bpref_counts_only_judged_non_relevant_documents_above():
    # both relevant documents have the one judged non-relevant (d2) above: 1 - 1/min(1, 3) = 0 each
    assert evaluate(QRELS_A, RUN_A, ["bpref"]).aggregate["bpref"] == 0.0
    # unjudged (d5) and unpooled (x) documents do not count against a relevant document
    run = [("1", "x", 9.0), ("1", "d5", 8.0), ("1", "d1", 7.0), ("1", "d2", 6.0), ("1", "d3", 5.0)]
    assert evaluate(QRELS_A, run, ["bpref"]).aggregate["bpref"] == pytest.approx((1 + 0) / 3)


def test_infap_follows_yilmaz_and_aslam_with_epsilon():
    expected = (0.5 + 0.5 * (1 / 1) * (EPS / (1 + 2 * EPS))          # d1 at rank 2
                + 1 / 4 + (3 / 4) * (2 / 3) * ((1 + EPS) / (2 + 2 * EPS))) / 3  # d3 at rank 4
    assert evaluate(QRELS_A, RUN_A, ["infAP"]).aggregate["infAP"] == pytest.approx(expected, rel=1e-12)


def test_counts_are_sums_and_nonrel_judged_ignores_unjudged():
    agg = evaluate(QRELS_A, RUN_A, ["num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"]).aggregate
    assert (agg["num_ret"], agg["num_rel"], agg["num_rel_ret"], agg["num_nonrel_judged_ret"]) == (5, 3, 2, 1)


def test_relstring_shows_grades_unpooled_and_unjudged():
    res = evaluate(QRELS_A, RUN_A, ["relstring"])
    assert res.per_topic.loc["1", "relstring"] == "01-1."
    assert "relstring" not in res.aggregate


def test_set_measures_use_the_whole_retrieved_set():
    agg = evaluate(QRELS_A, RUN_A, ["set_P", "set_recall", "set_map", "set_F", "set_relative_P",
                                    "utility"]).aggregate
    p, r = 2 / 5, 2 / 3
    assert agg["set_P"] == pytest.approx(p) and agg["set_recall"] == pytest.approx(r)
    assert agg["set_map"] == pytest.approx(4 / 15)
    assert agg["set_F"] == pytest.approx(2 * p * r / (p + r))
    assert agg["set_relative_P"] == pytest.approx(2 / 3)
    assert agg["utility"] == 2 - 3  # 1 * rel_ret - 1 * nonrel_ret


def test_rprec_mult_rounds_multiples_of_r_like_9_0_8():
    agg = evaluate(QRELS_A, RUN_A, ["Rprec_mult.0.2,1.0,2.0"]).aggregate
    assert agg["Rprec_mult_0.20"] == 0.0                 # (long)(0.6 + 0.9) = 1 document: d2
    assert agg["Rprec_mult_1.00"] == pytest.approx(1 / 3)
    assert agg["Rprec_mult_2.00"] == pytest.approx(2 / 6)  # 6 > 5 retrieved: num_rel_ret / 6


def test_interpolated_precision_cutoffs_add_0_9_and_truncate():
    # R = 10, relevant at ranks 1 and 10: recall 0.12 means (long)(1.2 + 0.9) = 2 relevant documents
    # (9.0.8), where lround(1.2) = 1 (trec_eval 10) would give 1.0
    qrels = [("1", f"r{i}", 1) for i in range(10)]
    run = [("1", "r0", 10.0)] + [("1", f"n{i}", 9.0 - i) for i in range(8)] + [("1", "r1", 0.5)]
    agg = evaluate(qrels, run, ["iprec_at_recall.0.12,0"]).aggregate
    assert agg["iprec_at_recall_0.12"] == pytest.approx(0.2)
    assert agg["iprec_at_recall_0.00"] == 1.0


def test_eleven_point_average_and_default_recall_levels():
    agg = evaluate(QRELS_A, RUN_A, ["iprec_at_recall", "11pt_avg"]).aggregate
    # R = 3: levels 0..0.7 need at most 2 relevant (0.7 * 3 + 0.9 = 2.9999...): max precision 0.5
    assert [agg[f"iprec_at_recall_{x / 10:.2f}"] for x in range(11)] == [0.5] * 8 + [0.0] * 3
    assert agg["11pt_avg"] == pytest.approx(8 * 0.5 / 11)


def test_bing_discounts_by_non_relevant_above():
    # d1 after 1 non-relevant: 1/log2(3); d3 after 2 non-relevant (d2, x): 1/log2(4)
    expected = (1 / math.log2(3) + 1 / math.log2(4)) / 3
    assert evaluate(QRELS_A, RUN_A, ["binG"]).aggregate["binG"] == pytest.approx(expected)


GRADED = [("g", "a", 3), ("g", "b", 2), ("g", "c", 1), ("g", "d", 0), ("g", "e", 1)]
GRADED_RUN = [("g", "c", 5.0), ("g", "a", 4.0), ("g", "z", 3.0), ("g", "d", 2.0), ("g", "b", 1.0)]
L3, L5, L6 = math.log2(3), math.log2(5), math.log2(6)


def test_ndcg_ideal_uses_every_judged_document_and_ignores_level():
    dcg = 1 + 3 / L3 + 2 / L6
    ideal = 3 + 2 / L3 + 1 / 2 + 1 / L5
    for level in (1, 3):
        agg = evaluate(GRADED, GRADED_RUN, ["ndcg"], relevance_level=level).aggregate
        assert agg["ndcg"] == pytest.approx(dcg / ideal)


def test_ndcg_cut_truncates_the_ideal_at_the_cutoff():
    agg = evaluate(GRADED, GRADED_RUN, ["ndcg_cut.2,10"]).aggregate
    assert agg["ndcg_cut_2"] == pytest.approx((1 + 3 / L3) / (3 + 2 / L3))
    assert agg["ndcg_cut_10"] == pytest.approx((1 + 3 / L3 + 2 / L6) / (3 + 2 / L3 + 1 / 2 + 1 / L5))


def test_ndcg_gain_parameters_replace_grades():
    agg = evaluate(GRADED, GRADED_RUN, ["ndcg.1=3,2=9"]).aggregate
    dcg = 3 + 3 / L3 + 9 / L6                   # c=1 -> 3, a=3 keeps 3, b=2 -> 9
    ideal = 9 + 3 / L3 + 3 / 2 + 3 / L5         # b 9, then a, c, e at 3
    assert agg["ndcg_1=3,2=9"] == pytest.approx(dcg / ideal)


def test_ndcg_rel_and_rndcg_average_ndcg_at_their_points():
    agg = evaluate(GRADED, GRADED_RUN, ["ndcg_rel", "Rndcg"]).aggregate
    d1, d2, d5 = 1.0, 1 + 3 / L3, 1 + 3 / L3 + 2 / L6
    i1, i2, i3, i4 = 3, 3 + 2 / L3, 3 + 2 / L3 + 1 / 2, 3 + 2 / L3 + 1 / 2 + 1 / L5
    # ndcg_rel: at c (rank 1), a (rank 2), b (rank 5, ideal capped at 4 documents), e never retrieved
    assert agg["ndcg_rel"] == pytest.approx((d1 / i1 + d2 / i2 + d5 / i4 + d5 / i4) / 4)
    # Rndcg: the ideal gain changes after ranks 1 (3 -> 2), 2 (2 -> 1) and 4 (1 -> 0); the run (5
    # documents) ends one rank after the ideal (4), so 9.0.8 adds no final point at rank n
    assert agg["Rndcg"] == pytest.approx((d1 / i1 + d2 / i2 + d2 / i4) / 3)
    assert i3 > i2


def test_exponential_gain_ndcg_has_its_own_name():
    agg = evaluate(GRADED, GRADED_RUN, ["ndcg_exp", "ndcg_exp_cut.2"]).aggregate
    assert agg["ndcg_exp"] == pytest.approx((1 + 7 / L3 + 3 / L6) / (7 + 3 / L3 + 1 / 2 + 1 / L5))
    assert agg["ndcg_exp_cut_2"] == pytest.approx((1 + 7 / L3) / (7 + 3 / L3))


def test_ties_are_broken_by_docno_descending():
    qrels = [("1", "a", 1)]
    run = [("1", "b", 1.0), ("1", "a", 1.0), ("1", "c", 1.0)]
    assert evaluate(qrels, run, ["recip_rank"]).aggregate["recip_rank"] == pytest.approx(1 / 3)


def test_scores_equal_as_32_bit_floats_are_ties():
    qrels = [("1", "a", 1)]
    run = [("1", "a", 1.0000000001), ("1", "b", 1.0)]   # distinct doubles, same float
    assert evaluate(qrels, run, ["recip_rank"]).aggregate["recip_rank"] == 0.5


def test_max_depth_cuts_each_topic_after_ranking():
    run = [("1", "d2", 5.0), ("1", "x", 4.0), ("1", "y", 3.0), ("1", "d1", 2.0)]
    agg = evaluate(QRELS_A, run, ["P.5", "num_ret", "num_rel_ret"], max_depth=3).aggregate
    assert (agg["P_5"], agg["num_ret"], agg["num_rel_ret"]) == (0.0, 3, 0)


def test_judged_only_removes_unjudged_documents_before_ranking():
    agg = evaluate(QRELS_A, RUN_A, ["P.2", "num_ret", "map"], judged_only=True).aggregate
    # d2 d1 d3 remain (x unpooled and d5 pooled-unjudged are dropped)
    assert (agg["P_2"], agg["num_ret"]) == (0.5, 3)
    assert agg["map"] == pytest.approx((1 / 2 + 2 / 3) / 3)


def test_relevance_level_moves_the_relevant_threshold():
    agg = evaluate(GRADED, GRADED_RUN, ["P.2", "num_rel"], relevance_level=2).aggregate
    assert (agg["P_2"], agg["num_rel"]) == (0.5, 2)


def test_mean_is_over_topics_in_both_run_and_qrels_unless_complete():
    qrels = [("1", "a", 1), ("2", "b", 1)]
    run = [("1", "x", 2.0), ("1", "a", 1.0), ("9", "a", 1.0)]   # topic 9 is not in the qrels
    plain = evaluate(qrels, run, ["num_q", "map", "gm_map", "num_rel"]).aggregate
    assert (plain["num_q"], plain["map"], plain["num_rel"]) == (1, 0.5, 1)
    assert plain["gm_map"] == pytest.approx(0.5)
    full = evaluate(qrels, run, ["num_q", "map", "gm_map", "num_rel"], complete=True).aggregate
    assert (full["num_q"], full["map"], full["num_rel"]) == (2, 0.25, 2)
    assert full["gm_map"] == pytest.approx(math.exp((math.log(0.5) + math.log(EPS)) / 2))


def test_geometric_means_floor_each_topic_at_0_00001():
    qrels = [("1", "a", 1), ("2", "b", 1)]
    run = [("1", "a", 1.0), ("2", "x", 1.0)]
    agg = evaluate(qrels, run, ["gm_map", "gm_bpref"]).aggregate
    assert agg["gm_map"] == pytest.approx(math.sqrt(1.0 * EPS))
    assert agg["gm_bpref"] == pytest.approx(math.sqrt(1.0 * EPS))


def test_judged_fraction_rbp_and_its_residual():
    agg = evaluate(QRELS_A, RUN_A, ["judged.2,10", "rbp.p=0.5", "rbp_resid.p=0.5"]).aggregate
    assert (agg["judged_2"], agg["judged_10"]) == (1.0, 0.3)
    assert agg["rbp_p=0.5"] == pytest.approx(0.5 * (0.5 + 0.125))
    assert agg["rbp_resid_p=0.5"] == pytest.approx(0.5 ** 5 + 0.5 * (0.25 + 0.0625))


def test_f_beta_and_condensed_average_precision():
    agg = evaluate(QRELS_A, RUN_A, ["set_Fbeta.1,2", "set_F", "map_condensed"]).aggregate
    p, r = 2 / 5, 2 / 3
    assert agg["set_Fbeta_1.00"] == pytest.approx(agg["set_F"])
    assert agg["set_Fbeta_2.00"] == pytest.approx(5 * p * r / (4 * p + r))
    assert agg["map_condensed"] == pytest.approx((1 / 2 + 2 / 3) / 3)

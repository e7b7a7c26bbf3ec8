"""Inter-assessor agreement: kappa and alpha against hand-worked and textbook values, judgments frames."""

import math

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from judging.agreement import (
    agreement_by_topic,
    cohen_kappa,
    disagreements,
    krippendorff_alpha,
    majority_qrels,
    pairwise_agreement,
    ranking_correlation,
    tau_ap,
    weighted_kappa,
)

nan = float("nan")

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 observers x 12 units,
# values 1..5, missing judgments. The paper gives alpha nominal .743, ordinal .815, interval .849.
TEXTBOOK = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, nan, nan, nan],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, nan, 3],
    [nan, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, nan],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, nan],
]
# The same paper's example A: two observers, binary values, 10 units.
BINARY = [[0, 1, 0, 0, 0, 0, 0, 0, 1, 0], [1, 1, 1, 0, 0, 1, 0, 0, 0, 0]]


def judgments(rows):
    return pd.DataFrame(rows, columns=["assessor", "qid", "docno", "grade"])


# Topic 1: x and y share d1..d3, z joins on d1. Topic 2: only z.
SMALL = judgments([
    ("x", "1", "d1", 0), ("y", "1", "d1", 1), ("z", "1", "d1", 1),
    ("x", "1", "d2", 2), ("y", "1", "d2", 2),
    ("x", "1", "d3", 1), ("y", "1", "d3", 0),
    ("z", "2", "d9", 3),
])


# ------------------------------------------------------------------------------------------ kappa
def test_cohen_kappa_matches_hand_computation():
    # p_o = 3/4, p_e = 1/2 * 1/4 + 1/2 * 3/4 = 1/2 -> (3/4 - 1/2) / (1/2) = 1/2
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 0, 0]) == pytest.approx(0.5)


def test_perfect_agreement_is_kappa_one_and_chance_agreement_is_kappa_zero():
    assert cohen_kappa([1, 0, 1, 0, 1], [1, 0, 1, 0, 1]) == 1.0
    assert cohen_kappa([1, 1, 0, 0], [1, 0, 1, 0]) == pytest.approx(0.0)  # p_o = p_e = 1/2
    assert cohen_kappa([1, 1, 0, 0], [0, 0, 1, 1]) == pytest.approx(-1.0)


def test_kappa_is_undefined_when_both_raters_use_a_single_category():
    assert math.isnan(cohen_kappa([1, 1, 1], [1, 1, 1]))
    assert math.isnan(weighted_kappa([2, 2], [2, 2]))


def test_cohen_kappa_equals_scikit_learn_on_random_labels():
    rng = np.random.default_rng(0)
    for _ in range(20):
        a, b = rng.integers(0, 2, 30), rng.integers(0, 2, 30)
        assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))
    a, b = rng.integers(0, 4, 50), rng.integers(0, 4, 50)  # nominal with 4 labels too
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_equals_scikit_learn(weights):
    rng = np.random.default_rng(1)
    for _ in range(20):
        a = rng.integers(0, 4, 40)
        b = np.clip(a + rng.integers(-1, 2, 40), 0, 3)
        expected = cohen_kappa_score(a, b, weights=weights, labels=[0, 1, 2, 3])
        assert weighted_kappa(a, b, weights=weights, categories=[0, 1, 2, 3]) == pytest.approx(expected)


def test_weighted_kappa_counts_an_unused_grade_as_a_step_when_the_scale_is_given():
    a, b = [0, 1, 3, 3, 0], [1, 1, 3, 0, 0]
    with_scale = weighted_kappa(a, b, categories=[0, 1, 2, 3])
    assert with_scale == pytest.approx(cohen_kappa_score(a, b, weights="linear", labels=[0, 1, 2, 3]))
    assert with_scale != pytest.approx(weighted_kappa(a, b))  # default scale: grades that occur, 0 1 3


def test_kappa_refuses_mismatched_or_empty_or_unknown_ratings():
    with pytest.raises(ValueError, match="same number"):
        cohen_kappa([1, 0], [1])
    with pytest.raises(ValueError, match="no items"):
        cohen_kappa([], [])
    with pytest.raises(ValueError, match="not among the categories"):
        weighted_kappa([0, 4], [0, 1], categories=[0, 1, 2])
    with pytest.raises(ValueError, match="linear"):
        weighted_kappa([0, 1], [0, 1], weights="cubic")


# ----------------------------------------------------------------------------------------- alpha
def test_alpha_on_krippendorffs_binary_example_matches_the_hand_worked_coincidences():
    # o_00 = 10, o_01 = o_10 = 4, o_11 = 2; n_0 = 14, n_1 = 6 -> 1 - 19 * 4 / (14 * 6)
    assert krippendorff_alpha(BINARY, level="nominal") == pytest.approx(1 - 19 * 4 / 84)


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)])
def test_alpha_on_krippendorffs_textbook_example_matches_the_published_values(level, published):
    assert krippendorff_alpha(TEXTBOOK, level=level) == pytest.approx(published, abs=5e-4)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
def test_alpha_equals_the_krippendorff_package_on_random_data_with_gaps(level):
    rng = np.random.default_rng(2)
    for _ in range(10):
        data = rng.integers(0, 4, (3, 25)).astype(float)
        data[rng.random(data.shape) < 0.3] = np.nan
        expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
        assert krippendorff_alpha(data, level=level) == pytest.approx(expected)


def test_alpha_is_one_for_perfect_agreement_and_nan_when_undefined():
    assert krippendorff_alpha([[0, 1, 2, 1], [0, 1, 2, 1]]) == pytest.approx(1.0)
    assert math.isnan(krippendorff_alpha([[1, 1, 1], [1, 1, 1]]))  # a single value: no variation to explain
    assert math.isnan(krippendorff_alpha([[1, nan], [nan, 2]]))  # no unit judged twice


def test_alpha_accepts_a_judgments_frame_as_well_as_a_matrix():
    frame = judgments([(f"obs{r}", "q", f"u{u}", int(v))
                       for r, row in enumerate(TEXTBOOK) for u, v in enumerate(row) if not math.isnan(v)])
    assert krippendorff_alpha(frame, level="ordinal") == pytest.approx(krippendorff_alpha(TEXTBOOK))


# ----------------------------------------------------------------------------- judgments frames
def test_pairwise_agreement_reports_each_assessor_pair_on_shared_documents():
    table = pairwise_agreement(SMALL).set_index(["assessor_a", "assessor_b"])
    assert list(table.index) == [("x", "y"), ("x", "z"), ("y", "z")]
    xy = table.loc[("x", "y")]
    assert xy["n_shared"] == 3
    assert xy["agreement"] == pytest.approx(1 / 3)  # only d2 has the same grade
    # binarised (>= 1): x 0 1 1, y 1 1 0 -> p_o = 1/3, p_e = 5/9 -> kappa = -1/2
    assert xy["binary_agreement"] == pytest.approx(1 / 3)
    assert xy["kappa"] == pytest.approx(-0.5)
    assert xy["weighted_kappa"] == pytest.approx(
        cohen_kappa_score([0, 2, 1], [1, 2, 0], weights="linear", labels=[0, 1, 2, 3]))
    assert xy["alpha"] == pytest.approx(krippendorff.alpha(
        reliability_data=[[0, 2, 1], [1, 2, 0]], level_of_measurement="ordinal"))


def test_pairwise_agreement_with_one_shared_document_has_no_kappa():
    xz = pairwise_agreement(SMALL).set_index(["assessor_a", "assessor_b"]).loc[("x", "z")]
    assert xz["n_shared"] == 1 and xz["agreement"] == 0.0
    assert math.isnan(xz["kappa"]) and math.isnan(xz["weighted_kappa"]) and math.isnan(xz["alpha"])


def test_relevant_from_moves_the_binary_threshold():
    strict = pairwise_agreement(SMALL, relevant_from=2).set_index(["assessor_a", "assessor_b"])
    # binarised (>= 2): x 0 1 0, y 0 1 0 -> full agreement
    assert strict.loc[("x", "y"), "binary_agreement"] == 1.0
    assert strict.loc[("x", "y"), "kappa"] == pytest.approx(1.0)


def test_agreement_by_topic_uses_only_documents_with_two_or_more_assessors():
    table = agreement_by_topic(SMALL)
    assert list(table["qid"]) == ["1"]  # topic 2 has one assessor
    row = table.iloc[0]
    assert row["n_docs"] == 3 and row["n_assessors"] == 3
    assert row["agreement"] == pytest.approx(1 / 3)  # d2 unanimous; d1 (0,1,1) and d3 (1,0) not
    assert math.isnan(row["kappa"])  # three assessors: Cohen's kappa is for two
    matrix = [[0, 2, 1], [1, 2, 0], [1, nan, nan]]
    assert row["alpha"] == pytest.approx(krippendorff.alpha(reliability_data=matrix,
                                                            level_of_measurement="ordinal"))


def test_agreement_by_topic_gives_cohen_kappa_for_a_topic_with_two_assessors():
    two = SMALL[SMALL["assessor"] != "z"]
    row = agreement_by_topic(two).iloc[0]
    assert row["n_assessors"] == 2 and row["kappa"] == pytest.approx(-0.5)


def test_disagreements_list_documents_with_different_grades_and_who_gave_which():
    table = disagreements(SMALL)
    assert list(zip(table["qid"], table["docno"], strict=True)) == [("1", "d1"), ("1", "d3")]
    assert table.iloc[0]["grades"] == {"x": 0, "y": 1, "z": 1}
    assert (table.iloc[1]["min_grade"], table.iloc[1]["max_grade"], table.iloc[1]["n_assessors"]) == (0, 1, 2)


def test_disagreements_are_empty_when_everyone_agrees():
    agreed = judgments([("x", "1", "d1", 1), ("y", "1", "d1", 1)])
    assert disagreements(agreed).empty


def test_majority_qrels_take_the_most_frequent_grade_and_break_ties_as_asked():
    lower = majority_qrels(SMALL).set_index(["qid", "docno"])["rel"]
    assert lower.to_dict() == {("1", "d1"): 1, ("1", "d2"): 2, ("1", "d3"): 0, ("2", "d9"): 3}
    higher = majority_qrels(SMALL, tie="higher").set_index(["qid", "docno"])["rel"]
    assert higher[("1", "d3")] == 1 and higher[("1", "d1")] == 1  # 2-vs-1 majority is not a tie


def test_no_judgments_give_empty_tables_not_errors():
    empty = SMALL.iloc[0:0]
    assert pairwise_agreement(empty).empty and agreement_by_topic(empty).empty
    assert disagreements(empty).empty and majority_qrels(empty).empty
    assert math.isnan(krippendorff_alpha(empty))


def test_judgments_frames_are_validated_with_clear_messages():
    with pytest.raises(ValueError, match="lack columns"):
        pairwise_agreement(SMALL.drop(columns="grade"))
    twice = pd.concat([SMALL, SMALL.iloc[[0]]])
    with pytest.raises(ValueError, match="'x' judged qid '1' docno 'd1' more than once"):
        majority_qrels(twice)
    fractional = SMALL.assign(grade=SMALL["grade"] + 0.5)
    with pytest.raises(ValueError, match="grade must be integers"):
        disagreements(fractional)
    with pytest.raises(ValueError, match="tie must be"):
        majority_qrels(SMALL, tie="random")


# ---------------------------------------------------------------------------- ranking correlation
REFERENCE = {"A": 0.4, "B": 0.3, "C": 0.2, "D": 0.1}


def test_tau_ap_penalises_a_swap_at_the_top_more_than_one_at_the_bottom():
    top_swap = {"A": 0.3, "B": 0.4, "C": 0.2, "D": 0.1}
    bottom_swap = {"A": 0.4, "B": 0.3, "C": 0.1, "D": 0.2}
    # top: C(2..4) = 0, 2, 3 -> 2/3 * (0 + 1 + 1) - 1; bottom: 1, 2, 2 -> 2/3 * (1 + 1 + 2/3) - 1
    assert ranking_correlation(REFERENCE, top_swap) == pytest.approx((2 / 3, 1 / 3))
    assert ranking_correlation(REFERENCE, bottom_swap) == pytest.approx((2 / 3, 7 / 9))


def test_identical_and_reversed_rankings_correlate_one_and_minus_one():
    assert ranking_correlation(REFERENCE, dict(REFERENCE)) == pytest.approx((1.0, 1.0))
    reversed_scores = {k: -v for k, v in REFERENCE.items()}
    assert ranking_correlation(REFERENCE, reversed_scores) == pytest.approx((-1.0, -1.0))


def test_tau_ap_counts_a_pair_tied_in_the_reference_as_half_correct():
    tied = {"A": 0.4, "B": 0.4, "C": 0.1}
    # other: A > B > C; C(2) = 1/2 (A,B tied in reference), C(3) = 2 -> (1/2 + 1) - 1
    assert tau_ap(tied, {"A": 3, "B": 2, "C": 1}) == pytest.approx(0.5)


def test_ranking_correlation_refuses_different_runs_and_too_few_runs():
    with pytest.raises(ValueError, match=r"only in a \['D'\], only in b \['E'\]"):
        ranking_correlation(REFERENCE, {"A": 1, "B": 2, "C": 3, "E": 4})
    with pytest.raises(ValueError, match="at least 2 runs"):
        ranking_correlation({"A": 1.0}, {"A": 2.0})

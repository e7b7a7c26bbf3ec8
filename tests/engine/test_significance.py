"""Significance tests over per-topic scores: hand-checked values, edge cases, multiplicity correction."""

import itertools
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evaluation.engine.significance import (
    TESTS,
    compare_to_best,
    holm,
    paired_test,
    pairwise_tests,
    significance_letters,
)

ROOT = Path(__file__).resolve().parents[2]

# Three runs on 10 topics: x beats z clearly; y is x's and z's neighbour but too noisy to separate.
BASE = np.array([0.2, 0.4, 0.6, 0.3, 0.5, 0.7, 0.1, 0.8, 0.35, 0.55])
NOISE = np.array([0.05, -0.05, 0.04, -0.04, 0.03, -0.03, 0.02, -0.02, 0.01, -0.01])
LEADERBOARD = pd.DataFrame({"z": BASE, "x": BASE + 0.04 + NOISE * 0.5, "y": BASE + 0.02 + NOISE * 2},
                           index=[f"q{i}" for i in range(10)])


def exact_randomization_p(d: np.ndarray) -> float:
    """Fisher's paired randomisation test by brute force: every one of the 2**n sign flips."""
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=d.size)))
    null = (signs * d).mean(axis=1)
    return float(np.mean(np.abs(null) >= abs(d.mean()) - 1e-12))


# ------------------------------------------------------------------------------------------ t-test
def test_paired_t_statistic_p_value_and_effect_size_match_hand_computation():
    # d = .1, .2, .3: mean .2, sd .1, t = .2 / (.1 / sqrt 3) = 2 sqrt 3; for 2 df, p = 1 - t / sqrt(t^2 + 2)
    r = paired_test([0.5, 0.6, 0.7], [0.4, 0.4, 0.4], test="t", run_a="new", run_b="old")
    t = 2 * math.sqrt(3)
    assert (r.run_a, r.run_b, r.test, r.n) == ("new", "old", "t", 3)
    assert r.mean_a == pytest.approx(0.6) and r.mean_b == pytest.approx(0.4)
    assert r.mean_diff == pytest.approx(0.2)
    assert r.statistic == pytest.approx(t)
    assert r.p_value == pytest.approx(1 - t / math.sqrt(t * t + 2))  # 0.0742
    assert r.effect_size == pytest.approx(2.0)  # Cohen's d_z = .2 / .1
    assert r.p_adjusted is None


def test_swapping_the_runs_flips_the_sign_but_not_the_p_value():
    a, b = BASE + NOISE, BASE
    for test in TESTS:
        ab, ba = paired_test(a, b, test=test), paired_test(b, a, test=test)
        assert ab.p_value == pytest.approx(ba.p_value), test
        assert ab.mean_diff == pytest.approx(-ba.mean_diff)
        assert ab.effect_size == pytest.approx(-ba.effect_size)


# ----------------------------------------------------------------------------------- edge cases
@pytest.mark.parametrize("test", TESTS)
def test_identical_runs_give_p_one_and_no_effect(test):
    r = paired_test(BASE, BASE.copy(), test=test)
    assert r.p_value == 1.0
    assert r.statistic == 0.0
    assert r.effect_size == 0.0
    assert (r.ci_low, r.ci_high) == (0.0, 0.0)


def test_constant_nonzero_difference_is_infinitely_large_effect_with_zero_width_interval():
    r = paired_test(BASE + 0.1, BASE, test="t")
    assert r.effect_size == math.inf
    assert r.ci_low == pytest.approx(0.1) and r.ci_high == pytest.approx(0.1)
    assert (r.statistic, r.p_value) == (math.inf, 0.0)


@pytest.mark.parametrize("test", TESTS)
def test_fewer_than_two_topics_is_refused(test):
    with pytest.raises(ValueError, match="at least 2 topics"):
        paired_test([0.5], [0.4], test=test)


def test_nan_scores_are_refused_with_a_clear_message():
    with pytest.raises(ValueError, match="NaN"):
        paired_test([0.5, float("nan"), 0.3], [0.4, 0.2, 0.1])


def test_unequal_lengths_and_unknown_test_are_refused():
    with pytest.raises(ValueError, match="equal lengths"):
        paired_test([0.5, 0.4, 0.3], [0.4, 0.2])
    with pytest.raises(ValueError, match="unknown test"):
        paired_test([0.5, 0.4], [0.4, 0.2], test="anova")


def test_series_are_aligned_by_topic_not_by_position():
    a = pd.Series([0.5, 0.6, 0.9, 0.2], index=["q1", "q2", "q3", "q4"])
    b = pd.Series([0.1, 0.3, 0.5, 0.4], index=["q1", "q2", "q3", "q4"])
    shuffled = b.iloc[[3, 1, 0, 2]]
    assert paired_test(a, shuffled) == paired_test(a, b)


def test_series_over_different_topics_are_refused_naming_the_topics():
    a = pd.Series([0.5, 0.6, 0.9], index=["q1", "q2", "q3"])
    b = pd.Series([0.1, 0.3, 0.5], index=["q1", "q2", "q7"])
    with pytest.raises(ValueError, match=r"only in a \['q3'\], only in b \['q7'\]"):
        paired_test(a, b)


# ------------------------------------------------------------------------- wilcoxon and sign test
def test_wilcoxon_drops_zero_differences_by_default_and_pratt_keeps_them_in_the_ranking():
    # d = 0, 1, 2, -3, 4, 5. wilcox: ranks of 1..5 -> W- = 3; exact p = 2 * #{subsets of 1..5 with sum <= 3}
    # / 32 = 2 * 5 / 32. pratt: the zero takes rank 1, so -3 gets rank 4 -> W- = 4.
    a = np.array([0.0, 1, 2, -3, 4, 5]) / 10 + 0.5
    b = np.full(6, 0.5)
    wilcox = paired_test(a, b, test="wilcoxon")
    assert wilcox.statistic == 3.0
    assert wilcox.p_value == pytest.approx(10 / 32)
    assert paired_test(a, b, test="wilcoxon", zero_method="pratt").statistic == 4.0


def test_wilcoxon_with_tied_differences_gives_midranks():
    # d = 1, 1, -2, 3: ranks 1.5, 1.5, 3, 4 -> W- = 3, W+ = 7
    r = paired_test([0.6, 0.6, 0.3, 0.8], [0.5, 0.5, 0.5, 0.5], test="wilcoxon")
    assert r.statistic == 3.0
    assert 0 < r.p_value <= 1


def test_floating_point_noise_neither_creates_nor_breaks_ties():
    noisy = paired_test([0.3, 0.1, 0.7, 0.9], [0.2, 0.0, 0.4, 0.5], test="wilcoxon")  # 0.3-0.2 != 0.1
    clean = paired_test([0.1, 0.1, 0.3, 0.4], [0.0, 0.0, 0.0, 0.0], test="wilcoxon")
    assert noisy.statistic == clean.statistic and noisy.p_value == pytest.approx(clean.p_value)


def test_sign_test_drops_ties_and_counts_wins():
    # d: + + + + 0 0 -  -> 4 wins of 5 untied; p = P(X >= 4) + P(X <= 1) = (1 + 5 + 5 + 1) / 32
    a = [0.5, 0.6, 0.7, 0.8, 0.3, 0.3, 0.1]
    b = [0.4, 0.4, 0.4, 0.4, 0.3, 0.3, 0.2]
    r = paired_test(a, b, test="sign")
    assert r.statistic == 4.0
    assert r.p_value == pytest.approx(12 / 32)
    assert r.n == 7


# ------------------------------------------------------------------------------- randomisation
def test_randomization_test_on_five_topics_equals_exact_enumeration():
    a = np.array([0.3, 0.5, 0.2, 0.7, 0.4])
    b = np.array([0.2, 0.45, 0.1, 0.4, 0.5])
    r = paired_test(a, b, test="randomization")
    assert r.statistic == pytest.approx(0.09)  # the observed mean difference
    assert r.p_value == pytest.approx(exact_randomization_p(a - b))
    assert r.p_value == pytest.approx(10 / 32)


def test_randomization_test_is_exact_whenever_all_sign_flips_fit_in_the_resamples():
    d = np.array([0.05, -0.02, 0.08, 0.1, -0.04, 0.03, 0.06, -0.01, 0.02, 0.07, -0.05, 0.04])  # 4096 flips
    r = paired_test(BASE[:1].repeat(12) + d, BASE[:1].repeat(12), test="randomization", seed=123)
    assert r.p_value == pytest.approx(exact_randomization_p(d))
    assert r.p_value == paired_test(BASE[:1].repeat(12) + d, BASE[:1].repeat(12), test="randomization",
                                    seed=7).p_value  # exact: the seed does not matter


@pytest.mark.parametrize("n", [2, 5, 9, 13])
def test_exact_randomization_p_value_equals_scipy_permutation_test(n):
    rng = np.random.default_rng(n)
    d = np.round(rng.normal(0.03, 0.1, size=n), 4)
    d[0] = -d[1]  # a mirrored pair: null statistics that tie the observed one must count
    reference = stats.permutation_test((d,), lambda x, axis: np.mean(x, axis=axis), vectorized=True,
                                       permutation_type="samples", n_resamples=10000, rng=0).pvalue
    assert paired_test(d, np.zeros(n), test="randomization").p_value == pytest.approx(reference)


def test_sampled_randomization_test_is_seeded_and_close_to_exact():
    rng = np.random.default_rng(5)
    d = rng.normal(0.02, 0.1, size=18)  # 262,144 sign flips > 10,000 resamples: sampled
    zeros = np.zeros(18)
    first = paired_test(d, zeros, test="randomization", seed=1)
    assert paired_test(d, zeros, test="randomization", seed=1).p_value == first.p_value
    assert first.p_value == pytest.approx(exact_randomization_p(d), abs=0.015)


def test_many_topics_are_resampled_in_chunks_and_agree_with_the_t_test():
    rng = np.random.default_rng(8)
    d = rng.normal(0.01, 0.1, size=600)  # 600 x 10,000 resamples: past the cached-matrix size
    r = paired_test(d, np.zeros(600), test="randomization", seed=4)
    t = stats.ttest_1samp(d, 0.0)
    assert r.p_value == pytest.approx(t.pvalue, abs=0.02)
    reference = stats.bootstrap((d,), np.mean, method="BCa", n_resamples=10000, rng=4).confidence_interval
    assert (r.ci_low, r.ci_high) == pytest.approx((reference.low, reference.high), abs=5e-4)
    assert paired_test(d, np.zeros(600), test="randomization", seed=4) == r


# ------------------------------------------------------------------------------- bootstrap CI
def test_bootstrap_interval_matches_scipy_bca_and_is_reproducible():
    rng = np.random.default_rng(3)
    d = rng.normal(0.03, 0.15, size=40)
    r = paired_test(d, np.zeros(40), seed=11)
    reference = stats.bootstrap((d,), np.mean, method="BCa", n_resamples=10000, rng=11).confidence_interval
    assert r.ci_low == pytest.approx(reference.low, abs=0.005)
    assert r.ci_high == pytest.approx(reference.high, abs=0.005)
    assert r.ci_low < d.mean() < r.ci_high
    assert paired_test(d, np.zeros(40), seed=11) == r


def test_a_wider_confidence_level_gives_a_wider_interval():
    d = BASE - BASE.mean()
    narrow = paired_test(d + 0.05, np.zeros(10), confidence=0.8)
    wide = paired_test(d + 0.05, np.zeros(10), confidence=0.99)
    assert wide.ci_low < narrow.ci_low < narrow.ci_high < wide.ci_high


# ---------------------------------------------------------------------------------- multiplicity
def test_holm_matches_the_worked_example():
    # sorted: .005*4 = .02, .01*3 = .03, .03*2 = .06, .04*1 = .04 -> raised to the running max .06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])


def test_holm_caps_at_one_and_keeps_order_of_ties():
    assert holm([0.5, 0.5, 0.9]) == pytest.approx([1.0, 1.0, 1.0])
    assert holm([]).size == 0
    with pytest.raises(ValueError, match="NaN"):
        holm([0.1, float("nan")])


def test_pairwise_tests_cover_every_pair_in_column_order_with_holm_adjusted_p_values():
    results = pairwise_tests(LEADERBOARD, test="t")
    assert [(r.run_a, r.run_b) for r in results] == [("z", "x"), ("z", "y"), ("x", "y")]
    assert [r.p_adjusted for r in results] == pytest.approx(holm([r.p_value for r in results]))
    single = paired_test(LEADERBOARD["z"], LEADERBOARD["y"])
    assert results[1].p_value == pytest.approx(single.p_value)


def test_pairwise_corrections_bonferroni_and_none():
    raw = [r.p_value for r in pairwise_tests(LEADERBOARD, correction="none")]
    assert [r.p_adjusted for r in pairwise_tests(LEADERBOARD, correction="none")] == raw
    bonf = [r.p_adjusted for r in pairwise_tests(LEADERBOARD, correction="bonferroni")]
    assert bonf == pytest.approx([min(1.0, 3 * p) for p in raw])
    with pytest.raises(ValueError, match="unknown correction"):
        pairwise_tests(LEADERBOARD, correction="fdr")


def test_pairwise_tests_refuse_a_run_with_missing_topics_naming_it():
    scores = LEADERBOARD.copy()
    scores.loc["q3", "y"] = np.nan
    with pytest.raises(ValueError, match=r"NaN for runs \['y'\]"):
        pairwise_tests(scores)
    with pytest.raises(ValueError, match="at least 2 runs"):
        pairwise_tests(LEADERBOARD[["x"]])


# ------------------------------------------------------------------------------------ leaderboard
def test_compare_to_best_flags_only_the_clearly_worse_run():
    table = compare_to_best(LEADERBOARD)
    assert list(table) == ["x", "y", "z"]  # best first
    assert table["x"].is_best and table["x"].result is None
    assert not table["y"].significantly_worse
    assert table["z"].significantly_worse
    assert table["z"].result.run_b == "x" and table["z"].result.mean_diff == pytest.approx(-0.04)
    assert table["z"].result.p_adjusted == pytest.approx(2 * table["z"].result.p_value)  # holm, 2 tests


def test_compare_to_best_for_a_lower_is_better_measure_picks_the_lowest_mean():
    table = compare_to_best(LEADERBOARD, measure_higher_is_better=False)
    assert list(table) == ["z", "y", "x"]
    assert table["x"].significantly_worse and not table["y"].significantly_worse


def test_significance_letters_share_a_letter_only_between_indistinguishable_runs():
    assert significance_letters(LEADERBOARD) == {"x": "a", "y": "ab", "z": "b"}


def test_significance_letters_give_one_letter_when_nothing_differs():
    scores = pd.DataFrame({"r1": BASE, "r2": BASE + NOISE, "r3": BASE - NOISE})
    assert set(significance_letters(scores).values()) == {"a"}


# ------------------------------------------------------------------------------------- isolation
def test_significance_module_does_not_import_django():
    code = ("import sys, evaluation.engine.significance; "
            "assert not any(m == 'django' or m.startswith('django.') for m in sys.modules), 'django loaded'")
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_letters_of_a_thousand_runs_none_of_which_differs():
    """One clique of 1,000 runs: one letter for all (the enumeration once recursed a level per run)."""
    from evaluation.engine.letters import compact_letters

    k = 1000
    letters, method = compact_letters(np.linspace(1, 0, k), np.zeros(k * (k - 1) // 2, dtype=bool))
    assert (set(letters), method) == ({"a"}, "piepho")

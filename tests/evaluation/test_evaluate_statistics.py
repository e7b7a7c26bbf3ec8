"""The leaderboard's vectorised statistics give the engine's answers: t-test p-values, letters, CIs."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from evaluation.engine.leaderboard_stats import compact_letters, letter_groups, pairwise_t, t_interval
from evaluation.engine.significance import paired_test, significance_letters


def scores(seed: int, runs: int | None = None, topics: int = 25) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    runs = runs or int(rng.integers(4, 13))
    base = rng.random(topics)
    strength = np.linspace(0.4, 0.0, runs)  # clear differences between the ends, none between neighbours
    values = np.clip(base[:, None] * 0.5 + strength[None, :] + rng.normal(0, 0.08, (topics, runs)), 0, 1)
    return pd.DataFrame(values, columns=[f"r{i}" for i in range(runs)])


def test_vectorised_t_tests_give_the_engines_p_values_and_effect_sizes():
    frame = scores(1)
    pairs = pairwise_t(frame.to_numpy())
    for k, (i, j) in enumerate(itertools.combinations(range(frame.shape[1]), 2)):
        expected = paired_test(frame.iloc[:, i], frame.iloc[:, j], test="t", n_resamples=10)
        assert (pairs["i"][k], pairs["j"][k]) == (i, j)
        assert pairs["p_value"][k] == pytest.approx(expected.p_value, rel=1e-9, abs=1e-300)
        assert pairs["effect_size"][k] == pytest.approx(expected.effect_size, rel=1e-9)


def test_identical_and_constantly_shifted_runs_follow_the_engines_edge_cases():
    values = np.array([[0.1, 0.1, 0.3], [0.5, 0.5, 0.7], [0.2, 0.2, 0.4]])
    pairs = pairwise_t(values)
    assert pairs["p_value"].tolist() == [1.0, 0.0, 0.0]
    assert pairs["statistic"][0] == 0.0 and np.isinf(pairs["statistic"][1])


@pytest.mark.parametrize("seed", range(1, 13))
def test_letters_are_the_engines_compact_letter_display(seed):
    frame = scores(seed)
    pairs = pairwise_t(frame.to_numpy())
    from evaluation.engine.significance import holm

    significant = holm(pairs["p_value"]) < 0.05
    letters, method = compact_letters(frame.mean().to_numpy(), significant)
    expected = significance_letters(frame, test="t", correction="holm", n_resamples=10)
    assert method == "piepho" and dict(zip(frame.columns, letters, strict=True)) == expected
    assert len(set(letters)) > 1, "the case has significant differences"


def test_confidence_interval_is_students_t():
    low, high = t_interval(np.array([0.2, 0.4, 0.6]))
    assert (round(low, 4), round(high, 4)) == (-0.0968, 0.8968)
    assert all(np.isnan(t_interval(np.array([0.5]))))


def test_letters_for_three_runs_where_only_the_ends_differ():
    letters, method = compact_letters(np.array([0.9, 0.5, 0.1]), np.array([False, True, False]))
    assert (letters, method) == (["a", "ab", "b"], "piepho")


def test_many_runs_with_many_differences_fall_back_to_rank_intervals_quickly():
    import time

    frame = scores(5, runs=120, topics=40)
    values = frame.to_numpy()
    pairs = pairwise_t(values)
    from evaluation.engine.significance import holm

    significant = holm(pairs["p_value"]) < 0.05
    start = time.perf_counter()
    letters, method = compact_letters(values.mean(axis=0), significant)
    assert time.perf_counter() - start < 5
    assert method == "rank-intervals"
    groups, _ = letter_groups(values.mean(axis=0), significant)
    assert len(groups) <= values.shape[1]
    for i, j, s in zip(pairs["i"], pairs["j"], significant, strict=True):
        shared = (groups[:, i] & groups[:, j]).any()
        assert not (s and shared), "runs that differ never share a letter"
    best = int(np.argmax(values.mean(axis=0)))
    assert letters[best].startswith("a") and all(groups.any(axis=0)), "every run has a letter"


@pytest.mark.parametrize("k", [2, 3, 7, 30])
def test_pair_index_finds_each_pair_among_the_combinations(k):
    from evaluation.engine.leaderboard_stats import pair_index

    pairs = list(itertools.combinations(range(k), 2))
    for other in range(k):
        runs = np.array([r for r in range(k) if r != other])
        assert [pairs[p] for p in pair_index(k, runs, other)] == [tuple(sorted((r, other))) for r in runs]


@pytest.mark.parametrize("seed", range(1, 9))
def test_the_leaderboards_test_against_the_best_run_is_the_engines(seed):
    """The leaderboard reads each run's p-value against the best one from the vectorised pairs: the engine's
    compare_to_best (paired t, Holm over the k - 1 comparisons), run for run."""
    from evaluation.engine.significance import compare_to_best
    from evaluation.leaderboard import _significance

    frame = scores(seed)
    _, vs_best, _ = _significance(frame, "t", "holm", 0.05)
    expected = compare_to_best(frame, test="t", correction="holm", alpha=0.05)
    assert list(vs_best) == list(expected)  # best first, then by mean
    for run, row in expected.items():
        worse, p = vs_best[run]
        assert worse == row.significantly_worse
        assert (p is None) == (row.result is None)
        if p is not None:
            assert p == pytest.approx(row.result.p_adjusted, rel=1e-9, abs=1e-300)
    assert any(worse for worse, _ in vs_best.values()), "the case has runs worse than the best"

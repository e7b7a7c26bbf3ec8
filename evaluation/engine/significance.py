"""Significance tests over the per-topic scores of two or more runs.

Django-free. Every test is *paired*: topic ``i`` of run A is compared with topic ``i`` of run B, and the
per-topic differences ``d_i = a_i - b_i`` carry all the information.

Tests (``test=``):

``"t"``
    Student's paired t-test, ``t = mean(d) / (sd(d) / sqrt(n))`` with ``n - 1`` degrees of freedom
    (``scipy.stats.ttest_rel``).
``"wilcoxon"``
    Wilcoxon signed-rank test (``scipy.stats.wilcoxon``, ``method="auto"``: exact for n <= 50 without ties,
    exhaustive permutations when there are ties or zeros and n <= 13, the tie-corrected normal
    approximation otherwise). Zero differences are handled with ``zero_method="wilcox"`` by default: they
    are dropped before ranking, as in Wilcoxon (1945), R's ``wilcox.test`` and the sign test below, so that
    the two rank-free tests look at the same topics; pass ``zero_method="pratt"`` to keep them in the
    ranking (Pratt 1959, more conservative).
``"sign"``
    Sign test: the number of topics where A beats B among the topics where they differ, against a
    Binomial(n_untied, 1/2) (``scipy.stats.binomtest``). Tied topics are dropped.
``"randomization"``
    Fisher's paired randomisation (permutation) test of the mean difference, two-sided: under the null the
    sign of each ``d_i`` is exchangeable (Smucker, Allan & Carterette, CIKM 2007). Exact enumeration of the
    ``2**n`` sign flips when ``2**n <= n_resamples`` (and n <= 19), otherwise ``n_resamples`` random flips seeded with
    ``seed``. p-value as ``scipy.stats.permutation_test(..., permutation_type="samples")`` computes it
    (tested equal), but with the flips drawn once for all pairs of runs.

Every result also carries:

* ``effect_size``: Cohen's d for paired samples, ``d_z = mean(d) / sd(d)`` (sd with ``ddof=1``; Cohen 1988,
  Lakens 2013). ``0`` when every difference is zero, ``+-inf`` when the differences are constant and non-zero.
* ``ci_low``/``ci_high``: a bootstrap confidence interval (BCa, ``n_resamples`` resamples of the topics
  drawn with ``seed``) of the mean difference; ``(d, d)`` when every difference equals ``d``.

Edge cases (tested): every difference zero -> statistic 0, p = 1 for every test; the same non-zero
difference on every topic -> t = +-inf, p = 0 for the t-test; fewer than 2 topics,
NaN scores, unequal lengths or Series over different topics -> ``ValueError``. Differences are rounded to 12
decimals first, so floating-point noise (``0.3 - 0.2`` vs ``0.1``) neither creates nor breaks ties.

Example::

    >>> r = paired_test([0.5, 0.6, 0.7], [0.4, 0.4, 0.4], test="t")
    >>> round(r.mean_diff, 4), round(r.statistic, 4)          # d = .1 .2 .3, sd = .1
    (0.2, 3.4641)
"""

from __future__ import annotations

import itertools
import sys
import warnings
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from evaluation.engine.corrections import CORRECTIONS, adjust_p_values, bonferroni, check_correction, holm
from evaluation.engine.letters import compact_letters
from evaluation.engine.resampling import bootstrap_ci, randomization_p
from evaluation.engine.resampling import scipy_stats as _stats
from workbench.formats.vocabulary import Vocabulary

__all__ = [
    "CORRECTIONS",
    "CORRECTION_CHOICES",
    "TESTS",
    "TEST_CHOICES",
    "BestComparison",
    "PairedResult",
    "adjust_p_values",
    "bonferroni",
    "compare_to_best",
    "holm",
    "paired_test",
    "pairwise_tests",
    "significance_letters",
]

TESTS = ("t", "wilcoxon", "sign", "randomization")

#: the tests as pages offer them (the default first). Labels read in "<label> test" (menus and sentences alike);
#: every menu, parser and sentence naming a test reads this.
TEST_CHOICES = Vocabulary.of("significance test", TESTS, {
    "t": "paired t", "wilcoxon": "Wilcoxon signed-rank", "sign": "sign", "randomization": "randomisation"})
#: the multiple-comparison corrections of :mod:`evaluation.engine.corrections`; labels read in "<label> correction"
CORRECTION_CHOICES = Vocabulary.of("correction", CORRECTIONS, {
    "holm": "Holm–Bonferroni", "bonferroni": "Bonferroni", "bh": "Benjamini–Hochberg (FDR)",
    "none": "no"})


@dataclass(frozen=True)
class PairedResult:
    """One paired comparison of run A with run B (``mean_diff = mean_a - mean_b``)."""

    run_a: str
    run_b: str
    test: str
    n: int
    mean_a: float
    mean_b: float
    mean_diff: float
    statistic: float
    p_value: float
    effect_size: float
    ci_low: float
    ci_high: float
    p_adjusted: float | None = None


@dataclass(frozen=True)
class BestComparison:
    """One leaderboard row of :func:`compare_to_best`."""

    run: str
    mean: float
    is_best: bool
    significantly_worse: bool
    result: PairedResult | None  # the test against the best run; None for the best run itself


def _as_aligned_arrays(a, b) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(a, pd.Series) and isinstance(b, pd.Series):
        for name, s in (("a", a), ("b", b)):
            if not s.index.is_unique:
                raise ValueError(f"scores {name}: topic index has duplicates")
        if set(a.index) != set(b.index):
            only_a = sorted(map(str, set(a.index) - set(b.index)))[:5]
            only_b = sorted(map(str, set(b.index) - set(a.index)))[:5]
            raise ValueError(f"scores cover different topics: only in a {only_a}, only in b {only_b}")
        b = b.reindex(a.index)
    x = np.asarray(a, dtype=float).ravel()
    y = np.asarray(b, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired scores need equal lengths, got {x.size} and {y.size}")
    if x.size < 2:
        raise ValueError(f"a paired test needs at least 2 topics, got {x.size}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("scores contain NaN: drop or fill those topics before testing")
    return x, y


def _effect_size(d: np.ndarray) -> float:
    mean = float(d.mean())
    if (d == d[0]).all():  # constant differences (sd 0, or float noise of ~1e-17 that would give 5e15)
        return 0.0 if d[0] == 0.0 else float(np.copysign(np.inf, d[0]))
    return mean / float(d.std(ddof=1))


def _statistic_and_p(d: np.ndarray, test: str, n_resamples: int, seed: int,
                     zero_method: str) -> tuple[float, float]:
    if not d.any():  # every difference is zero: no evidence at all
        return 0.0, 1.0
    if test == "t":
        if np.all(d == d[0]):  # constant non-zero difference: sd = 0, t is infinite
            return float(np.copysign(np.inf, d[0])), 0.0
        res = _stats().ttest_rel(d, np.zeros_like(d))
        return float(res.statistic), float(res.pvalue)
    if test == "wilcoxon":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "sample size too small for normal approximation"
            res = _stats().wilcoxon(d, zero_method=zero_method, method="auto")
        return float(res.statistic), float(res.pvalue)
    if test == "sign":
        wins = int((d > 0).sum())
        untied = int((d != 0).sum())
        return float(wins), float(_stats().binomtest(wins, untied, 0.5).pvalue)
    if test == "randomization":
        return float(d.mean()), randomization_p(d, n_resamples, seed)
    raise ValueError(f"unknown test {test!r}; choose one of {', '.join(TESTS)}")


def paired_test(a, b, *, test: str = "t", run_a: str = "a", run_b: str = "b", n_resamples: int = 10000,
                confidence: float = 0.95, seed: int = 0, zero_method: str = "wilcox") -> PairedResult:
    """Test whether runs A and B differ on the same topics (see the module docstring for each test).

    ``a`` and ``b`` are per-topic scores: sequences or numpy arrays in the same topic order, or two
    pandas Series indexed by topic (aligned by index; they must cover the same topics).
    """
    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}; choose one of {', '.join(TESTS)}")
    if zero_method not in ("wilcox", "pratt"):
        raise ValueError(f"unknown zero_method {zero_method!r}; choose 'wilcox' or 'pratt'")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence}")
    x, y = _as_aligned_arrays(a, b)
    d = np.round(x - y, 12)
    statistic, p_value = _statistic_and_p(d, test, n_resamples, seed, zero_method)
    ci_low, ci_high = bootstrap_ci(d, confidence, n_resamples, seed)
    return PairedResult(
        run_a=str(run_a), run_b=str(run_b), test=test, n=int(d.size),
        mean_a=float(x.mean()), mean_b=float(y.mean()), mean_diff=float(d.mean()),
        statistic=statistic, p_value=p_value, effect_size=_effect_size(d), ci_low=ci_low, ci_high=ci_high,
    )


def _check_scores(scores: pd.DataFrame) -> None:
    if not isinstance(scores, pd.DataFrame):
        raise TypeError("scores must be a DataFrame: index topic, one column per run")
    if scores.shape[1] < 2:
        raise ValueError(f"need at least 2 runs (columns) to compare, got {scores.shape[1]}")
    if not scores.columns.is_unique:
        raise ValueError("run names (columns) must be unique")
    if not scores.index.is_unique:
        raise ValueError("topics (index) must be unique")
    bad = scores.columns[scores.isna().any()].tolist()
    if bad:
        raise ValueError(f"scores contain NaN for runs {bad[:5]}: drop or fill those topics before testing")


def pairwise_tests(scores: pd.DataFrame, *, test: str = "t", correction: str = "holm",
                   n_resamples: int = 10000, confidence: float = 0.95, seed: int = 0,
                   zero_method: str = "wilcox") -> list[PairedResult]:
    """Test every pair of runs (columns of ``scores``, index = topic) and adjust for multiplicity.

    Pairs are (column i, column j) for i < j in column order. ``p_adjusted`` holds the Holm (default),
    Bonferroni or unadjusted (``correction="none"``) p-value over all ``k (k - 1) / 2`` pairs.
    """
    _check_scores(scores)
    check_correction(correction)
    values = scores.to_numpy(dtype=float)
    names = [str(c) for c in scores.columns]
    results = [
        paired_test(values[:, i], values[:, j], test=test, run_a=names[i], run_b=names[j],
                    n_resamples=n_resamples, confidence=confidence, seed=seed, zero_method=zero_method)
        for i, j in itertools.combinations(range(len(names)), 2)
    ]
    adjusted = adjust_p_values([r.p_value for r in results], correction)
    return [replace(r, p_adjusted=float(p)) for r, p in zip(results, adjusted, strict=True)]


def compare_to_best(scores: pd.DataFrame, *, measure_higher_is_better: bool = True, test: str = "t",
                    correction: str = "holm", alpha: float = 0.05, n_resamples: int = 10000,
                    seed: int = 0) -> dict[str, BestComparison]:
    """For a leaderboard: test every run against the best one (highest mean, or lowest when
    ``measure_higher_is_better=False``; the first column wins a tie).

    Returns ``{run: BestComparison}`` ordered best first. The ``k - 1`` p-values are adjusted with
    ``correction``; a run is ``significantly_worse`` when its adjusted p-value is below ``alpha``.
    """
    _check_scores(scores)
    check_correction(correction)
    means = scores.mean(axis=0).to_numpy(dtype=float)
    order = np.argsort(-means if measure_higher_is_better else means, kind="stable")
    names = [str(c) for c in scores.columns]
    best = order[0]
    values = scores.to_numpy(dtype=float)
    others = order[1:]
    results = [paired_test(values[:, i], values[:, best], test=test, run_a=names[i], run_b=names[best],
                           n_resamples=n_resamples, seed=seed) for i in others]
    adjusted = adjust_p_values([r.p_value for r in results], correction)
    table = {names[best]: BestComparison(names[best], float(means[best]), True, False, None)}
    for i, r, p in zip(others, results, adjusted, strict=True):
        r = replace(r, p_adjusted=float(p))
        worse = bool(p < alpha and means[i] != means[best])
        table[names[i]] = BestComparison(names[i], float(means[i]), False, worse, r)
    return table


def significance_letters(scores: pd.DataFrame, *, measure_higher_is_better: bool = True, test: str = "t",
                         correction: str = "holm", alpha: float = 0.05, n_resamples: int = 10000,
                         seed: int = 0) -> dict[str, str]:
    """Compact letter display for a leaderboard: two runs share a letter iff they are not significantly
    different (adjusted p >= alpha) — up to the display's known limit that a pair can be separated only
    through letters. Piepho's display (2004, J. Comp. Graph. Stat. 13(2)), as
    :func:`evaluation.engine.letters.compact_letters` computes it, with no limit on the number of letters.

    Returns ``{run: letters}`` ordered best first; the best run's letters start with ``"a"``. The number of
    letter columns can in theory grow quickly with many significant pairs; leaderboards of ~100 runs are fine.
    Example: three runs where only best vs worst differ -> ``{"x": "a", "y": "ab", "z": "b"}``.
    """
    results = pairwise_tests(scores, test=test, correction=correction, n_resamples=n_resamples, seed=seed)
    means = scores.mean(axis=0).to_numpy(dtype=float)
    higher = means if measure_higher_is_better else -means
    separated = np.array([r.p_adjusted for r in results], dtype=float) < alpha
    letters, _ = compact_letters(higher, separated, max_letters=sys.maxsize)
    names = [str(c) for c in scores.columns]
    return {names[i]: letters[i] for i in np.argsort(-higher, kind="stable")}

"""Fast statistics for leaderboards over many runs: ranks, t intervals and all-pairs paired t-tests.
Django-free; :mod:`evaluation.engine.significance` has the general tests (these are vectorised versions
of its t-test for the all-pairs case, checked against it in the tests). The compact letter displays are
in :mod:`evaluation.engine.letters` (importable from here too).
"""

from __future__ import annotations

import functools

import numpy as np

from evaluation.engine.letters import compact_letters, letter_groups

__all__ = ["compact_letters", "competition_ranks", "letter_groups", "pair_index", "pairwise_t", "t_interval"]


def _special():
    """scipy.special, imported on first use. Student's t comes from its ``stdtr`` / ``stdtrit``, the
    functions behind ``scipy.stats.t.sf`` / ``.ppf`` (equal values): importing scipy.stats costs a
    command about 1.5 s, scipy.special a fifth of that."""
    import scipy.special

    return scipy.special


def competition_ranks(values: np.ndarray) -> np.ndarray:
    """1 + the number of strictly higher values (ties share the best rank)."""
    values = np.asarray(values, dtype=float)
    return 1 + (values[None, :] > values[:, None]).sum(axis=1)


# ------------------------------------------------------------------- statistics for leaderboards
@functools.lru_cache(maxsize=256)
def _t_quantile(q: float, df: int) -> float:
    """Student's t quantile (a leaderboard asks the same one per run)."""
    return float(_special().stdtrit(df, q))


def t_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Student's t interval of the mean: ``mean +- t_{(1+c)/2, n-1} sd / sqrt(n)``; NaN for n < 2.

    >>> [round(v, 4) for v in t_interval(np.array([0.2, 0.4, 0.6]))]   # sd 0.2, t_{.975,2} = 4.3027
    [-0.0968, 0.8968]
    """
    values = np.asarray(values, dtype=float)
    n = values.size
    if n < 2:
        return (float("nan"), float("nan"))
    half = float(_t_quantile(0.5 + confidence / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
    mean = float(values.mean())
    return (mean - half, mean + half)


def pair_index(k: int, runs: np.ndarray, other: int) -> np.ndarray:
    """Where each pair ``(run, other)`` is among the ``itertools.combinations(range(k), 2)`` pairs (``i < j``):
    ``i``'s pairs start after the ``i k - i (i + 1) / 2`` pairs of the runs before it.

    >>> import itertools; pairs = list(itertools.combinations(range(5), 2))
    >>> [pairs[p] for p in pair_index(5, np.array([0, 4, 1]), 2)]
    [(0, 2), (2, 4), (1, 2)]
    """
    runs = np.asarray(runs, dtype=np.int64)
    low, high = np.minimum(runs, other), np.maximum(runs, other)
    return low * k - low * (low + 1) // 2 + (high - low - 1)


def pairwise_t(values: np.ndarray, confidence: float = 0.95) -> dict[str, np.ndarray]:
    """Paired t-tests of every pair of columns (runs) of ``values`` (topics x runs), vectorised.

    Pairs ``(i, j)``, ``i < j``, in ``itertools.combinations`` order; per pair: mean_a, mean_b, mean_diff,
    statistic ``t = mean(d) / (sd(d) / sqrt(n))``, two-sided p_value (n - 1 degrees of freedom),
    effect_size ``d_z = mean(d) / sd(d)`` and the t interval of mean(d). Differences are rounded to 12
    decimals and the edge cases are those of :func:`evaluation.engine.significance.paired_test` (every
    difference 0: t = 0, p = 1; a constant non-zero difference: t = +-inf, p = 0), whose p-values these equal.
    """
    n, k = values.shape
    parts: dict[str, list[np.ndarray]] = {key: [] for key in
                                           ("i", "j", "mean_a", "mean_b", "mean_diff", "statistic", "p_value",
                                            "effect_size", "ci_low", "ci_high")}
    means = values.mean(axis=0)
    critical = _t_quantile(0.5 + confidence / 2, n - 1)
    for i in range(k - 1):
        d = np.round(values[:, [i]] - values[:, i + 1:], 12)
        mean = d.mean(axis=0)
        sd = d.std(axis=0, ddof=1)
        zero = ~d.any(axis=0)
        constant = (d == d[:1]).all(axis=0) & ~zero
        with np.errstate(divide="ignore", invalid="ignore"):
            t = mean / (sd / np.sqrt(n))
            effect = mean / sd
        t = np.where(zero, 0.0, np.where(constant, np.copysign(np.inf, mean), t))
        effect = np.where(zero, 0.0, np.where(constant, np.copysign(np.inf, mean), effect))
        p = np.where(zero, 1.0, np.where(constant, 0.0, 2 * _special().stdtr(n - 1, -np.abs(t))))
        half = critical * sd / np.sqrt(n)
        j = np.arange(i + 1, k)
        for key, value in (("i", np.full(j.size, i)), ("j", j), ("mean_a", np.full(j.size, means[i])),
                           ("mean_b", means[j]), ("mean_diff", mean), ("statistic", t), ("p_value", p),
                           ("effect_size", effect), ("ci_low", mean - half), ("ci_high", mean + half)):
            parts[key].append(value)
    return {key: (np.concatenate(v) if v else np.array([])) for key, v in parts.items()}

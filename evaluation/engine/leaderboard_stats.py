"""Fast statistics for leaderboards over many runs: ranks, t intervals, all-pairs paired t-tests and
compact letter displays. Django-free; :mod:`evaluation.engine.significance` has the general tests
(these are vectorised versions of its t-test for the all-pairs case, checked against it in the tests).
"""

from __future__ import annotations

import functools
import itertools
import string

import numpy as np


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


def compact_letters(means: np.ndarray, significant: np.ndarray, *, max_letters: int = 26
                    ) -> tuple[list[str], str]:
    """Letters per run (column order) from ``significant``: one boolean per pair ``(i, j)``, ``i < j``, in
    ``itertools.combinations`` order. Returns ``(letters, method)``; a shared letter always means "not
    significantly different", and the best run's letters start with "a".

    ``method = "piepho"``: the compact letter display of Piepho (2004, insert-and-absorb), exactly as
    :func:`evaluation.engine.significance.significance_letters` builds it (two runs share a letter iff they
    do not differ), when it needs at most ``max_letters`` letters. With many runs and many significant
    pairs it needs thousands (136 TREC-COVID runs: > 5,000 letters, minutes to compute); then
    ``method = "rank-intervals"``: one letter per maximal run of consecutive ranks with no significant
    pair inside (the classic underline display), at most k letters, computed in O(k^2). There,
    two runs without a common letter may still not differ, when a run ranked between them differs from one.
    """
    columns, method = letter_groups(means, significant, max_letters=max_letters)
    letters = [""] * len(means)
    for c, column in enumerate(columns):
        name = _letter(c)
        for run in np.flatnonzero(column):
            letters[run] += name
    return letters, method


def letter_groups(means: np.ndarray, significant: np.ndarray, *, max_letters: int = 26
                  ) -> tuple[np.ndarray, str]:
    """The groups behind :func:`compact_letters`: a boolean matrix (one row per letter, in letter order,
    one column per run) and the method.

    Piepho's insert-and-absorb ends with the maximal sets of runs with no significant pair inside (the
    maximal cliques of the "not different" graph); they are enumerated here directly (Bron-Kerbosch with
    pivoting on bitsets), stopping as soon as more than ``max_letters`` are found.
    """
    k = len(means)
    ranked = np.argsort(-np.asarray(means, dtype=float), kind="stable")
    pairs = np.array(list(itertools.combinations(range(k), 2)), dtype=np.int64).reshape(-1, 2)
    chosen = pairs[np.asarray(significant, dtype=bool)]
    differs = np.zeros((k, k), dtype=bool)
    differs[chosen[:, 0], chosen[:, 1]] = differs[chosen[:, 1], chosen[:, 0]] = True
    cliques = _maximal_cliques(~differs, max_letters)
    if cliques is None:
        return _rank_intervals(ranked, chosen), "rank-intervals"
    rank = np.empty(k, dtype=np.int64)
    rank[ranked] = np.arange(k)
    columns = np.array([[bool(c >> i & 1) for i in range(k)] for c in cliques], dtype=bool).reshape(-1, k)
    keys = [sorted(rank[columns[c]].tolist()) for c in range(len(columns))]
    return columns[sorted(range(len(columns)), key=keys.__getitem__)], "piepho"


class _TooMany(Exception):
    pass


def _maximal_cliques(together: np.ndarray, limit: int) -> list[int] | None:
    """Maximal cliques (as int bitsets) of the graph ``together`` (k x k, diagonal ignored); None when
    there are more than ``limit``. Bron and Kerbosch (1973) with Tomita's pivot."""
    k = len(together)
    neighbours = [sum(1 << int(j) for j in np.flatnonzero(together[i]) if j != i) for i in range(k)]
    found: list[int] = []

    def expand(clique: int, candidates: int, excluded: int) -> None:
        if not candidates and not excluded:
            found.append(clique)
            if len(found) > limit:
                raise _TooMany
            return
        pool = candidates | excluded
        pivot = max((u for u in range(k) if pool >> u & 1), key=lambda u: (candidates & neighbours[u]).bit_count())
        rest = candidates & ~neighbours[pivot]
        while rest:
            v = (rest & -rest).bit_length() - 1
            rest &= rest - 1
            expand(clique | 1 << v, candidates & neighbours[v], excluded & neighbours[v])
            candidates &= ~(1 << v)
            excluded |= 1 << v

    try:
        expand(0, (1 << k) - 1, 0)
    except _TooMany:
        return None
    return found


def _rank_intervals(ranked: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    k = len(ranked)
    position = np.empty(k, dtype=np.int64)
    position[ranked] = np.arange(k)
    differs = np.zeros((k, k), dtype=bool)  # by rank position
    if len(chosen):
        a, b = position[chosen[:, 0]], position[chosen[:, 1]]
        differs[a, b] = differs[b, a] = True
    intervals, end = [], -1
    for start in range(k):
        stop = max(end, start)
        while stop + 1 < k and not differs[start:stop + 1, stop + 1].any():
            stop += 1
        if stop > end:
            intervals.append((start, stop))
            end = stop
    columns = np.zeros((len(intervals), k), dtype=bool)
    for c, (lo, hi) in enumerate(intervals):
        columns[c, ranked[lo:hi + 1]] = True
    return columns


def _letter(index: int) -> str:
    name, index = "", index + 1
    while index:
        index, rem = divmod(index - 1, 26)
        name = string.ascii_lowercase[rem] + name
    return name

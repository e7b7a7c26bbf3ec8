"""Compact letter displays of a leaderboard: runs that share a letter are not significantly different.

Django-free. Piepho's display (2004, J. Comp. Graph. Stat. 13(2): insert-and-absorb, whose letters are the
maximal sets of runs with no significant pair inside) computed as the maximal cliques of the "not
different" graph; when it would need too many letters, the classic underline display by rank intervals.

>>> compact_letters(np.array([0.9, 0.5, 0.1]), np.array([False, True, False]))
(['a', 'ab', 'b'], 'piepho')
"""

from __future__ import annotations

import string

import numpy as np


def compact_letters(means: np.ndarray, significant: np.ndarray, *, max_letters: int = 26
                    ) -> tuple[list[str], str]:
    """Letters per run (column order) from ``significant``: one boolean per pair ``(i, j)``, ``i < j``, in
    ``itertools.combinations`` order. Returns ``(letters, method)``; a shared letter always means "not
    significantly different", and the best run's letters start with "a".

    ``method = "piepho"``: the compact letter display of Piepho (2004, insert-and-absorb; two runs share
    a letter iff they do not differ), when it needs at most ``max_letters`` letters
    (:func:`evaluation.engine.significance.significance_letters` sets no limit). With many runs and many significant
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
    pairs = np.stack(np.triu_indices(k, 1), axis=1).astype(np.int64)  # itertools.combinations' order
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


def _maximal_cliques(together: np.ndarray, limit: int) -> list[int] | None:
    """Maximal cliques (as int bitsets) of the graph ``together`` (k x k, diagonal ignored); None when
    there are more than ``limit``. Bron and Kerbosch (1973) with Tomita's pivot."""
    k = len(together)
    adjacent = np.array(together, dtype=bool)
    np.fill_diagonal(adjacent, False)
    bits = np.packbits(adjacent, axis=1, bitorder="little")  # row i: bit j set where j is i's neighbour
    neighbours = [int.from_bytes(row.tobytes(), "little") for row in bits]
    found: list[int] = []
    # an explicit stack, not recursion: a clique of 1,000 runs (none differs from another) is 1,000 levels deep
    stack: list[list] = [[0, (1 << k) - 1, 0, None]]  # clique, candidates, excluded, vertices left to branch on
    while stack:
        frame = stack[-1]
        clique, candidates, excluded, rest = frame
        if rest is None:
            if not candidates and not excluded:
                found.append(clique)
                if len(found) > limit:
                    return None
                stack.pop()
                continue
            pool = candidates | excluded
            pivot = max(_members(pool), key=lambda u, c=candidates: (c & neighbours[u]).bit_count())
            rest = candidates & ~neighbours[pivot]
        if not rest:
            stack.pop()
            continue
        v = (rest & -rest).bit_length() - 1
        frame[1:] = [candidates & ~(1 << v), excluded | 1 << v, rest & (rest - 1)]
        stack.append([clique | 1 << v, candidates & neighbours[v], excluded & neighbours[v], None])
    return found


def _members(bits: int):
    """The set bits' positions, lowest first (not every position up to k: a bitset deep in the search is small)."""
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1
        bits ^= low


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

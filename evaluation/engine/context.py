"""Per-block arrays shared by the measure kernels, computed once and cached.

A kernel sees one :class:`~evaluation.engine.ranking.Block` through a :class:`Ctx`: each row is a
segment (run, topic) of ``n`` ranked documents, stored as its pooled entries in rank order: ``pos``
(0-based rank) and ``rel`` (grade, or -2 for pooled-unjudged). Unpooled documents are implicit: they are
never relevant, never judged, add nothing to any sum. Derived arrays: ``isrel`` (grade >= level), ``krel``
(relevant entries so far, inclusive), ``count_rel_before(k)`` (relevant among the first ``k`` ranks),
``prefix_at(cum, k)`` (a running sum over the entries ranked above ``k``). Running sums go along each row,
left to right, so floating-point sums are added in trec_eval's order.

``log2(n)`` comes from a table filled with :func:`math.log2` (the C library's ``log2``, as trec_eval uses),
because numpy's vectorised ``log2`` differs from it in the last bit for some integers.
"""

from __future__ import annotations

import math

import numpy as np

from evaluation.engine.ranking import PAD_POS, Block

_LOG2 = np.array([-math.inf, 0.0])


def log2_table(n: int) -> np.ndarray:
    """``t[i] = log2(i)`` for ``i < n`` (libm values); ``t[0] = -inf``."""
    global _LOG2
    if _LOG2.size < n:
        size = max(n, 2 * _LOG2.size)
        _LOG2 = np.array([-math.inf] + [math.log2(i) for i in range(1, size)])
    return _LOG2[:n]


def libm_log2(x: np.ndarray) -> np.ndarray:
    """Elementwise C ``log2`` of any doubles (integers via the table, others one by one)."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    whole = (x == np.floor(x)) & (x >= 1) & (x < 2**22)
    if whole.any():
        table = log2_table(int(x[whole].max()) + 1)
        out[whole] = table[x[whole].astype(np.int64)]
    rest = ~whole
    if rest.any():
        out[rest] = [math.log2(v) if v > 0 else (-math.inf if v == 0 else math.nan) for v in x[rest]]
    return out


def safe_div(num, den) -> np.ndarray:
    """``num / den`` where ``den`` is non-zero, else 0 (trec_eval leaves such values at 0)."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = num / den
    return np.where(den != 0, out, 0.0)


def row_sum(values: np.ndarray) -> np.ndarray:
    """Row sums added left to right (``cumsum``), bit-identical to trec_eval's loops."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0])
    return np.cumsum(values, axis=1)[:, -1]


class Ctx:
    """One block plus the per-row topic statistics, with lazily computed shared matrices."""

    def __init__(self, block: Block, stats: dict, level: int, coll_size: int = 0, qrels=None) -> None:
        self.block = block
        self.pos = block.pos
        self.rel = block.rel
        self.n = block.lengths
        self.width = block.width
        self.rows = block.rel.shape[0]
        self.level = level
        self.coll_size = coll_size
        self.stats = stats
        self.qrels = qrels
        self._cache: dict = {}

    def cached(self, name, make):
        if name not in self._cache:
            self._cache[name] = make()
        return self._cache[name]

    def stat(self, name: str) -> np.ndarray:
        return self.stats[name]

    @property
    def R(self) -> np.ndarray:
        return self.stats["num_rel"]

    @property
    def valid(self) -> np.ndarray:
        return self.cached("valid", lambda: self.pos < PAD_POS)

    @property
    def isrel(self) -> np.ndarray:
        return self.cached("isrel", lambda: self.valid & (self.rel >= self.level))

    @property
    def krel(self) -> np.ndarray:
        return self.cached("krel", lambda: np.cumsum(self.isrel, axis=1, dtype=np.int64))

    @property
    def total_rel(self) -> np.ndarray:
        """Relevant documents retrieved as the measure loops count them (``rel >= level``)."""
        return self.krel[:, -1]

    @property
    def nrr(self) -> np.ndarray:
        """``num_rel_ret`` of form_res_rels: judged (grade >= 0) with grade >= level."""
        return self.cached("nrr", lambda: np.count_nonzero(self.isrel & (self.rel >= 0), axis=1))

    @property
    def grade_gains(self) -> np.ndarray:
        """Each entry's grade as a gain (float; 0 where not positive, unjudged or padding): the exact
        fractional grade when the qrels have them, else the integer grade."""
        def make():
            if self.block.val is not None:
                return np.where(self.valid & (self.block.val > 0), self.block.val, 0.0)
            return np.where(self.valid & (self.rel > 0), self.rel, 0).astype(np.float64)
        return self.cached("grade_gains", make)

    @property
    def rank(self) -> np.ndarray:
        """1-based rank of each entry as a float (1 for padding)."""
        return self.cached("rank", lambda: np.where(self.valid, self.pos + 1, 1).astype(np.float64))

    @property
    def discount(self) -> np.ndarray:
        """``log2(rank + 1)`` of each entry (trec_eval's nDCG discount ``log2(i + 2)``, 0-based i)."""
        def make():
            p = np.where(self.valid, self.pos, 0)
            return log2_table(int(p.max(initial=0)) + 3)[p + 2]
        return self.cached("discount", make)

    @property
    def ap_cum(self) -> np.ndarray:
        """Running sum of precision at each relevant entry (``c_i / i``)."""
        return self.cached("ap_cum", lambda: np.cumsum(
            np.where(self.isrel, self.krel / self.rank, 0.0), axis=1))

    def entries_before(self, k) -> np.ndarray:
        """Number of entries ranked above ``k`` (``pos < k``); ``k`` scalar, per row, or (rows, m)."""
        k = np.asarray(k, dtype=np.int64)
        if k.ndim == 0:
            return np.count_nonzero(self.pos < k, axis=1)
        flat = self.cached("flat_pos", self._flat_pos)
        big, base = flat[1], flat[2]
        row_base = base if k.ndim == 1 else base[:, None]
        target = np.clip(k, 0, big - 1) + row_base
        return np.searchsorted(flat[0], target) - (row_base // big) * self.width

    def _flat_pos(self):
        big = int(np.where(self.valid, self.pos, 0).max(initial=0)) + 2
        clipped = np.where(self.valid, self.pos, big - 1)
        base = np.arange(self.rows, dtype=np.int64) * big
        return (clipped + base[:, None]).ravel(), big, base

    def prefix_at(self, cum: np.ndarray, k) -> np.ndarray:
        """``cum`` (a running matrix over entries) at the last entry ranked above ``k``, 0 if none."""
        cnt = self.entries_before(k)
        idx = np.clip(cnt - 1, 0, max(self.width - 1, 0))
        if cnt.ndim == 1:
            vals = cum[np.arange(self.rows), idx]
        else:
            vals = np.take_along_axis(cum, idx, axis=1)
        return np.where(cnt > 0, vals, 0)

    def count_rel_before(self, k) -> np.ndarray:
        """Relevant documents among the first ``k`` ranks (``c_k``)."""
        return self.prefix_at(self.krel, k)

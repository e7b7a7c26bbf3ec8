"""Judging order (what assessors see) and pool extension (what a new build adds).

Judging order: by default a seeded shuffle per topic, so assessors never see documents in rank order
(rank order would tell them which documents the systems liked). The shuffle sorts each topic's documents
by a keyed hash of (qid, docno) (SipHash via ``pandas.util.hash_pandas_object``, key derived from the
seed): the position of a document depends only on the seed and the pair, so adding documents to a topic
never reorders the ones already there, and the same seed always gives the same order. ``order="pool"``
uses the strategy's own ``pool_rank`` instead.

Extension: a pool built again with new parameters (deeper depth, more runs, more budget) keeps every
existing pair; :func:`new_entries` returns only the pairs not yet pooled, and :func:`assign_judging_order`
with ``start`` numbers them after the existing queue.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd

from .ranking import sorted_topics
from .result import PoolResult

__all__ = ["assign_judging_order", "new_entries"]


def _hash_key(seed: int) -> str:
    return f"{int(seed) % 10**16:016d}"


def assign_judging_order(
    entries: pd.DataFrame,
    *,
    order: str = "shuffled",
    seed: int = 0,
    start: Mapping[str, int] | None = None,
) -> pd.DataFrame:
    """Add ``judging_order`` (1-based within each topic) to pool entries.

    Args:
        entries: qid, docno and (for ``order="pool"``) pool_rank.
        order: ``"shuffled"`` (seeded, default) or ``"pool"`` (pool_rank order).
        seed: the shuffle's seed (record it with the pool).
        start: qid -> last judging_order already used (for an extension): new positions follow it.

    Returns a copy ordered by topic (natural order), then judging_order.

    >>> import pandas as pd
    >>> e = pd.DataFrame({"qid": ["1"] * 3, "docno": ["a", "b", "c"], "pool_rank": [1, 2, 3]})
    >>> assign_judging_order(e, order="pool", start={"1": 10})["judging_order"].tolist()
    [11, 12, 13]
    """
    if order not in ("shuffled", "pool"):
        raise ValueError(f"unknown judging order {order!r} (shuffled or pool)")
    out = entries.copy()
    if out.empty:
        out["judging_order"] = pd.Series(dtype="int64")
        return out
    qids = out["qid"].astype(str)
    codes, uniques = pd.factorize(qids, sort=False)
    names = [str(q) for q in np.asarray(uniques)]
    natural = {q: i for i, q in enumerate(sorted_topics(names))}
    qcode = np.array([natural[q] for q in names], dtype=np.int64)[codes]
    if order == "pool":
        secondary = out["pool_rank"].to_numpy()
    else:
        # hashed as pandas strings (the same hash as of Python str objects, four times faster)
        secondary = pd.util.hash_pandas_object(
            pd.DataFrame({"qid": qids, "docno": out["docno"].astype(str)}),
            index=False, hash_key=_hash_key(seed)).to_numpy()
    tiebreak = pd.factorize(out["docno"].astype(str), sort=True)[0]
    positions = np.lexsort((tiebreak, secondary, qcode))
    out = out.iloc[positions].reset_index(drop=True)
    sorted_code = qcode[positions]
    first = np.flatnonzero(np.r_[True, sorted_code[1:] != sorted_code[:-1]])
    rank = np.arange(len(out), dtype=np.int64) - np.repeat(first, np.diff(np.r_[first, len(out)])) + 1
    if start is not None and len(start):
        offsets = {str(q): int(v) for q, v in dict(start).items()}
        rank = rank + out["qid"].astype(str).map(offsets).fillna(0).to_numpy(dtype=np.int64)
    out["judging_order"] = rank.astype(np.int64)
    return out


def new_entries(existing: pd.DataFrame, result: PoolResult) -> PoolResult:
    """The part of ``result`` that is not already pooled.

    Args:
        existing: the pairs already in the pool (columns qid, docno; other columns ignored).
        result: the pool rebuilt with the new parameters.

    Returns a :class:`PoolResult` with the new entries only (pool_rank as in ``result``) and their
    provenance. Existing pairs are never dropped: pairs of ``existing`` that ``result`` no longer contains
    (e.g. after removing a run) are simply kept where they are, by the caller.
    """
    have = pd.MultiIndex.from_arrays([existing["qid"].astype(str), existing["docno"].astype(str)])
    mine = pd.MultiIndex.from_arrays([result.entries["qid"].astype(str), result.entries["docno"].astype(str)])
    fresh = ~mine.isin(have)
    entries = result.entries[fresh].reset_index(drop=True)
    prov = result.provenance
    prov_index = pd.MultiIndex.from_arrays([prov["qid"].astype(str), prov["docno"].astype(str)])
    provenance = prov[~prov_index.isin(have)].reset_index(drop=True)
    return replace(result, entries=entries, provenance=provenance)

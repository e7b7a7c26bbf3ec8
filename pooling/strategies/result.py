"""The record every pooling strategy returns, and the union of ranked lists it is built from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .ranking import sorted_topics

__all__ = ["ENTRY_COLUMNS", "PoolResult", "provenance_dicts", "union_of_lists"]

ENTRY_COLUMNS = ["qid", "docno", "pool_rank", "min_depth", "n_runs", "stratum", "inclusion_probability"]


@dataclass(frozen=True)
class PoolResult:
    """A pool: which (topic, document) pairs to judge, in the strategy's order, and why.

    Attributes:
        strategy: the strategy's name (``depth``, ``rrf``, ``borda``, ``sampled``, ...).
        params: the parameters that rebuild it (JSON-serialisable).
        entries: one row per pooled pair: ``qid, docno, pool_rank`` (1-based position in the strategy's
            own order within the topic), ``min_depth`` (best rank at which any contributing run
            retrieved it), ``n_runs`` (how many contributing runs retrieved it within the depth),
            ``stratum`` (1-based index of the sampling stratum, <NA> when not sampled) and
            ``inclusion_probability`` (1.0 unless sampled). Ordered by topic then ``pool_rank``.
        provenance: long table ``qid, docno, tag, rank``: which contributing run retrieved which pooled
            pair at which rank (for organizers; never shown to assessors).
    """

    strategy: str
    params: Mapping[str, Any]
    entries: pd.DataFrame
    provenance: pd.DataFrame = field(repr=False)

    def pairs(self) -> pd.DataFrame:
        """The pooled ``qid, docno`` pairs."""
        return self.entries[["qid", "docno"]].reset_index(drop=True)

    def size_per_topic(self) -> pd.Series:
        """Number of pooled documents per topic."""
        return self.entries.groupby("qid", sort=False).size().rename("pool_size")

    def provenance_dicts(self) -> dict[tuple[str, str], dict[str, int]]:
        """``{(qid, docno): {tag: rank}}`` for every pooled pair (what PoolEntry.provenance stores)."""
        return provenance_dicts(self.provenance)

    def __len__(self) -> int:
        return len(self.entries)


def provenance_dicts(provenance: pd.DataFrame) -> dict[tuple[str, str], dict[str, int]]:
    """Turn the long provenance table into ``{(qid, docno): {tag: rank}}``.

    >>> import pandas as pd
    >>> provenance_dicts(pd.DataFrame({"qid": ["1", "1"], "docno": ["d", "d"],
    ...                                "tag": ["a", "b"], "rank": [3, 1]}))
    {('1', 'd'): {'a': 3, 'b': 1}}
    """
    out: dict[tuple[str, str], dict[str, int]] = {}
    for qid, docno, tag, rank in zip(provenance["qid"].to_numpy(dtype=object),
                                     provenance["docno"].to_numpy(dtype=object),
                                     provenance["tag"].to_numpy(dtype=object),
                                     provenance["rank"].to_numpy(), strict=True):
        out.setdefault((qid, docno), {})[tag] = int(rank)
    return out


def union_of_lists(ranked: pd.DataFrame, *, rrf_k: int = 60) -> pd.DataFrame:
    """Union of ranked lists: one row per (qid, docno) with min_depth, n_runs and an RRF score.

    ``ranked`` has columns qid, docno, tag, rank. The result (columns qid, docno, min_depth, n_runs, rrf)
    is ordered by topic (natural order), then min_depth ascending, then RRF score descending
    (sum over runs of 1 / (rrf_k + rank)), then docno: a document every run put first comes before one a
    single run put first.
    """
    if ranked.empty:
        return pd.DataFrame({"qid": pd.Series(dtype="str"), "docno": pd.Series(dtype="str"),
                             "min_depth": pd.Series(dtype="int64"), "n_runs": pd.Series(dtype="int64"),
                             "rrf": pd.Series(dtype="float64")})
    topics = sorted_topics(pd.unique(ranked["qid"]))
    qcode = pd.Index(topics).get_indexer(ranked["qid"])
    dcode, docs = pd.factorize(ranked["docno"], sort=True)
    key = qcode.astype(np.int64) * len(docs) + dcode
    ukey, inverse = np.unique(key, return_inverse=True)
    rank = ranked["rank"].to_numpy(dtype=np.int64)
    min_depth = np.full(len(ukey), np.iinfo(np.int64).max)
    np.minimum.at(min_depth, inverse, rank)
    n_runs = np.bincount(inverse, minlength=len(ukey))
    rrf = np.bincount(inverse, weights=1.0 / (rrf_k + rank), minlength=len(ukey))
    q_of = ukey // len(docs)
    docnames = np.asarray(docs, dtype=object)[ukey % len(docs)]
    order = np.lexsort((ukey % len(docs), -np.round(rrf, 12), min_depth, q_of))
    return pd.DataFrame({
        "qid": pd.array(np.array(topics, dtype=object)[q_of[order]], dtype="str"),
        "docno": pd.array(docnames[order], dtype="str"),
        "min_depth": min_depth[order],
        "n_runs": n_runs[order],
        "rrf": rrf[order],
    })


def make_entries(union: pd.DataFrame, *, stratum=None, inclusion_probability=None) -> pd.DataFrame:
    """Entries in ENTRY_COLUMNS from an ordered union (pool_rank = position within the topic)."""
    entries = union[["qid", "docno", "min_depth", "n_runs"]].reset_index(drop=True)
    entries.insert(2, "pool_rank", entries.groupby("qid", sort=False).cumcount().to_numpy() + 1)
    entries["stratum"] = pd.array(stratum if stratum is not None else [pd.NA] * len(entries), dtype="Int64")
    entries["inclusion_probability"] = (np.asarray(inclusion_probability, dtype=np.float64)
                                        if inclusion_probability is not None else 1.0)
    return entries[ENTRY_COLUMNS]


def restrict_provenance(provenance: pd.DataFrame, entries: pd.DataFrame) -> pd.DataFrame:
    """Provenance rows of the pooled pairs only, as ``qid, docno, tag, rank``."""
    kept = provenance.merge(entries[["qid", "docno"]], on=["qid", "docno"], how="inner")
    return kept[["qid", "docno", "tag", "rank"]].reset_index(drop=True)

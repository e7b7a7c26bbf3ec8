"""Writing a build's round: the pool entries a result adds (queued after the existing ones) and the round's
provenance as one columnar table. Used by :func:`pooling.services.pool_build` inside its transaction."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
from django.db.models import Max

from pooling import provenance as provenance_store
from pooling import strategies as S
from pooling.models import Pool, PoolEntry, PoolProvenance
from pooling.selectors import pool_provenance
from workbench.collections.bulk import insert_rows, prepare_columns
from workbench.formats.ids import sorted_topics


class PoolRefused(ValueError):
    """A build that cannot be done; the message is one line for the user."""


def write_round(pool: Pool, result: S.PoolResult, *, round_no: int, new_pool: bool, part: int = 0
                ) -> tuple[int, int]:
    """Write the entries of ``result`` that the pool does not hold yet (all of them for a new pool),
    queued after the existing ones, and their provenance as one columnar table (``part``: the table of a
    part of a build split by topic, which holds that part's topics). Returns (entries written, topics they
    are on)."""
    return prepare_round(pool, result, round_no=round_no, new_pool=new_pool, part=part)()


def prepare_round(pool: Pool, result: S.PoolResult, *, round_no: int, new_pool: bool, part: int = 0
                  ) -> Callable[[], tuple[int, int]]:
    """:func:`write_round` in two steps: everything but the writing now (judging order, rows in index order,
    the provenance's table), the writing when the returned function is called (a part of a split build
    writes in its turn, ``pooling.split``)."""
    if new_pool:
        fresh, start, rank_offset, provenance = result, {}, {}, result.provenance
    else:
        existing = pd.DataFrame.from_records(
            list(PoolEntry.objects.filter(pool=pool).values_list("topic__qid", "docno")), columns=["qid", "docno"])
        fresh = S.new_entries(existing, result) if len(existing) else result
        per_topic = (PoolEntry.objects.filter(pool=pool).values("topic__qid")
                     .annotate(order=Max("judging_order"), rank=Max("pool_rank"))
                     .values_list("topic__qid", "order", "rank"))
        start = {q: order for q, order, _ in per_topic}
        rank_offset = {q: rank for q, _, rank in per_topic}
        # a deeper or wider round also finds runs that retrieved documents pooled before: keep those too
        provenance = _not_stored(pool, result.provenance)
    table = prepare_provenance(pool, round_no, _by_topic(provenance), part=part) if len(provenance) else None
    rows, written = _entry_rows(pool, fresh.entries, round_no, start, rank_offset)

    def write() -> tuple[int, int]:
        if table is not None:
            table()
        rows()
        return written
    return write


def _entry_rows(pool: Pool, entries: pd.DataFrame, round_no: int, start: dict, rank_offset: dict
                ) -> tuple[Callable[[], int], tuple[int, int]]:
    """The entries' rows prepared (their writing, to call) and (entries, topics they are on)."""
    if entries.empty:
        return (lambda: 0), (0, 0)
    ordered = S.assign_judging_order(entries, order=pool.order, seed=pool.seed, start=start)
    codes, qids = pd.factorize(ordered["qid"], sort=False)
    qids = [str(q) for q in np.asarray(qids)]
    topics = dict(pool.collection.topics.filter(qid__in=qids).values_list("qid", "pk"))
    missing = sorted(set(qids) - set(topics), key=lambda q: (len(q), q))
    if missing:
        raise PoolRefused(f"runs name topics that are not in collection {pool.collection.slug!r}: "
                          f"{', '.join(missing[:10])}")
    topic_ids = np.array([topics[q] for q in qids], dtype=np.int64)[codes]
    # rows go in the order of the unique index (pool, topic, docno): appended at its end, not scattered
    # through it (a sixth less work for PostgreSQL); the queue is judging_order, not the row id
    by_index = np.lexsort((pd.factorize(ordered["docno"], sort=True)[0], topic_ids))
    columns = {
        "topic": topic_ids[by_index],
        "docno": ordered["docno"].take(by_index).reset_index(drop=True),
        "judging_order": ordered["judging_order"].to_numpy(dtype=np.int64)[by_index],
        "pool_rank": (ordered["pool_rank"].to_numpy(dtype=np.int64)
                      + np.array([rank_offset.get(q, 0) for q in qids], dtype=np.int64)[codes])[by_index],
        "min_depth": ordered["min_depth"].to_numpy(dtype=np.int64)[by_index],
        "inclusion_probability": ordered["inclusion_probability"].to_numpy(dtype=np.float64)[by_index],
        "stratum": pd.array(ordered["stratum"].array, dtype="Int64").take(by_index),
    }
    return prepare_columns(PoolEntry, columns, {"pool": pool.pk, "round": round_no}), (len(ordered), len(qids))


def _by_topic(provenance: pd.DataFrame) -> pd.DataFrame:
    """The rows by topic in natural order (then as the strategy gave them: by run, rank), so that the tables
    of a build split by topic, read one after the other, are the table of a build by one worker."""
    codes, qids = pd.factorize(provenance["qid"], sort=False)
    natural = {q: i for i, q in enumerate(sorted_topics(str(q) for q in qids))}
    order = np.argsort(np.array([natural[str(q)] for q in qids], dtype=np.int64)[codes], kind="stable")
    return provenance.take(order).reset_index(drop=True)


def prepare_provenance(pool: Pool, round_no: int, provenance: pd.DataFrame, *, part: int = 0) -> Callable[[], int]:
    """One PoolProvenance row (megabytes at depth 100: on PostgreSQL by a binary COPY): the table encoded now,
    stored when the returned function is called."""
    row = (pool.pk, round_no, part, len(provenance), provenance_store.encode(provenance))
    return lambda: insert_rows(PoolProvenance, ("pool", "round", "part", "rows", "table"),
                               ("int8", "int4", "int4", "int4", "bytea"), [row])


def _not_stored(pool: Pool, provenance: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``provenance`` whose (qid, docno, tag) the pool does not record yet."""
    stored = pool_provenance(pool)
    if stored.empty or provenance.empty:
        return provenance

    def keys(frame: pd.DataFrame) -> pd.MultiIndex:
        return pd.MultiIndex.from_arrays([frame[c].astype(str) for c in ("qid", "docno", "tag")])

    return provenance[~keys(provenance).isin(keys(stored))].reset_index(drop=True)

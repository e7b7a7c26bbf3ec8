"""Building and extending pools from the stored runs, with the strategies of ``pooling.strategies``.

A pool is never rebuilt in place: building again with deeper k, more runs or more budget adds only
the pairs that are new (in a new round, queued after the existing ones) and keeps every entry and
every judgment that exists.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from threading import Lock

import numpy as np
import pandas as pd
from django.db import connection, transaction
from django.db.models import Max

from pooling import provenance as provenance_store
from pooling import strategies as S
from pooling.models import Pool, PoolEntry, PoolProvenance
from pooling.selectors import pool_provenance
from workbench.bulk import insert_columns
from workbench.models import Collection
from workbench.selectors import run_frames

ADAPTIVE = tuple(S.STRATEGIES)  # mtf, maxmean, bandit
FIXED = ("depth", "rrf", "borda", "sampled")


class PoolRefused(ValueError):
    pass


@dataclass(frozen=True)
class PoolBuildSummary:
    pool: Pool
    added: int
    total: int
    topics: int
    runs: list[str]
    round: int
    timings: dict[str, float] = field(default_factory=dict)  # seconds spent: "read runs", "pool", "write"


def _runs_for(collection: Collection, tags: Sequence[str] | None):
    if tags:
        known = set(collection.runs.filter(tag__in=tags).values_list("tag", flat=True))
        unknown = [t for t in tags if t not in known]
        if unknown:
            raise PoolRefused(f"no run {', '.join(map(repr, unknown))} in collection {collection.slug!r}")
        frames = run_frames(collection, tags=tags)
    else:
        frames = run_frames(collection, contributing_only=True)
    if not frames:
        raise PoolRefused(f"collection {collection.slug!r} has no contributing runs to pool")
    meta = dict(collection.runs.filter(tag__in=list(frames)).values_list("tag", "team"))
    priorities = dict(collection.runs.filter(tag__in=list(frames)).values_list("tag", "pool_priority"))
    return frames, meta, priorities


def _strategy_result(strategy: str, frames, *, depth, budget, total_budget, seed, teams, priorities,
                     runs_per_team, strata) -> S.PoolResult:
    common = {"teams": teams, "priorities": priorities, "runs_per_team": runs_per_team}
    if strategy == "depth":
        if depth is None:
            raise PoolRefused("depth pooling needs --depth K")
        return S.depth_pool(frames, depth, **common)
    if strategy in ("rrf", "borda"):
        if budget is None and total_budget is None:
            raise PoolRefused(f"{strategy} pooling needs a budget (--budget N per topic or --total-budget N)")
        return S.fusion_pool(frames, budget, method=strategy, depth=depth or 100, total_budget=total_budget,
                             **common)
    if strategy == "sampled":
        return S.stratified_pool(frames, strata or S.DEFAULT_STRATA, seed=seed, **common)
    raise PoolRefused(f"unknown strategy {strategy!r} ({', '.join(FIXED + ADAPTIVE)})")


def _write_entries(pool: Pool, result: S.PoolResult, *, round_no: int, new_pool: bool) -> tuple[int, int]:
    """Write the entries of ``result`` that the pool does not hold yet (all of them for a new pool),
    queued after the existing ones, and their provenance as one columnar table. Returns (entries
    written, topics they are on)."""
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
    if len(provenance):
        _store_provenance(pool, round_no, provenance)
    if fresh.entries.empty:
        return 0, 0
    ordered = S.assign_judging_order(fresh.entries, order=pool.order, seed=pool.seed, start=start)
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
    insert_columns(PoolEntry, columns, {"pool": pool.pk, "round": round_no})
    return len(ordered), len(qids)


def _store_provenance(pool: Pool, round_no: int, provenance: pd.DataFrame) -> None:
    """One PoolProvenance row. On PostgreSQL the table (megabytes at depth 100) goes by a binary COPY:
    as a query parameter it would travel hex-encoded, twice the bytes and five times the time."""
    blob = provenance_store.encode(provenance)
    if connection.vendor != "postgresql":
        PoolProvenance.objects.create(pool=pool, round=round_no, rows=len(provenance), table=blob)
        return
    meta = PoolProvenance._meta
    quoted = ", ".join(connection.ops.quote_name(meta.get_field(name).column)
                       for name in ("pool", "round", "rows", "table"))
    with connection.cursor() as cursor, cursor.cursor.copy(
            f"COPY {connection.ops.quote_name(meta.db_table)} ({quoted}) FROM STDIN WITH (FORMAT binary)") as copy:
        copy.set_types(["int8", "int4", "int4", "bytea"])  # bigint pool id, integer round and rows
        copy.write_row((pool.pk, round_no, len(provenance), blob))


def _not_stored(pool: Pool, provenance: pd.DataFrame) -> pd.DataFrame:
    """The rows of ``provenance`` whose (qid, docno, tag) the pool does not record yet."""
    stored = pool_provenance(pool)
    if stored.empty or provenance.empty:
        return provenance

    def keys(frame: pd.DataFrame) -> pd.MultiIndex:
        return pd.MultiIndex.from_arrays([frame[c].astype(str) for c in ("qid", "docno", "tag")])

    return provenance[~keys(provenance).isin(keys(stored))].reset_index(drop=True)


@transaction.atomic
def pool_build(*, collection: Collection, name: str = "main", strategy: str = "depth", depth: int | None = None,
               budget: int | None = None, total_budget: int | None = None, tags: Sequence[str] | None = None,
               runs_per_team: int | None = None, seed: int = 0, order: str = "shuffled",
               strata: Sequence[S.Stratum] | None = None, shared: bool = False) -> PoolBuildSummary:
    """Build the pool ``name`` of the collection, or extend it if it exists.

    Fixed strategies (depth, rrf, borda, sampled) write their entries now. Adaptive ones (mtf,
    maxmean, bandit) write each topic's first document now and the next ones as judgments arrive
    (:func:`pool_advance`).
    """
    clock = time.perf_counter()
    frames, teams, priorities = _runs_for(collection, tags)
    timings = {"read runs": time.perf_counter() - clock}
    pool, created = Pool.objects.get_or_create(
        collection=collection, name=name,
        defaults={"strategy": strategy, "seed": seed, "order": order})
    if not created and pool.strategy != strategy:
        raise PoolRefused(f"pool {pool} was built with {pool.strategy!r}; extend it with the same strategy "
                          f"or build another pool (--name)")
    round_no = 1 if created else max(PoolEntry.objects.filter(pool=pool).aggregate(m=Max("round"))["m"] or 0,
                                     pool.provenance_tables.aggregate(m=Max("round"))["m"] or 0) + 1
    params = {"runs": sorted(frames), "depth": depth, "budget": budget, "total_budget": total_budget,
              "runs_per_team": runs_per_team, "seed": seed, "order": order}
    if strategy in ADAPTIVE:
        adaptive = S.adaptive_pool(strategy, frames, budget, depth=depth or 100, total_budget=total_budget,
                                   seed=seed, shared=shared, teams=teams, priorities=priorities,
                                   runs_per_team=runs_per_team)
        params.update({"shared": shared, "budgets": {q: int(b) for q, b in adaptive.budgets.items()},
                       "depth": depth or 100, "runs": adaptive.params["runs"]})
        pool.params = {**params, "history": pool.params.get("history", []) + [params]}
        pool.save()
        _adaptive_cache.drop(pool.pk)
        added = sum(1 for qid in adaptive.topics if pool_advance(pool=pool, qid=qid) is not None)
    else:
        clock = time.perf_counter()
        result = _strategy_result(strategy, frames, depth=depth, budget=budget, total_budget=total_budget,
                                  seed=seed, teams=teams, priorities=priorities, runs_per_team=runs_per_team,
                                  strata=strata)
        timings["pool"] = time.perf_counter() - clock
        params.update({k: v for k, v in result.params.items() if k not in params or params[k] is None})
        if strategy == "sampled":
            params["strata"] = [list(s) for s in (strata or S.DEFAULT_STRATA)]
        pool.params = {**params, "history": pool.params.get("history", []) + [
            {k: v for k, v in params.items() if k != "stratum_sizes"}]}
        pool.save()
        clock = time.perf_counter()
        added, added_topics = _write_entries(pool, result, round_no=round_no, new_pool=created)
        timings["write"] = time.perf_counter() - clock
    if created and strategy not in ADAPTIVE:
        total, topics = added, added_topics
    else:
        total = PoolEntry.objects.filter(pool=pool).count()
        topics = PoolEntry.objects.filter(pool=pool).values("topic").distinct().count()
    return PoolBuildSummary(pool=pool, added=added, total=total, topics=topics, runs=sorted(frames),
                            round=round_no, timings=timings)


# --- adaptive pools: the judging queue asks for the next document ---------------------------------

class _AdaptiveCache:
    """Per-process cache of per-topic adaptive pool objects, keyed by (pool id, qid)."""

    def __init__(self) -> None:
        self._objects: dict[tuple[int, str], tuple[S.AdaptivePool, int]] = {}
        self._lock = Lock()

    def get(self, key):
        with self._lock:
            return self._objects.get(key)

    def put(self, key, value) -> None:
        with self._lock:
            self._objects[key] = value

    def drop(self, pool_id: int) -> None:
        with self._lock:
            for key in [k for k in self._objects if k[0] == pool_id]:
                del self._objects[key]


_adaptive_cache = _AdaptiveCache()


def _topic_runs(frames: Mapping[str, pd.DataFrame], qid: str) -> dict[str, pd.DataFrame]:
    out = {}
    for tag, frame in frames.items():
        mask = (frame["qid"] == qid).to_numpy()
        if mask.any():
            out[tag] = frame[mask]
    return out


def _relevance(pool: Pool, qid: str, docnos) -> dict[str, bool]:
    """Of these documents of the topic, those with a judgment in the collection (any assessor, any
    pool, imported or not): relevant or not by the latest one ("cannot judge" counts as not relevant)."""
    from judging.models import Judgment

    relevant_from = pool.collection.relevant_from
    known: dict[str, bool] = {}
    for docno, grade in (Judgment.objects.filter(collection=pool.collection, topic__qid=qid, docno__in=list(docnos))
                         .order_by("id").values_list("docno", "grade")):
        known[docno] = grade is not None and grade >= relevant_from
    return known


def pool_advance(*, pool: Pool, qid: str) -> PoolEntry | None:
    """Add the adaptive strategy's next document for the topic, unless one is still unjudged or the
    topic's budget is spent. Returns the new entry, or None.

    A document the collection has already judged (another pool, imported qrels) is not asked again: it
    joins the pool with its judgment, the strategy learns from it at once and offers the next one (it
    counts against the topic's budget, as every document the strategy picks does)."""
    from judging.models import Assignment, AssignmentItem

    if pool.strategy not in ADAPTIVE:
        return None
    entries = PoolEntry.objects.filter(pool=pool, topic__qid=qid)
    offered = list(entries.order_by("judging_order").values_list("docno", flat=True))
    known = _relevance(pool, qid, offered)
    if any(docno not in known for docno in offered):
        return None  # the current document is still waiting for a judgment
    sequence = [(docno, known[docno]) for docno in offered]  # in the order the strategy offered them
    key = (pool.pk, qid)
    cached = _adaptive_cache.get(key)
    if cached is None or cached[1] > len(sequence):
        frames = run_frames(pool.collection, tags=pool.params["runs"])
        params = pool.params
        budget = params.get("budgets", {}).get(qid, params.get("budget"))
        obj = S.adaptive_pool(pool.strategy, _topic_runs(frames, qid), {qid: int(budget or 0)},
                              depth=params.get("depth", 100), seed=pool.seed, shared=params.get("shared", False))
        cached = (obj, 0)
    obj, recorded = cached
    for docno, relevant in sequence[recorded:]:
        obj.next_document(qid)  # replay as it happened: the strategy offers, the assessor judges
        obj.record(qid, docno, relevant)
    recorded = len(sequence)
    pooled = set(offered)
    topic = pool.collection.topics.get(qid=qid)
    order = (entries.aggregate(m=Max("judging_order"))["m"] or 0)
    entry = None
    while True:
        docno = obj.next_document(qid)
        if docno is None or docno in pooled:
            break
        order += 1
        ranked = obj.ranked
        hits = ranked[(ranked["qid"].astype(str) == qid) & (ranked["docno"].astype(str) == docno)]
        entry = PoolEntry.objects.create(
            pool=pool, topic=topic, docno=docno, judging_order=order, pool_rank=order,
            min_depth=int(hits["rank"].min()) if len(hits) else None,
            provenance={str(t): int(r) for t, r in zip(hits["tag"], hits["rank"], strict=True)})
        pooled.add(docno)
        judged = _relevance(pool, qid, [docno])
        if docno not in judged:
            # the assessors of the topic get the new document at the end of their queue
            for assignment in Assignment.objects.filter(pool=pool, topic=topic):
                AssignmentItem.objects.get_or_create(assignment=assignment, docno=docno,
                                                     defaults={"judging_order": order})
            break
        obj.record(qid, docno, judged[docno])
        recorded += 1
    _adaptive_cache.put(key, (obj, recorded))
    return entry


def seed_from(value: int | None) -> int:
    """A recorded seed: the given one, or a fresh random one."""
    return int(value) if value is not None else int(np.random.default_rng().integers(0, 2**31 - 1))

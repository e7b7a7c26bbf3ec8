"""Adaptive pools grow as judgments arrive: judging asks the pool for each topic's next document.

One direction, no callbacks: judging calls :func:`pool_advance` with the judgments it knows of the topic's
documents (``judged``, a function of docnos) and queues the entries it returns that still need a judgment
(``judging.queueing.pool_advance_queued``). Pooling never reads judgments itself: it keeps what it was told
on its entries (``PoolEntry.relevant``), and its own callers (a build that raises the budget, a topic
stopped by hand, the pools page) replay from that record.

The strategy object of a topic (Move-to-Front, a bandit, cal) is rebuilt from the pool's stored parameters
and replayed over the documents it offered with their judgments, then kept in process (``workbench.cache``)
so that the next judgment only adds one step.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd
from django.db import transaction
from django.db.models import Count, Max

from pooling.feature_tasks import request_features
from pooling.features import corpus_for
from pooling.models import Pool, PoolEntry, PoolTopicState
from pooling.strategies import registry
from pooling.strategies.cal import CalParams
from workbench.cache import LRU
from workbench.collections.selectors import run_frames
from workbench.jsonsafe import numpy_scalar

logger = logging.getLogger(__name__)

#: per process: (pool id, qid) -> (the topic's strategy object, judgments it has learnt from)
_strategies = LRU(size=65536)


#: per process and topic: one advance at a time works on the topic's strategy object (the database lock that
#: serialised them was the judgment's transaction; the planning now runs outside any)
_topic_locks: defaultdict[tuple[int, str], threading.Lock] = defaultdict(threading.Lock)
_topic_locks_lock = threading.Lock()


def forget(pool: Pool) -> None:
    """Drop the pool's strategy objects (its parameters changed)."""
    _strategies.drop(lambda key: key[0] == pool.pk)


def _topic_runs(frames: Mapping[str, pd.DataFrame], qid: str) -> dict[str, pd.DataFrame]:
    out = {}
    for tag, frame in frames.items():
        mask = (frame["qid"] == qid).to_numpy()
        if mask.any():
            out[tag] = frame[mask]
    return out


#: ``docnos -> {docno: relevant}`` of those documents of the topic that have a judgment
Judged = Callable[[Sequence[str]], Mapping[str, bool]]


@dataclass(frozen=True)
class Advance:
    """What :func:`pool_advance` did: every entry it added, and those of them that still need a judgment
    (the caller queues these for the topic's assessors)."""

    added: tuple[PoolEntry, ...] = ()
    to_judge: tuple[PoolEntry, ...] = ()


def pool_record(pool: Pool, qid: str) -> Judged:
    """The judgments the pool was told of its own entries (by judging, through :func:`pool_advance`)."""
    def judged(docnos: Sequence[str]) -> dict[str, bool]:
        return dict(PoolEntry.objects.filter(pool=pool, topic__qid=qid, docno__in=list(docnos),
                                             relevant__isnull=False).values_list("docno", "relevant"))
    return judged


def _topic_strategy(pool: Pool, qid: str, sequence: list[tuple[str, bool]]):
    """The topic's strategy object, replayed over ``sequence`` (documents offered, with their judgments)."""
    key = (pool.pk, qid)
    cached = _strategies.get(key)
    if cached is None or cached[1] > len(sequence):
        params = pool.params
        budget = params.get("budgets", {}).get(qid, params.get("budget"))
        frames = run_frames(pool.collection, tags=params["runs"])
        chosen = registry.get(pool.strategy)
        strategy = chosen.build(_topic_runs(frames, qid), registry.PoolParams(
            budget={qid: int(budget or 0)}, depth=params.get("depth", 100), seed=pool.seed,
            shared=params.get("shared", False), cal=CalParams.stored(params["cal"]) if "cal" in params else None,
            corpus=corpus_for(pool.collection, compute=False, stale=request_features) if chosen.needs_corpus else None))
        cached = (strategy, 0)
    strategy, recorded = cached
    for docno, relevant in sequence[recorded:]:
        strategy.next_document(qid)  # replay as it happened: the strategy offers, the assessor judges
        strategy.record(qid, docno, relevant)
    reason = pool.params.get("stopped", {}).get(qid)
    if reason is not None and hasattr(strategy, "stop"):  # an organizer stopped the topic by hand
        strategy.stop(qid, reason)
    return strategy


def topic_status(pool: Pool, qid: str) -> dict | None:
    """A cal topic's stopping state and estimates (:meth:`.strategies.cal.CalPool.status`) after the
    judgments the pool was told so far; None for strategies without one."""
    if not registry.get(pool.strategy).stops:
        return None
    offered = list(PoolEntry.objects.filter(pool=pool, topic__qid=qid).order_by("judging_order")
                   .values_list("docno", flat=True))
    known = pool_record(pool, qid)(offered)
    judged = []
    for docno in offered:
        if docno not in known:
            break
        judged.append((docno, known[docno]))
    strategy = _topic_strategy(pool, qid, judged)
    _strategies.put((pool.pk, qid), (strategy, len(judged)))
    return _store_status(pool, qid, strategy)


def _store_status(pool: Pool, qid: str, strategy) -> dict | None:
    """Keep the topic's stopping state where every web process reads it (:class:`PoolTopicState`)."""
    if not registry.get(pool.strategy).stops:
        return None
    status = json.loads(json.dumps(strategy.status(qid), default=numpy_scalar))
    PoolTopicState.objects.update_or_create(pool=pool, qid=qid, defaults={"status": status})
    return status


def _provenance(strategy, qid: str, docno: str) -> tuple[int | None, dict[str, int]]:
    """The document's best rank in the pool's runs, and its rank in each run that retrieved it."""
    ranked = strategy.ranked
    hits = ranked[(ranked["qid"].astype(str) == qid) & (ranked["docno"].astype(str) == docno)]
    return (int(hits["rank"].min()) if len(hits) else None,
            {str(t): int(r) for t, r in zip(hits["tag"], hits["rank"], strict=True)})


@dataclass(frozen=True)
class _Plan:
    """What an advance will write, worked out from what is committed, outside any transaction: the entries'
    judgments to keep (``learn``), and when every offered document is judged, the strategy's new entries
    (docno, order, relevant, min_depth, provenance) and its state after them."""

    state: tuple[int, int]  # the topic's entries when planned: how many, the last judging order
    learn: tuple[tuple[bool, tuple[int, ...]], ...]
    new: tuple[tuple, ...] = ()
    strategy: tuple | None = None  # (strategy object, judgments it learnt from, status to store)


def _learning(stored: Sequence[tuple[str, int, bool | None, int]], known: Mapping[str, bool]
              ) -> tuple[tuple[bool, tuple[int, ...]], ...]:
    """The entries whose kept judgment (``PoolEntry.relevant``) differs from ``known``, by the value to keep."""
    return tuple((value, tuple(pk for docno, _, relevant, pk in stored
                               if docno in known and bool(known[docno]) is value and relevant is not value))
                 for value in (True, False))


def _plan(pool: Pool, qid: str, judged: Judged) -> _Plan:
    stored = list(PoolEntry.objects.filter(pool=pool, topic__qid=qid).order_by("judging_order")
                  .values_list("docno", "judging_order", "relevant", "pk"))
    offered = [docno for docno, *_ in stored]
    known = dict(judged(offered))
    learn = _learning(stored, known)
    state = (len(offered), max((order for _, order, *_ in stored), default=0) or 0)
    if any(docno not in known for docno in offered):
        return _Plan(state, learn)  # the current document is still waiting for a judgment
    sequence = [(docno, known[docno]) for docno in offered]  # in the order the strategy offered them
    strategy = _topic_strategy(pool, qid, sequence)
    recorded, pooled, order, new = len(sequence), set(offered), state[1], []
    while (docno := strategy.next_document(qid)) is not None and docno not in pooled:
        order += 1
        relevant = judged([docno]).get(docno)
        new.append((docno, order, relevant, *_provenance(strategy, qid, docno)))
        pooled.add(docno)
        if relevant is None:
            break
        strategy.record(qid, docno, relevant)
        recorded += 1
    status = (json.loads(json.dumps(strategy.status(qid), default=numpy_scalar))
              if registry.get(pool.strategy).stops else None)
    return _Plan(state, learn, tuple(new), (strategy, recorded, status))


def _write(pool: Pool, qid: str, plan: _Plan) -> Advance:
    """The plan's writes, in the caller's short transaction."""
    for value, pks in plan.learn:  # kept on the entries, so that the pool's own callers can replay
        if pks:
            PoolEntry.objects.filter(pk__in=pks).update(relevant=value)
    if plan.strategy is None:
        return Advance()
    strategy, recorded, status = plan.strategy
    topic = pool.collection.topics.get(qid=qid)
    added = tuple(PoolEntry.objects.create(pool=pool, topic=topic, docno=docno, judging_order=order, pool_rank=order,
                                           relevant=relevant, min_depth=depth, provenance=provenance)
                  for docno, order, relevant, depth, provenance in plan.new)
    _strategies.put((pool.pk, qid), (strategy, recorded))
    if status is not None:
        PoolTopicState.objects.update_or_create(pool=pool, qid=qid, defaults={"status": status})
    return Advance(added, tuple(entry for entry in added if entry.relevant is None))


#: how many times an advance plans again when another one changed the topic (or the pool) meanwhile
ATTEMPTS = 3


def pool_advance(*, pool: Pool, qid: str, judged: Judged | None = None) -> Advance:
    """Add the adaptive strategy's next document for the topic, unless one is still unjudged or the
    topic's budget is spent.

    ``judged``: the judgments the caller knows of the topic's documents (judging gives the collection's);
    without it, those the pool was told before (:func:`pool_record`). A document ``judged`` knows already
    (another pool, imported qrels) is not asked again: it joins the pool with its judgment, the strategy
    learns from it at once and offers the next one (it counts against the topic's budget, as every
    document the strategy picks does). Returns the entries added; the caller queues ``to_judge``.

    The next document (a ``cal`` retrain included) is worked out from what is committed, outside any
    transaction; only its writes take one, short, holding the pool's row. When another advance added to the
    topic, or the pool changed (a topic stopped), meanwhile, the advance plans again from what is then
    committed: a document is never added twice, nor after its topic was stopped."""
    if not registry.is_adaptive(pool.strategy):
        return Advance()
    judged = judged if judged is not None else pool_record(pool, qid)
    key = (pool.pk, qid)
    with _topic_locks_lock:
        lock = _topic_locks[key]
    with lock:
        return _advance(pool, qid, judged, key)


def _advance(pool: Pool, qid: str, judged: Judged, key: tuple[int, str]) -> Advance:
    for _ in range(ATTEMPTS):
        try:
            plan = _plan(pool, qid, judged)
            if not any(pks for _, pks in plan.learn) and plan.strategy is None:
                return Advance()  # nothing to write
            with transaction.atomic():
                fresh = Pool.objects.select_for_update().get(pk=pool.pk)
                entries = PoolEntry.objects.filter(pool=pool, topic__qid=qid).aggregate(n=Count("pk"),
                                                                                         m=Max("judging_order"))
                if (fresh.updated_at == pool.updated_at and fresh.params.get("stopped") == pool.params.get("stopped")
                        and (entries["n"], entries["m"] or 0) == plan.state):
                    return _write(pool, qid, plan)
        except BaseException:
            _strategies.drop(lambda cached: cached == key)  # rebuilt from what is committed next time
            raise
        _strategies.drop(lambda cached: cached == key)  # planned on what changed meanwhile: plan again
        pool = fresh
    logger.warning("pool %s topic %s: no advance after %d attempts (other advances meanwhile); the next "
                   "judgment or queue fill advances it", pool.pk, qid, ATTEMPTS)
    return Advance()

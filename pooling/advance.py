"""Adaptive pools grow as judgments arrive: the judging queue asks the pool for each topic's next document.

The strategy object of a topic (Move-to-Front, a bandit) is rebuilt from the pool's stored parameters and
replayed over the documents it offered with their judgments, then kept in process (``workbench.cache``)
so that the next judgment only adds one step. Judgments come from the reader judging registers
(:mod:`pooling.extensions`); a document the pool adds that still needs a judgment is announced with
``document_offered`` so that judging can queue it for the topic's assessors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pandas as pd
from django.db.models import Max

from pooling.extensions import document_offered, judged_documents
from pooling.features import corpus_for
from pooling.models import Pool, PoolEntry, PoolTopicState
from pooling.strategies import registry
from pooling.strategies.cal import CalParams
from workbench.cache import LRU
from workbench.jsonsafe import numpy_scalar
from workbench.models import Topic
from workbench.selectors import run_frames

#: per process: (pool id, qid) -> (the topic's strategy object, judgments it has learnt from)
_strategies = LRU(size=65536)


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


def _relevance(pool: Pool, qid: str, docnos) -> dict[str, bool]:
    return judged_documents(pool.collection, qid, list(docnos))


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
            corpus=corpus_for(pool.collection, compute=False) if chosen.needs_corpus else None))
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
    judgments made so far; None for strategies without one."""
    if not registry.get(pool.strategy).needs_corpus:
        return None
    offered = list(PoolEntry.objects.filter(pool=pool, topic__qid=qid).order_by("judging_order")
                   .values_list("docno", flat=True))
    known = _relevance(pool, qid, offered)
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
    if not registry.get(pool.strategy).needs_corpus:
        return None
    status = json.loads(json.dumps(strategy.status(qid), default=numpy_scalar))
    PoolTopicState.objects.update_or_create(pool=pool, qid=qid, defaults={"status": status})
    return status


def _add_entry(pool: Pool, topic: Topic, strategy, docno: str, order: int) -> PoolEntry:
    ranked = strategy.ranked
    hits = ranked[(ranked["qid"].astype(str) == topic.qid) & (ranked["docno"].astype(str) == docno)]
    return PoolEntry.objects.create(
        pool=pool, topic=topic, docno=docno, judging_order=order, pool_rank=order,
        min_depth=int(hits["rank"].min()) if len(hits) else None,
        provenance={str(t): int(r) for t, r in zip(hits["tag"], hits["rank"], strict=True)})


def pool_advance(*, pool: Pool, qid: str) -> PoolEntry | None:
    """Add the adaptive strategy's next document for the topic, unless one is still unjudged or the
    topic's budget is spent. Returns the last entry added, or None.

    A document the collection has already judged (another pool, imported qrels) is not asked again: it
    joins the pool with its judgment, the strategy learns from it at once and offers the next one (it
    counts against the topic's budget, as every document the strategy picks does)."""
    if not registry.is_adaptive(pool.strategy):
        return None
    entries = PoolEntry.objects.filter(pool=pool, topic__qid=qid)
    offered = list(entries.order_by("judging_order").values_list("docno", flat=True))
    known = _relevance(pool, qid, offered)
    if any(docno not in known for docno in offered):
        return None  # the current document is still waiting for a judgment
    sequence = [(docno, known[docno]) for docno in offered]  # in the order the strategy offered them
    strategy = _topic_strategy(pool, qid, sequence)
    recorded, pooled = len(sequence), set(offered)
    topic = pool.collection.topics.get(qid=qid)
    order = entries.aggregate(m=Max("judging_order"))["m"] or 0
    entry = None
    while (docno := strategy.next_document(qid)) is not None and docno not in pooled:
        order += 1
        entry = _add_entry(pool, topic, strategy, docno, order)
        pooled.add(docno)
        judged = _relevance(pool, qid, [docno])
        if docno not in judged:
            document_offered.send(sender=Pool, pool=pool, entry=entry)
            break
        strategy.record(qid, docno, judged[docno])
        recorded += 1
    _strategies.put((pool.pk, qid), (strategy, recorded))
    _store_status(pool, qid, strategy)
    return entry

"""Pools from answer runs (the runs that contribute):

- **cited segments** for relevance judging, as today: each answer run becomes a ranking of the segments its
  answer cites (in order of first citation) and the depth-k strategy of ``pooling`` pools them into an
  ordinary :class:`~pooling.models.Pool` (default name ``answers``; depth: every cited segment), judged,
  assigned and exported like any pool;
- an **answer pool** (kind ``nugget``): every answer, for nugget assignment;
- a **support pool** (kind ``support``): every (sentence, segment it cites) pair, for support judging.

Answer and support pools are extended, never rebuilt: building again adds only the items that are new (runs
imported since), queued after the existing ones. Items are queued per topic in a seeded shuffled order, so that
no run is always judged first. :func:`answer_tasks_assign` gives a pool's topics to assessors
(:class:`~answers.models.AnswerTask`).
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from django.contrib.auth.models import User
from django.core.exceptions import EmptyResultSet
from django.db import connections, transaction
from django.db.models import Max, QuerySet

from answers.models import Answer, AnswerPool, AnswerPoolItem, AnswerSentence, AnswerTask
from pooling.services import PoolBuildSummary, PoolRefused, pool_build
from workbench.collections.bulk import insert_columns
from workbench.models import Collection

__all__ = ["AnswerPoolSummary", "answer_pool_build", "answer_tasks_assign", "cited_frames", "cited_pool_build"]


@dataclass(frozen=True)
class AnswerPoolSummary:
    pool: AnswerPool
    added: int
    total: int
    topics: int


def _answers(collection: Collection, tags: Sequence[str] | None):
    answers = Answer.objects.filter(run__collection=collection)
    if tags:
        known = set(collection.answer_runs.filter(tag__in=tags).values_list("tag", flat=True))
        unknown = [t for t in tags if t not in known]
        if unknown:
            raise PoolRefused(f"no answer run {', '.join(map(repr, unknown))} in collection {collection.slug!r}")
        return answers.filter(run__tag__in=list(tags))
    return answers.filter(run__contributes=True)


def cited_frames(collection: Collection, tags: Sequence[str] | None = None) -> dict[str, pd.DataFrame]:
    """Each answer run as a ranking (qid, docno, rank, score): the segments each answer cites, in order of first
    citation (scores descending in that order)."""
    by_tag: dict[str, list[tuple[str, list]]] = {}
    for tag, qid, cited in _answers(collection, tags).order_by().values_list("run__tag", "topic__qid", "cited"):
        if cited:
            by_tag.setdefault(tag, []).append((qid, cited))
    frames = {}
    for tag in sorted(by_tag):  # each run's answers by topic, each answer's citations in order (no frame a run)
        answers = sorted(by_tag[tag], key=lambda answer: answer[0])
        position = np.fromiter((k for _, cited in answers for k in range(len(cited))), dtype=np.int64)
        frames[tag] = pd.DataFrame({"qid": np.array([qid for qid, cited in answers for _ in cited], dtype=object),
                                    "docno": np.array([seg for _, cited in answers for seg in cited], dtype=object),
                                    "rank": position + 1, "score": -position.astype(float)})
    return frames


def cited_pool_build(*, collection: Collection, name: str = "answers", depth: int | None = None,
                     tags: Sequence[str] | None = None, seed: int = 0) -> PoolBuildSummary:
    """The cited segments of the answer runs pooled for relevance judging (depth-k over their citations)."""
    frames = cited_frames(collection, tags)
    if not frames:
        raise PoolRefused(f"collection {collection.slug!r} has no answer cited a segment: nothing to pool")
    deepest = max(int(f.groupby("qid").size().max()) for f in frames.values())
    return pool_build(collection=collection, name=name, strategy="depth", depth=depth or deepest, frames=frames,
                      seed=seed)


def _rows(rows: QuerySet) -> list[tuple]:
    """A ``values_list``'s rows by its SQL (its ordering kept), without Django's row by row conversion; a JSON
    field as the driver gives it (its text on SQLite, decoded on PostgreSQL)."""
    try:
        sql, params = rows.query.sql_with_params()
    except EmptyResultSet:  # a filter no row can pass
        return []
    with connections[rows.db].cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _candidates(collection: Collection, kind: str, tags: Sequence[str] | None) -> pd.DataFrame:
    """(topic, answer, sentence, docno) of every item the pool may hold."""
    answers = _answers(collection, tags)
    if kind == AnswerPool.Kind.NUGGET:
        rows = [(topic, pk, None, "") for pk, topic in answers.values_list("pk", "topic_id")]
    else:
        # a sentence citing nothing has no pair: its citations are not even read (JSON decoding is most of the time)
        sentences = _rows(AnswerSentence.objects.filter(answer__in=answers).exclude(citations=[]).values_list(
            "answer__topic_id", "answer_id", "pk", "citations"))
        rows = [(topic, answer, pk, seg) for topic, answer, pk, cited in sentences
                for seg in dict.fromkeys(json.loads(cited) if isinstance(cited, str) else cited)]
    return pd.DataFrame(rows, columns=["topic", "answer", "sentence", "docno"])


@transaction.atomic
def answer_pool_build(*, collection: Collection, kind: str, name: str | None = None,
                      tags: Sequence[str] | None = None, seed: int = 0, user: User | None = None) -> AnswerPoolSummary:
    """Build (or extend) the answer pool ``name`` (default: the kind's name) of kind ``nugget`` or ``support``."""
    if kind not in AnswerPool.Kind.values:
        raise PoolRefused(f"an answer pool is of kind nugget or support, not {kind!r}")
    name = name or kind
    pool, created = AnswerPool.objects.get_or_create(
        collection=collection, name=name, defaults={"kind": kind, "created_by": user,
                                                    "params": {"runs": list(tags or []), "seed": seed}})
    if pool.kind != kind:
        raise PoolRefused(f"answer pool {name!r} holds {pool.kind} items, not {kind}: give another name")
    found = _candidates(collection, kind, tags)
    held = set(pool.items.values_list("answer_id", "sentence_id", "docno"))
    fresh = found[[(a, None if pd.isna(s) else int(s), d) not in held
                   for a, s, d in zip(found["answer"], found["sentence"], found["docno"], strict=True)]] if held else found
    start = dict(pool.items.values("topic_id").annotate(m=Max("judging_order")).values_list("topic_id", "m"))
    parts = []
    for topic, part in fresh.groupby("topic", sort=True):
        order = np.random.default_rng([seed, zlib.crc32(str(topic).encode())]).permutation(len(part))
        first = start.get(topic, -1) + 1
        parts.append(part.iloc[order].assign(judging_order=np.arange(first, first + len(part))))
    items = pd.concat(parts) if parts else fresh.assign(judging_order=0)
    # as columns, without a model instance each (workbench.collections.bulk)
    added = insert_columns(AnswerPoolItem, {
        "topic": items["topic"].to_numpy(), "answer": items["answer"].to_numpy(),
        "sentence": [None if s is None or s != s else int(s) for s in items["sentence"].tolist()],  # None or NaN
        "docno": items["docno"].tolist(),
        "judging_order": items["judging_order"].to_numpy()}, {"pool": pool.pk})
    total = pool.items.count()
    return AnswerPoolSummary(pool, added, total, pool.items.values("topic").distinct().count())


@transaction.atomic
def answer_tasks_assign(*, pool: AnswerPool, assessors: Sequence[User], overlap: int = 1,
                        topics: Sequence[str] | None = None, user: User | None = None) -> int:
    """Give each topic of the pool (or only those of ``topics``, by qid) to ``overlap`` assessors, round robin
    over the topics (a topic an assessor has already is kept); the number of tasks created."""
    if not assessors or overlap < 1 or overlap > len(assessors):
        raise PoolRefused(f"overlap must be between 1 and the number of assessors ({len(assessors)})")
    items = pool.items.filter(topic__qid__in=list(topics)) if topics is not None else pool.items
    topics = sorted(set(items.values_list("topic_id", flat=True)))
    existing = set(pool.tasks.values_list("topic_id", "assessor_id"))
    tasks = [AnswerTask(pool=pool, topic_id=topic, assessor=assessors[(k + j) % len(assessors)], created_by=user)
             for k, topic in enumerate(topics) for j in range(overlap)
             if (topic, assessors[(k + j) % len(assessors)].pk) not in existing]
    AnswerTask.objects.bulk_create(tasks)
    return len(tasks)

"""Which topics are fully judged: every document the collection's pools hold for the topic has a current human
judgment (a grade or "cannot judge") by at least one assessor or imported qrels. A topic with some of its
pool judged is *partial*: its scores count the unjudged pooled documents as non-relevant, and results
pages and the release say so."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection
from django.db.models import IntegerField, QuerySet, Value

from judging.models import Judgment
from pooling.models import Pool, PoolEntry
from workbench.formats.ids import sorted_topics
from workbench.models import Collection

__all__ = ["Completeness", "Counts", "joined_completeness", "pool_judged_counts", "topic_completeness"]


@dataclass(frozen=True)
class Completeness:
    complete: list[str]          # every pooled document judged
    partial: dict[str, tuple[int, int]]  # qid -> (judged, pooled)
    unjudged: list[str]          # pooled, nothing judged yet

    @property
    def has_partial(self) -> bool:
        return bool(self.partial)


def topic_completeness(collection: Collection, topics: list[str] | None = None, *,
                       counts: dict[str, Counts] | None = None) -> Completeness:
    """Which topics (or which of ``topics``: a slice a part of a split job reads alone) are fully judged;
    ``counts``: :func:`pool_judged_counts` of the collection's pools on those topics, read already."""
    if counts is None:
        counts = pool_judged_counts(collection, Pool.objects.filter(collection=collection), topics)
    pooled = {qid: found for qid, found in counts.items() if found.pooled}
    complete, partial, unjudged = [], {}, []
    for qid in sorted_topics(pooled):
        done, size = pooled[qid].judged_in_pool, pooled[qid].pooled
        if done == size:
            complete.append(qid)
        elif done:
            partial[qid] = (done, size)
        else:
            unjudged.append(qid)
    return Completeness(complete=complete, partial=partial, unjudged=unjudged)


@dataclass(frozen=True)
class Counts:
    pooled: int          # documents the pools hold for the topic
    judged_in_pool: int  # of which a human judged (a grade or "cannot judge", revisions included)
    judged: int          # documents a human judged, pooled or not


def pool_judged_counts(collection: Collection, pools: QuerySet[Pool], topics: list[str] | None = None
                       ) -> dict[str, Counts]:
    """:class:`Counts` by qid of the documents ``pools`` hold (each once, whichever pools hold it) and those
    with a human judgment (machines' left out), on ``topics`` only if given: topics with neither are absent.

    Counted by the database in one grouping of the pooled and the judged (topic, document) pairs put end to
    end (millions of pairs: fetching them took a minute at 1,000 runs), which costs the same whatever the
    planner's statistics say (a join of the two can turn into millions of index probes when they are stale)."""
    entries = PoolEntry.objects.filter(pool__in=pools)
    judgments = Judgment.objects.filter(collection=collection).exclude(source=Judgment.Source.MACHINE)
    if topics is not None:
        ids = list(collection.topics.filter(qid__in=list(topics)).values_list("pk", flat=True))
        entries, judgments = entries.filter(topic_id__in=ids), judgments.filter(topic_id__in=ids)
    pairs = entries.order_by().values("topic_id", "docno", side=Value(1, output_field=IntegerField())).union(
        judgments.order_by().values("topic_id", "docno", side=Value(2, output_field=IntegerField())), all=True)
    sql, params = pairs.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT topic_id, SUM(p), SUM(p * j), SUM(j) FROM (SELECT topic_id, docno,"
            " MAX(CASE WHEN side = 1 THEN 1 ELSE 0 END) AS p, MAX(CASE WHEN side = 2 THEN 1 ELSE 0 END) AS j"
            f" FROM ({sql}) AS pairs GROUP BY topic_id, docno) AS documents GROUP BY topic_id", params)
        rows = cursor.fetchall()
    qids = dict(collection.topics.filter(pk__in=[row[0] for row in rows]).values_list("pk", "qid"))
    return {qids[topic]: Counts(int(pooled), int(both), int(judged)) for topic, pooled, both, judged in rows}


def joined_completeness(parts: list[Completeness]) -> Completeness:
    """:func:`topic_completeness` of every topic from its values on slices of the topics (each topic in one)."""
    partial = {q: tuple(v) for part in parts for q, v in part.partial.items()}
    return Completeness(complete=sorted_topics(q for part in parts for q in part.complete),
                        partial={q: partial[q] for q in sorted_topics(partial)},
                        unjudged=sorted_topics(q for part in parts for q in part.unjudged))

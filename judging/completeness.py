"""Which topics are fully judged: every document the collection's pools hold for the topic has a current human
judgment (a grade or "cannot judge") by at least one assessor or imported qrels. A topic with some of its
pool judged is *partial*: its scores count the unjudged pooled documents as non-relevant, and results
pages and the release say so."""

from __future__ import annotations

from dataclasses import dataclass

from judging.models import Judgment
from pooling.models import PoolEntry
from workbench.formats.ids import sorted_topics
from workbench.models import Collection

__all__ = ["Completeness", "joined_completeness", "topic_completeness"]


@dataclass(frozen=True)
class Completeness:
    complete: list[str]          # every pooled document judged
    partial: dict[str, tuple[int, int]]  # qid -> (judged, pooled)
    unjudged: list[str]          # pooled, nothing judged yet

    @property
    def has_partial(self) -> bool:
        return bool(self.partial)


def topic_completeness(collection: Collection, topics: list[str] | None = None) -> Completeness:
    """Which topics (or which of ``topics``: a slice a part of a split job reads alone) are fully judged."""
    entries = PoolEntry.objects.filter(pool__collection=collection, pool__published=True)
    if topics is not None:
        entries = entries.filter(topic__qid__in=list(topics))
    pooled: dict[str, set[str]] = {}
    for qid, docno in entries.values_list("topic__qid", "docno"):
        pooled.setdefault(qid, set()).add(docno)
    judged: dict[str, set[str]] = {}
    for qid, docno in (Judgment.objects.filter(collection=collection, topic__qid__in=list(pooled))
                       .exclude(source=Judgment.Source.MACHINE)  # a machine's grade leaves a topic to the humans
                       .values_list("topic__qid", "docno").distinct()):
        judged.setdefault(qid, set()).add(docno)
    complete, partial, unjudged = [], {}, []
    for qid in sorted_topics(pooled):
        done = len(pooled[qid] & judged.get(qid, set()))
        if done == len(pooled[qid]):
            complete.append(qid)
        elif done:
            partial[qid] = (done, len(pooled[qid]))
        else:
            unjudged.append(qid)
    return Completeness(complete=complete, partial=partial, unjudged=unjudged)


def joined_completeness(parts: list[Completeness]) -> Completeness:
    """:func:`topic_completeness` of every topic from its values on slices of the topics (each topic in one)."""
    partial = {q: tuple(v) for part in parts for q, v in part.partial.items()}
    return Completeness(complete=sorted_topics(q for part in parts for q in part.complete),
                        partial={q: partial[q] for q in sorted_topics(partial)},
                        unjudged=sorted_topics(q for part in parts for q in part.unjudged))

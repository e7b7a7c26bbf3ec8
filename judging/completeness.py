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

__all__ = ["Completeness", "topic_completeness"]


@dataclass(frozen=True)
class Completeness:
    complete: list[str]          # every pooled document judged
    partial: dict[str, tuple[int, int]]  # qid -> (judged, pooled)
    unjudged: list[str]          # pooled, nothing judged yet

    @property
    def has_partial(self) -> bool:
        return bool(self.partial)


def topic_completeness(collection: Collection) -> Completeness:
    pooled: dict[str, set[str]] = {}
    for qid, docno in PoolEntry.objects.filter(pool__collection=collection, pool__published=True).values_list("topic__qid", "docno"):
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

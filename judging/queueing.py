"""What judging gives adaptive pools (connected in ``JudgingConfig.ready()``, see ``pooling.extensions``):
the collection's judgments of a topic's documents, and a place in the assessors' queues for each document
an adaptive pool offers."""

from __future__ import annotations

from collections.abc import Sequence

from judging.models import Assignment, AssignmentItem, Judgment


def judged_documents(collection, qid: str, docnos: Sequence[str]) -> dict[str, bool]:
    """Of these documents of the topic, those with a judgment in the collection (any assessor, any pool,
    imported or not; machine assessors' left out): relevant or not by the latest one ("cannot judge" counts
    as not relevant)."""
    known: dict[str, bool] = {}
    for docno, grade in (Judgment.objects.filter(collection=collection, topic__qid=qid, docno__in=list(docnos))
                         .exclude(source=Judgment.Source.MACHINE).order_by("id").values_list("docno", "grade")):
        known[docno] = grade is not None and collection.is_relevant(grade)
    return known


def queue_offered_document(sender, *, pool, entry, **kwargs) -> None:
    """The assessors of the topic get the new document at the end of their queue."""
    for assignment in Assignment.objects.filter(pool=pool, topic_id=entry.topic_id):
        AssignmentItem.objects.get_or_create(assignment=assignment, docno=entry.docno,
                                             defaults={"judging_order": entry.judging_order})

"""Assigning pooled documents to assessors, balanced by reading effort.

Each unit of work (a whole topic, or a batch of a topic's pooled documents in judging order) needs
``overlap`` distinct assessors. Units are taken from the largest effort down, and each goes to the
``overlap`` assessors with the least work so far (longest-processing-time-first greedy, Graham 1969),
counting the unjudged work they already hold. Effort is reading effort: the words of each document
plus a fixed cost per document for reading the topic and deciding.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Q, Subquery

from judging.models import Assignment, AssignmentItem, Judgment
from pooling.models import Pool, PoolEntry
from pooling.strategies import registry
from workbench.models import Document

#: Words an assessor "reads" per document on top of its text: the topic, the decision, the keypress.
PER_DOCUMENT_EFFORT = 50
#: Effort of a document whose text the workbench does not hold.
UNKNOWN_DOCUMENT_LENGTH = 300


class AssignmentRefused(ValueError):
    pass


@dataclass(frozen=True)
class AssignmentSummary:
    items: int
    documents: int
    per_assessor: dict[str, dict[str, int]]  # username -> {"items": n, "effort": words}


def _unit_effort(lengths: Sequence[int]) -> int:
    return sum(lengths) + PER_DOCUMENT_EFFORT * len(lengths)


def _pool_lengths(pool: Pool) -> dict[str, int]:
    """Words of every pooled document the workbench holds."""
    pooled = PoolEntry.objects.filter(pool=pool).values("docno")
    return dict(Document.objects.filter(collection=pool.collection, docno__in=Subquery(pooled))
                .values_list("docno", "length"))


def _current_load(pool: Pool, assessors: Sequence[User], lengths: dict[str, int]) -> dict[int, int]:
    """Unjudged effort each assessor already holds in the pool."""
    load = {a.pk: 0 for a in assessors}
    pending = AssignmentItem.objects.filter(assignment__pool=pool, assignment__assessor__in=assessors,
                                            latest__isnull=True).values_list("assignment__assessor_id", "docno")
    for pk, docno in pending.iterator():
        load[pk] += lengths.get(docno, UNKNOWN_DOCUMENT_LENGTH) + PER_DOCUMENT_EFFORT
    return load


@transaction.atomic
def assignments_create(*, pool: Pool, assessors: Sequence[User], topics: Sequence[str] | None = None,
                       overlap: int = 1, batch_size: int | None = None,
                       created_by: User | None = None) -> AssignmentSummary:
    """Give every pooled document of ``topics`` (default: all) to ``overlap`` distinct assessors.

    With ``batch_size`` the unit is a batch of that many documents of a topic; without it, a whole
    topic goes to the same assessors (TREC's practice: one assessor sees a topic's whole pool).
    Documents already assigned to enough assessors are skipped, so re-running after a pool grows
    assigns only the new documents.
    """
    assessors = list(dict.fromkeys(assessors))
    if not assessors:
        raise AssignmentRefused("name at least one assessor")
    if overlap < 1 or overlap > len(assessors):
        raise AssignmentRefused(f"overlap {overlap} needs between 1 and {len(assessors)} assessors")
    entries = PoolEntry.objects.filter(pool=pool).select_related(None)
    if topics is not None:
        known = set(pool.collection.topics.filter(qid__in=topics).values_list("qid", flat=True))
        unknown = [q for q in topics if q not in known]
        if unknown:
            raise AssignmentRefused(f"topic(s) not in collection {pool.collection.slug!r}: {', '.join(unknown)}")
        entries = entries.filter(topic__qid__in=topics)
    rows = list(entries.order_by("topic_id", "judging_order").values_list("topic_id", "docno", "judging_order"))
    holders: dict[tuple[int, str], set[int]] = defaultdict(set)
    for topic_id, docno, assessor_id in AssignmentItem.objects.filter(assignment__pool=pool).values_list(
            "assignment__topic_id", "docno", "assignment__assessor_id"):
        holders[(topic_id, docno)].add(assessor_id)
    if registry.is_adaptive(pool.strategy):
        # an adaptive pool takes in documents the collection judged before it offered them, without
        # giving them to anybody (pooling.advance.pool_advance): nobody is asked to judge those again
        judged = set(Judgment.objects.filter(collection=pool.collection, topic_id__in={r[0] for r in rows})
                     .values_list("topic_id", "docno"))
        rows = [r for r in rows if (r[0], r[1]) not in judged or (r[0], r[1]) in holders]
    if not rows:
        raise AssignmentRefused(f"pool {pool} has no documents for these topics")
    lengths = _pool_lengths(pool)

    units: list[tuple[int, list[tuple[str, int]]]] = []  # (topic_id, [(docno, order)])
    by_topic: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for topic_id, docno, order in rows:
        if len(holders[(topic_id, docno)]) < overlap:
            by_topic[topic_id].append((docno, order))
    for topic_id, docs in by_topic.items():
        size = batch_size or len(docs)
        units.extend((topic_id, docs[i:i + size]) for i in range(0, len(docs), size))

    def effort_of(docs: list[tuple[str, int]]) -> int:
        return _unit_effort([lengths.get(d, UNKNOWN_DOCUMENT_LENGTH) for d, _ in docs])

    units.sort(key=lambda unit: -effort_of(unit[1]))
    load = _current_load(pool, assessors, lengths)
    by_pk = {a.pk: a for a in assessors}
    assignment_cache: dict[tuple[int, int], Assignment] = {}
    new_items: list[AssignmentItem] = []
    per_assessor = {a.username: {"items": 0, "effort": 0} for a in assessors}

    for topic_id, docs in units:
        # each document may already have holders; choose among those who do not hold it yet
        taken = set().union(*(holders[(topic_id, d)] for d, _ in docs))
        candidates = sorted((pk for pk in load if pk not in taken), key=lambda pk: (load[pk], pk))
        needed = overlap - min(len(holders[(topic_id, d)]) for d, _ in docs)
        for pk in candidates[:needed]:
            key = (topic_id, pk)
            assignment = assignment_cache.get(key)
            if assignment is None:
                assignment, _ = Assignment.objects.get_or_create(
                    pool=pool, topic_id=topic_id, assessor=by_pk[pk], defaults={"created_by": created_by})
                assignment_cache[key] = assignment
            docs_for = [(d, o) for d, o in docs if len(holders[(topic_id, d)]) < overlap]
            effort = effort_of(docs_for)
            new_items.extend(AssignmentItem(assignment=assignment, docno=d, judging_order=o) for d, o in docs_for)
            for d, _ in docs_for:
                holders[(topic_id, d)].add(pk)
            assignment.effort += effort
            load[pk] += effort
            per_assessor[by_pk[pk].username]["items"] += len(docs_for)
            per_assessor[by_pk[pk].username]["effort"] += effort
    AssignmentItem.objects.bulk_create(new_items, batch_size=2000)
    for assignment in assignment_cache.values():
        assignment.save(update_fields=["effort"])
    return AssignmentSummary(items=len(new_items), documents=len({(i.assignment.topic_id, i.docno) for i in new_items}),
                             per_assessor=per_assessor)


def assignment_progress(assignment_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """(judged, total) per assignment."""
    rows = (AssignmentItem.objects.filter(assignment_id__in=assignment_ids).values("assignment_id")
            .annotate(total=Count("id"), judged=Count("id", filter=Q(latest__isnull=False))))
    return {row["assignment_id"]: (row["judged"], row["total"]) for row in rows}

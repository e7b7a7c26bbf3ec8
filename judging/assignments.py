"""Assigning pooled documents to assessors, balanced by reading effort (the rule: ``judging.allocation``).

This module reads what allocation needs (the pool's documents, who holds what, each assessor's unjudged
work), lets :func:`judging.allocation.allocate` decide, and writes the assignments.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Q, Subquery

from judging.allocation import allocate, effort
from judging.duplicates import covered_by_propagation
from judging.models import Assignment, AssignmentItem, Judgment
from judging.queueing import take_in_judged
from pooling.models import Pool, PoolEntry
from pooling.strategies import registry
from workbench.access.audit import audit_record
from workbench.models import Document


class AssignmentRefused(ValueError):
    pass


@dataclass(frozen=True)
class AssignmentSummary:
    items: int
    documents: int
    per_assessor: dict[str, dict[str, int]]  # username -> {"items": n, "effort": words}


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
        load[pk] += effort([docno], lengths)
    return load


def _rows_to_assign(pool: Pool, topics: Sequence[str] | None) -> list[tuple[int, str, int]]:
    """(topic id, docno, judging order) of the pool's documents on these topics (default: all)."""
    entries = PoolEntry.objects.filter(pool=pool).select_related(None)
    if topics is not None:
        known = set(pool.collection.topics.filter(qid__in=topics).values_list("qid", flat=True))
        unknown = [q for q in topics if q not in known]
        if unknown:
            raise AssignmentRefused(f"topic(s) not in collection {pool.collection.slug!r}: {', '.join(unknown)}")
        entries = entries.filter(topic__qid__in=topics)
    return list(entries.order_by("topic_id", "judging_order").values_list("topic_id", "docno", "judging_order"))


def _holders(pool: Pool) -> dict[tuple[int, str], set[int]]:
    """Who already holds each (topic id, docno) of the pool."""
    holders: dict[tuple[int, str], set[int]] = defaultdict(set)
    for topic_id, docno, assessor_id in AssignmentItem.objects.filter(assignment__pool=pool).values_list(
            "assignment__topic_id", "docno", "assignment__assessor_id"):
        holders[(topic_id, docno)].add(assessor_id)
    return holders


def _not_judged_elsewhere(pool: Pool, rows, holders) -> list:
    """An adaptive pool takes in documents the collection judged before it offered them, without giving
    them to anybody (:func:`judging.queueing.take_in_judged`): nobody is asked to judge those again."""
    if not registry.is_adaptive(pool.strategy):
        return rows
    judged = set(Judgment.objects.filter(collection=pool.collection, topic_id__in={r[0] for r in rows})
                 .exclude(source=Judgment.Source.MACHINE).values_list("topic_id", "docno"))
    return [r for r in rows if (r[0], r[1]) not in judged or (r[0], r[1]) in holders]


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
    # an adaptive pool learns first what the collection judged of the documents it offered
    take_in_judged(pool, topics if topics is not None else pool.collection.topics.values_list("qid", flat=True))
    holders = _holders(pool)
    rows = _not_judged_elsewhere(pool, _rows_to_assign(pool, topics), holders)
    if not rows:
        raise AssignmentRefused(f"pool {pool} has no documents for these topics")
    # those who hold a document already count towards its overlap: a second assessor for a topic is
    # overlap 2 with the new assessor named
    held = max((len(holders.get((topic, docno), ())) for topic, docno, _ in rows), default=0)
    if overlap < 1 or overlap > len(assessors) + held:
        raise AssignmentRefused(f"overlap {overlap} needs between 1 and {len(assessors) + held} assessors "
                                f"({len(assessors)} named, up to {held} holding these documents already)")
    lengths = _pool_lengths(pool)
    pieces = allocate(rows, holders=holders, lengths=lengths, load=_current_load(pool, assessors, lengths),
                      overlap=overlap, batch_size=batch_size)
    if not pieces:
        raise AssignmentRefused(f"nothing to assign: every document of these topics already has {overlap} "
                                f"assessor{'s' if overlap > 1 else ''} (raise the overlap to add one)")
    summary = _write_pieces(pool, pieces, {a.pk: a for a in assessors}, created_by)
    audit_record(collection=pool.collection, actor=created_by, action="assessors assigned",
                 detail=f"pool {pool.name}: {summary.items} documents to {', '.join(summary.per_assessor)}")
    return summary


def _write_pieces(pool: Pool, pieces, by_pk: dict[int, User], created_by: User | None) -> AssignmentSummary:
    assignments: dict[tuple[int, int], Assignment] = {}
    new_items: list[AssignmentItem] = []
    per_assessor = {a.username: {"items": 0, "effort": 0} for a in by_pk.values()}
    for piece in pieces:
        key = (piece.topic, piece.assessor)
        if key not in assignments:
            assignments[key], _ = Assignment.objects.get_or_create(
                pool=pool, topic_id=piece.topic, assessor=by_pk[piece.assessor], defaults={"created_by": created_by})
        assignment = assignments[key]
        new_items.extend(AssignmentItem(assignment=assignment, docno=d, judging_order=o) for d, o in piece.docs)
        assignment.effort += piece.effort
        per_assessor[by_pk[piece.assessor].username]["items"] += len(piece.docs)
        per_assessor[by_pk[piece.assessor].username]["effort"] += piece.effort
    AssignmentItem.objects.bulk_create(new_items, batch_size=2000)
    for assignment in assignments.values():
        assignment.save(update_fields=["effort"])
    return AssignmentSummary(items=len(new_items), documents=len({(i.assignment.topic_id, i.docno) for i in new_items}),
                             per_assessor=per_assessor)


def assignment_progress(assignment_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """(judged, total) per assignment; a document skipped because its near-duplicate class is judged for the
    topic (``judging.duplicates``) counts as judged."""
    rows = (AssignmentItem.objects.filter(assignment_id__in=assignment_ids).values("assignment_id")
            .annotate(total=Count("id"),
                      judged=Count("id", filter=Q(latest__isnull=False) | covered_by_propagation())))
    return {row["assignment_id"]: (row["judged"], row["total"]) for row in rows}

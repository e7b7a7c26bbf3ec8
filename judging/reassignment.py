"""Changing who judges what after assigning: move an assignment's unjudged documents to another assessor,
or take them back. Judgments already made stay (the log is append-only) and keep counting."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from judging.assignments import AssignmentRefused
from judging.models import Assignment, AssignmentItem

__all__ = ["assignment_transfer", "assignment_withdraw"]


@transaction.atomic
def assignment_withdraw(*, assignment: Assignment) -> int:
    """Take back the documents of ``assignment`` not judged yet; the assignment goes when nothing judged is
    left in it. Returns how many documents were taken back."""
    open_items = AssignmentItem.objects.filter(assignment=assignment, latest__isnull=True)
    count = open_items.count()
    open_items.delete()
    if not AssignmentItem.objects.filter(assignment=assignment).exists():
        assignment.delete()
    return count


@transaction.atomic
def assignment_transfer(*, assignment: Assignment, to: User, created_by: User | None = None) -> int:
    """Move the unjudged documents of ``assignment`` to ``to`` (same pool and topic); documents ``to``
    holds already stay where they are. Returns how many moved."""
    if to.pk == assignment.assessor_id:
        raise AssignmentRefused(f"{to.username} holds this assignment already")
    target, _ = Assignment.objects.get_or_create(pool=assignment.pool, topic=assignment.topic, assessor=to,
                                                 defaults={"created_by": created_by})
    held = set(AssignmentItem.objects.filter(assignment=target).values_list("docno", flat=True))
    moving = [item for item in AssignmentItem.objects.filter(assignment=assignment, latest__isnull=True)
              if item.docno not in held]
    if not moving:
        raise AssignmentRefused(f"nothing to move: {assignment.assessor.username} has no unjudged document "
                                f"{to.username} does not hold already")
    AssignmentItem.objects.filter(pk__in=[item.pk for item in moving]).update(assignment=target)
    if not AssignmentItem.objects.filter(assignment=assignment).exists():
        assignment.delete()
    return len(moving)

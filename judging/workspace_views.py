"""The assessor's way around their work: the topic boundary between two topics, "my judgments" of a topic
(every document with its current grade, each open to revise), and skipping a document for later."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.db.models import Max
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from judging import selectors
from judging.models import Assignment, AssignmentItem


def _own_assignment(user, assignment_id: int) -> Assignment:
    found = (Assignment.objects.select_related("topic", "pool__collection")
             .filter(pk=assignment_id, assessor=user).first())
    if found is None:
        raise Http404("No such topic in your assignments.")
    return found


@login_required
def boundary(request: HttpRequest, done_id: int, next_id: int) -> HttpResponse:
    """A topic is finished: say so, and show the next topic (title, description, narrative) first."""
    done, following = _own_assignment(request.user, done_id), _own_assignment(request.user, next_id)
    judged, total = selectors.assignment_counts(done.pk)
    return render(request, "judging/boundary.html", {"done": done, "next": following, "judged": judged,
                                                      "total": total})


@login_required
def my_judgments(request: HttpRequest, assignment_id: int) -> HttpResponse:
    """Every document of one of the assessor's topics with their current judgment, to open and revise."""
    assignment = _own_assignment(request.user, assignment_id)
    labels = assignment.pool.collection.grade_labels
    items = list(AssignmentItem.objects.filter(assignment=assignment).select_related("latest")
                 .order_by("judging_order"))
    rows = [{"item": i, "judgment": (None if i.latest is None else "cannot judge" if i.latest.cannot_judge
                                     else labels.get(i.latest.grade, i.latest.grade)),
             "comment": bool(i.latest and (i.latest.comment or i.latest.rationale))} for i in items]
    judged = sum(1 for r in rows if r["judgment"] is not None)
    return render(request, "judging/my_judgments.html", {"assignment": assignment, "rows": rows,
                                                          "judged": judged, "total": len(rows)})


@transaction.atomic
def item_skip(item: AssignmentItem) -> None:
    """Put an unjudged document at the end of its topic's queue (a judged one stays where it is)."""
    if item.latest_id is not None:
        return
    last = AssignmentItem.objects.filter(assignment_id=item.assignment_id).aggregate(m=Max("judging_order"))["m"]
    if last is not None and last > item.judging_order:
        AssignmentItem.objects.filter(pk=item.pk).update(judging_order=last + 1)

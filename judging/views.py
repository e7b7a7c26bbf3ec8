"""The assessor's workspace: the queue, and the judging page (keyboard first, works without JS)."""

from __future__ import annotations

import json
import re
import time
import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core import signing
from django.db import OperationalError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from judging import selectors
from judging.forms import JudgmentForm
from judging.highlight import highlight, query_terms
from judging.services import JudgmentRefused, judgment_record, may_grade
from judging.workspace_views import item_skip
from workbench.corpora.corpus import document_for

_SHOWN_AT = "judging.shown_at"
#: Without JavaScript, time on a page is measured server-side and capped at this (idle tabs).
MAX_SERVER_MEASURED_MS = 10 * 60 * 1000
#: A document copied in from a corpus used by reference when first opened brings this many of the assessor's
#: next documents with it (one read of the corpus, one insert), so that the next pages read a row each
COPY_AHEAD = 50


@login_required
def queue(request: HttpRequest) -> HttpResponse:
    rows = selectors.assessor_queue(request.user)
    remaining = sum(r["total"] - r["judged"] for r in rows)
    return render(request, "judging/queue.html", {"rows": rows, "remaining": remaining})


@login_required
def next_document(request: HttpRequest) -> HttpResponse:
    assignment = request.GET.get("assignment", "")
    # an id the database can hold (ASCII digits, below 2**63); anything else means "any assignment"
    valid = re.fullmatch(r"[0-9]{1,18}", assignment) is not None
    item = selectors.next_item_for(request.user, assignment_id=int(assignment) if valid else None)
    if item is None:
        messages.info(request, "Nothing left to judge: every document of your assignments is judged.")
        return redirect("judging:queue")
    return redirect("judging:item", item_id=item.pk)


def _server_measured_ms(shown_at: str | None) -> int | None:
    """Time since the page was rendered, from a signed timestamp in the form (no-JS fallback)."""
    if not shown_at:
        return None
    try:
        since = int(signing.Signer(salt=_SHOWN_AT).unsign(shown_at))
    except (signing.BadSignature, ValueError):
        return None
    return max(0, min(int(time.time() * 1000) - since, MAX_SERVER_MEASURED_MS))


def _key_for(grades: list[int]) -> dict[int, str]:
    """The key that records each grade: its digit when the scale is 0..9, else its position."""
    if all(0 <= g <= 9 for g in grades):
        return {g: str(g) for g in grades}
    return {g: str(i) for i, g in enumerate(grades)}


@login_required
@require_http_methods(["GET", "POST"])
def item(request: HttpRequest, item_id: int) -> HttpResponse:
    entry = selectors.item_for(request.user, item_id)
    if entry is None:
        raise Http404("No such document in your assignments.")
    assignment = entry.assignment
    collection = assignment.pool.collection
    if request.method == "POST" and request.POST.get("skip"):
        item_skip(entry)
        return _after_judgment(request, assignment, skipped=entry.pk)
    if request.method == "POST":
        held = document_for(collection, entry.docno)
        form = JudgmentForm(request.POST, grades=collection.grades, text_length=len(held.text if held else ""))
        if form.is_valid():
            data = form.cleaned_data
            spent = data.get("time_spent_ms")
            if spent is None:
                spent = _server_measured_ms(data.get("shown_at"))
            try:
                judgment_record(item_id=entry.pk, user=request.user, grade=data["grade"],
                                cannot_judge=data["cannot_judge"], client_token=data["client_token"],
                                time_spent_ms=spent, comment=data["comment"], rationale=data["rationale"],
                                passages=data["passages"],
                                readable=held is not None and bool(held.title or held.text))
            except JudgmentRefused as exc:
                form.add_error(None, str(exc))
            except OperationalError:  # the database stayed locked or went away: say so, keep the choice
                form.add_error(None, "Your judgment was NOT saved: the database is busy. Your choice is marked "
                                     "below; press it again to retry.")
                response = _render_item(request, entry, form, pending=data)
                response.status_code = 503
                return response
            else:
                return _after_judgment(request, assignment)
    else:
        form = None
    return _render_item(request, entry, form)


def _after_judgment(request: HttpRequest, assignment, skipped: int | None = None) -> HttpResponse:
    """Where the assessor goes next: the next document of the topic; at a topic's end, the topic boundary
    page; when everything is judged, the queue."""
    following = selectors.next_item_for(request.user, assignment_id=assignment.pk)
    if following is None:
        messages.info(request, "Nothing left to judge: every document of your assignments is judged.")
        return redirect("judging:queue")
    if following.assignment_id != assignment.pk:
        return redirect("judging:boundary", done_id=assignment.pk, next_id=following.assignment_id)
    if request.headers.get("X-Judge-Swap"):
        # the page's script swaps the next document in: send it now, saving a round trip
        response = _render_item(request, selectors.item_for(request.user, following.pk))
        response["X-Judge-Url"] = reverse("judging:item", args=[following.pk])
        return response
    return redirect("judging:item", item_id=following.pk)


def _render_item(request: HttpRequest, entry, form: JudgmentForm | None = None, pending: dict | None = None
                 ) -> HttpResponse:
    assignment = entry.assignment
    collection = assignment.pool.collection
    topic = assignment.topic
    # a corpus used by reference: copied in on first opening, with the next documents of the queue
    document = document_for(collection, entry.docno, along=lambda: selectors.upcoming_docnos(entry, COPY_AHEAD))
    terms = query_terms(topic.title, topic.description)
    judged, total = selectors.assignment_counts(assignment.pk)
    before, after = selectors.neighbours(entry)
    keys = _key_for(collection.grades)
    readable = document is not None and bool(document.title or document.text)
    link = collection.document_link(entry.docno)
    context = {
        "entry": entry, "assignment": assignment, "topic": topic, "collection": collection,
        "document": document if readable else None, "document_link": link,
        "may_grade": may_grade(collection, readable=readable),
        "title_html": highlight(document.title if document and document.title else entry.docno, terms),
        "text_html": highlight(document.text if document else "", terms),
        "scale": [{"grade": g, "label": collection.grade_labels[g], "key": keys[g],
                   "description": collection.grade_descriptions[g]} for g in collection.grades],
        "scale_defined": any(collection.grade_descriptions.values()),
        "current": entry.latest, "judged": judged, "total": total,
        "percent": round(100 * judged / total) if total else 0,
        "before": before, "after": after, "form": form,
        # a choice that could not be saved, shown marked so that the assessor can send it again
        "pending_grade": None if not pending or pending.get("cannot_judge") else pending.get("grade"),
        "pending_cannot": bool(pending and pending.get("cannot_judge")),
        "passages_json": json.dumps(entry.latest.passages if entry.latest else []),
        "client_token": uuid.uuid4().hex,
        "shown_at": signing.Signer(salt=_SHOWN_AT).sign(str(int(time.time() * 1000))),
    }
    return render(request, "judging/item.html", context, status=400 if form and form.errors else 200)

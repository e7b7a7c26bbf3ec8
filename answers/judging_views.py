"""The assessor's pages for answers: their answer tasks, one nugget at a time against one answer (1/2/3 =
support, partial, none; phone first), and each cited sentence against its segment (full, partial, none).
Works without JavaScript (plain posts and redirects); no run tag is ever shown (blind to systems)."""

from __future__ import annotations

import re
import uuid

from django.contrib.auth.decorators import login_required
from django.db import OperationalError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from answers.judging import (
    AnswerRefused,
    my_tasks,
    next_nugget,
    next_support,
    nugget_assignment_record,
    support_judgment_record,
    task_for,
)
from answers.models import AnswerPool, AnswerSentence, NuggetAssignment, SupportJudgment
from workbench.collections.selectors import may_organize
from workbench.corpora.corpus import document_for
from workbench.models import Collection

NUGGET_CHOICES = [("support", "1", "Support"), ("partial_support", "2", "Partial"), ("not_support", "3", "None")]
SUPPORT_CHOICES = [("full_support", "1", "Full support"), ("partial_support", "2", "Partial"),
                   ("no_support", "3", "No support")]
#: characters of a cited segment shown
SEGMENT_CHARS = 6000


def _task(request: HttpRequest, slug: str, qid: str, kind: str):
    """The user's task on the topic, or 404 (another's collection, topic or pool: nothing to say)."""
    collection = get_object_or_404(Collection, slug=slug)
    task = task_for(request.user, collection, qid, kind)
    if task is None:
        raise Http404("You have no answers of this topic to judge.")
    return collection, task


def _int(value) -> int | None:
    return int(value) if re.fullmatch(r"[0-9]{1,18}", str(value or "")) else None


def _spent(value) -> int | None:
    spent = _int(value)
    return min(spent, 10 * 60 * 1000) if spent is not None else None


@login_required
@require_http_methods(["GET"])
def tasks(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    rows = []
    for task in my_tasks(request.user, collection).order_by("topic__qid", "pool__kind"):
        step = (next_nugget(task, request.user.username) if task.pool.kind == AnswerPool.Kind.NUGGET
                else next_support(task, request.user.username))
        rows.append({"task": task, "done": step.done, "total": step.total})
    if not rows and not may_organize(request.user, collection):
        raise Http404("You have no answers to judge in this collection.")
    return render(request, "answers/judge_tasks.html", {"collection": collection, "rows": rows})


def _sentences(answer, collection) -> list[dict]:
    """The answer's sentences, each with its citations numbered and their segments' text (shown on demand)."""
    found = []
    for sentence in AnswerSentence.objects.filter(answer=answer).order_by("position"):
        cited = []
        for docno in sentence.citations:
            held = document_for(collection, docno)
            cited.append({"docno": docno, "text": (held.text if held else "")[:SEGMENT_CHARS]})
        found.append({"text": sentence.text, "citations": cited})
    return found


@login_required
@require_http_methods(["GET", "POST"])
def nuggets(request: HttpRequest, slug: str, qid: str) -> HttpResponse:
    collection, task = _task(request, slug, qid, AnswerPool.Kind.NUGGET)
    error, pending, status = "", "", 200
    if request.method == "POST":
        answer_id, nugget_id = _int(request.POST.get("answer")), _int(request.POST.get("nugget"))
        value = request.POST.get("assignment", "")
        try:
            if answer_id is None or nugget_id is None:
                raise AnswerRefused("Choose support, partial or none for the nugget shown.")
            nugget_assignment_record(task=task, user=request.user, answer_id=answer_id, nugget_id=nugget_id,
                                     value=value, client_token=request.POST.get("client_token", "")[:64],
                                     time_spent_ms=_spent(request.POST.get("time_spent_ms")))
        except AnswerRefused as exc:
            error, status = str(exc), 400
        except OperationalError:
            error, pending, status = ("Your choice was NOT saved: the database is busy. It is marked below; press "
                                      "it again to retry."), value, 503
        else:
            return redirect("answers:judge_nuggets", slug=slug, qid=qid)
        step = next_nugget(task, request.user.username, answer_id, nugget_id) if status == 503 else \
            next_nugget(task, request.user.username)
    else:
        step = next_nugget(task, request.user.username, _int(request.GET.get("answer")),
                           _int(request.GET.get("nugget")))
    context = {"collection": collection, "task": task, "topic": task.topic, "step": step, "error": error,
               "pending": pending, "choices": NUGGET_CHOICES, "client_token": uuid.uuid4().hex,
               "percent": round(100 * step.done / step.total) if step.total else 0,
               "sentences": _sentences(step.answer, collection) if step.answer else [],
               "current_label": dict(NuggetAssignment.Value.choices).get(step.current, "")}
    return render(request, "answers/judge_nuggets.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def support(request: HttpRequest, slug: str, qid: str) -> HttpResponse:
    collection, task = _task(request, slug, qid, AnswerPool.Kind.SUPPORT)
    error, pending, status, item_id = "", "", 200, _int(request.GET.get("item"))
    if request.method == "POST":
        item_id, value = _int(request.POST.get("item")), request.POST.get("support", "")
        try:
            if item_id is None:
                raise AnswerRefused("Choose full, partial or no support for the citation shown.")
            support_judgment_record(task=task, user=request.user, item_id=item_id, value=value,
                                    client_token=request.POST.get("client_token", "")[:64],
                                    time_spent_ms=_spent(request.POST.get("time_spent_ms")))
        except AnswerRefused as exc:
            error, status, item_id = str(exc), 400, None
        except OperationalError:
            error, pending, status = ("Your choice was NOT saved: the database is busy. It is marked below; press "
                                      "it again to retry."), value, 503
        else:
            return redirect("answers:judge_support", slug=slug, qid=qid)
    step = next_support(task, request.user.username, item_id)
    segment = document_for(collection, step.item.docno) if step.item else None
    context = {"collection": collection, "task": task, "topic": task.topic, "step": step, "error": error,
               "pending": pending, "choices": SUPPORT_CHOICES, "client_token": uuid.uuid4().hex,
               "percent": round(100 * step.done / step.total) if step.total else 0,
               "segment_text": (segment.text if segment else "")[:SEGMENT_CHARS],
               "current_label": dict(SupportJudgment.Value.choices).get(step.current, "")}
    return render(request, "answers/judge_support.html", context, status=status)

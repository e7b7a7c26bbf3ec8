"""The nugget bank page of a topic: its current version's nuggets in one form (edit a text; several lines split a
nugget; tick two or more to merge them; tick to delete; choose vital or okay; add one), the judged relevant
segments it is made from beside it, the versions before, and "draft with machine" (a background job). Saving
stores a new version. Organizers of the collection and the assessors given the topic's answers may use it."""

from __future__ import annotations

import re

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from answers.banks import BankRefused, Draft, bank_save, current, relevant_segments
from answers.banks_tasks import KIND, draft_nuggets
from answers.models import AnswerTask, Nugget, NuggetBank
from judging.machine_endpoints import endpoint_choices
from workbench.collections.selectors import may_organize
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection, Topic

#: nugget rows read from one post
MAX_ROWS = 300


def topic_for_bank(user, slug: str, qid: str) -> Topic:
    """The topic if ``user`` organizes its collection or was given answers of it to judge; 404 otherwise."""
    collection = get_object_or_404(Collection, slug=slug)
    topic = Topic.objects.filter(collection=collection, qid=qid).first()
    allowed = may_organize(user, collection) or (
        topic is not None and AnswerTask.objects.filter(assessor=user, topic=topic).exists())
    if topic is None or not allowed:
        raise Http404("No such topic among yours.")
    return topic


def _rows(post: QueryDict) -> list[dict]:
    rows = []
    for k in range(MAX_ROWS):
        if f"text-{k}" not in post:
            break
        origin = post.get(f"origin-{k}", "")
        rows.append({"text": post.get(f"text-{k}", ""), "importance": post.get(f"importance-{k}", "okay"),
                     "origin": int(origin) if re.fullmatch(r"[0-9]{1,18}", origin) else None,
                     "delete": bool(post.get(f"delete-{k}")), "merge": bool(post.get(f"merge-{k}"))})
    return rows


def _merged(kept: list[dict], notes: list[str]) -> list[dict]:
    """The rows ticked to merge (two or more) joined into the first of them: vital if any of them is."""
    merging = [r for r in kept if r["merge"]]
    if len(merging) < 2:
        return kept
    first = merging[0]
    first["text"] = " ".join(" ".join(r["text"].split()) for r in merging)
    if any(r["importance"] == "vital" for r in merging):
        first["importance"] = "vital"
    notes.append(f"{len(merging)} merged")
    return [r for r in kept if not r["merge"] or r is first]


def _split(row: dict, notes: list[str]) -> list[Draft]:
    """A row as nuggets: one per line of its text (a text on several lines is split)."""
    lines = [line.strip() for line in row["text"].splitlines() if line.strip()] or [""]
    if len(lines) > 1:
        notes.append(f"1 split into {len(lines)}")
    return [Draft(line, row["importance"], row["origin"]) for line in lines]


def drafts_from(post: QueryDict) -> tuple[list[Draft], str]:
    """The nuggets a bank form asks for, in order, and a note saying what changed."""
    rows = _rows(post)
    kept = [r for r in rows if not r["delete"]]
    notes = [f"{len(rows) - len(kept)} deleted"] if len(rows) > len(kept) else []
    drafts = [d for r in _merged(kept, notes) for d in _split(r, notes)]
    if post.get("text-new", "").strip():
        drafts.append(Draft(post["text-new"], post.get("importance-new", "okay")))
        notes.append("1 added")
    return drafts, "edited on the web" + (f": {', '.join(notes)}" if notes else "")


def _version(value) -> int:
    return int(value) if re.fullmatch(r"[0-9]{1,9}", str(value or "")) else -1


@login_required
@require_http_methods(["GET", "POST"])
def bank(request: HttpRequest, slug: str, qid: str) -> HttpResponse:
    topic = topic_for_bank(request.user, slug, qid)
    error, status = "", 200
    if request.method == "POST":
        drafts, note = drafts_from(request.POST)
        try:
            made = bank_save(topic=topic, user=request.user, drafts=drafts, based_on=_version(request.POST.get("version")),
                             note=note)
        except BankRefused as exc:
            error, status = str(exc), 400
        else:
            messages.info(request, f"Saved as version {made.version} ({note})." if made else "Nothing changed.")
            return redirect("answers:bank", slug=slug, qid=qid)
    shown = current(topic)
    context = {"collection": topic.collection, "topic": topic, "bank": shown, "error": error,
               "nuggets": list(shown.nuggets.order_by("order")) if shown else [],
               "versions": NuggetBank.objects.filter(topic=topic).order_by("-version")[:20],
               "segments": relevant_segments(topic), "importances": Nugget.Importance.choices,
               "endpoints": endpoint_choices(), "may_draft": may_organize(request.user, topic.collection)}
    return render(request, "answers/bank.html", context, status=status)


@login_required
@require_http_methods(["POST"])
def bank_draft(request: HttpRequest, slug: str, qid: str) -> HttpResponse:
    """Start a machine draft of the topic's nuggets (organizers only), with an endpoint the deployment declares."""
    topic = topic_for_bank(request.user, slug, qid)
    if not may_organize(request.user, topic.collection):
        raise Http404("Only the collection's organizers start machine drafts.")
    endpoint, _, model = request.POST.get("endpoint", "").partition("|")
    if model not in endpoint_choices().get(endpoint, []):
        messages.error(request, "Choose one of the endpoints the deployment declares (JUDGE_ENDPOINTS).")
        return redirect("answers:bank", slug=slug, qid=qid)
    try:
        job = jobs.job_start(draft_nuggets, kind=KIND, user=request.user, collection=topic.collection,
                             params={"qid": topic.qid, "endpoint": endpoint, "model": model})
    except jobs.TooManyJobStarts as exc:
        messages.error(request, str(exc))
        return redirect("answers:bank", slug=slug, qid=qid)
    return redirect("job", job_id=job.pk)

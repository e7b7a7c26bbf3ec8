"""Organizer pages of near-duplicate classes: the classes with their similarity, one class with the two texts
side by side and its propagated judgments, the decision (accept, split) and detection as a background job."""

from __future__ import annotations

import difflib
import html
import re

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.safestring import SafeString, mark_safe

from judging.duplicates import duplicate_class_set
from judging.forms import DuplicateDecisionForm, DuplicateDetectForm
from judging.models import PropagatedJudgment
from workbench.access.rules import organizer_required
from workbench.corpora.duplicates import duplicate_classes
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection, Document, DuplicateClass
from workbench.tasks import find_duplicates

#: characters of each text shown side by side
SHOWN = 4000


@organizer_required
def duplicates(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    status = request.GET.get("status") or ""
    if status not in DuplicateClass.Status.values:
        status = ""
    classes = Paginator(duplicate_classes(collection, status=status or None), 100).get_page(request.GET.get("page"))
    statuses = [(value, label, DuplicateClass.objects.filter(collection=collection, status=value).count())
                for value, label in DuplicateClass.Status.choices]
    return render(request, "judging/duplicates.html", {
        "collection": collection, "classes": classes, "status": status, "statuses": statuses, "form": DuplicateDetectForm(),
        "propagated": PropagatedJudgment.objects.filter(collection=collection).count(),
        "documents": collection.documents.count()})


@organizer_required
def duplicates_find(request: HttpRequest, slug: str) -> HttpResponse:
    """POST: start detection as a job and follow it on its page."""
    collection = get_object_or_404(Collection, slug=slug)
    form = DuplicateDetectForm(request.POST or None)
    if request.method != "POST" or not form.is_valid():
        for field, errors in form.errors.items():
            messages.error(request, f"{field}: {' '.join(errors)}")
        return redirect("judging:duplicates", slug=slug)
    job = jobs.job_start(find_duplicates, kind="near-duplicates", user=request.user, collection=collection,
                         params=form.cleaned_data)
    return redirect("job", job_id=job.pk)


def _texts(collection: Collection, docnos: list[str]) -> dict[str, str]:
    rows = Document.objects.filter(collection=collection, docno__in=docnos).values_list("docno", "title", "text")
    return {d: (f"{t}\n\n{x}" if t else x)[:SHOWN] for d, t, x in rows}


def marked_difference(left: str, right: str) -> tuple[SafeString, SafeString, int]:
    """The two texts as HTML with the words that differ marked (``<del>`` in the left, words only the right
    has as ``<ins>``), word by word (difflib), and how many words differ; whitespace is kept as it is."""
    a, b = re.split(r"(\s+)", left), re.split(r"(\s+)", right)
    words_a, words_b = a[::2], b[::2]  # re.split with a group: words at even places, the spaces between at odd

    def write(tokens: list[str], marked: set[int], tag: str) -> SafeString:
        out = []
        for k, token in enumerate(tokens):
            text = html.escape(token)
            out.append(f"<{tag}>{text}</{tag}>" if k % 2 == 0 and k // 2 in marked and token else text)
        return mark_safe("".join(out))  # noqa: S308 - every token escaped above

    only_a, only_b = set(), set()
    matcher = difflib.SequenceMatcher(None, words_a, words_b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            only_a.update(range(i1, i2))
            only_b.update(range(j1, j2))
    return write(a, only_a, "del"), write(b, only_b, "ins"), max(len(only_a), len(only_b))


def _decide(request: HttpRequest, klass: DuplicateClass) -> bool:
    """Apply the posted decision; True when it was applied (the caller redirects), with a message either way."""
    form = DuplicateDecisionForm(request.POST)
    data = form.cleaned_data if form.is_valid() else {}
    if not (data.get("status") or data.get("judge_members") or data.get("remove")):
        messages.error(request, "Choose a decision: accept, split or back to proposed.")
        return False
    before = klass.propagated_judgments.count()
    try:
        after = duplicate_class_set(duplicate_class=klass, status=data["status"] or None,
                                    judge_members={"1": True, "0": False}.get(data["judge_members"]),
                                    remove=data["remove"] or None, user=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return False
    messages.success(request, f"Class of {klass.representative}: "
                              + (f"{data['remove']} taken out; " if data["remove"] else "")
                              + klass.get_status_display().lower()
                              + ("; assessors judge its members" if klass.judge_members else "")
                              + f"; {after} propagated judgments (were {before}).")
    return True


@organizer_required
def duplicate_class(request: HttpRequest, slug: str, class_id: int) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    klass = get_object_or_404(DuplicateClass, pk=class_id, collection=collection)
    if request.method == "POST" and _decide(request, klass):
        return redirect("judging:duplicate_class", slug=slug, class_id=klass.pk)
    members = list(klass.members.order_by("-similarity", "docno"))
    shown = request.GET.get("member") or (members[0].docno if members else "")
    member = next((m for m in members if m.docno == shown), members[0] if members else None)
    texts = _texts(collection, [klass.representative] + ([member.docno] if member else []))
    propagated = (PropagatedJudgment.objects.filter(duplicate_class=klass)
                  .select_related("topic", "source").order_by("topic__qid", "docno"))
    left, right, differing = marked_difference(texts.get(klass.representative, ""),
                                               texts.get(member.docno, "") if member else "")
    return render(request, "judging/duplicate_class.html", {
        "collection": collection, "klass": klass, "members": members, "member": member,
        "left": left, "right": right, "differing": differing,
        "propagated": propagated[:500], "n_propagated": propagated.count(), "labels": collection.grade_labels,
        "form": DuplicateDecisionForm()})

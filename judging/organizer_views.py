"""Organizer pages of judging: the dashboard and assigning work from the web."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django_tables2 import RequestConfig

from judging import selectors
from judging.assignments import AssignmentRefused, assignments_create
from judging.extensions import ranking_agreement
from judging.forms import AdjudicationForm, AssignForm, TransferForm
from judging.models import Assignment
from judging.reassignment import assignment_transfer, assignment_withdraw
from judging.services import JudgmentRefused, adjudication_record
from judging.tables import AssessorProgressTable, PairAgreementTable, TopicAgreementTable, TopicProgressTable
from pooling.models import Pool
from workbench.access.rules import organizer_required
from workbench.models import Collection, Topic


@organizer_required
def dashboard(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    data = selectors.judging_dashboard(collection)
    topics = TopicProgressTable(data["topics"].to_dict("records"), prefix="t-")
    assessors = AssessorProgressTable(data["assessors"].to_dict("records"), prefix="a-")
    RequestConfig(request, paginate={"per_page": 50}).configure(topics)
    RequestConfig(request, paginate={"per_page": 50}).configure(assessors)
    pools = Pool.objects.filter(collection=collection)
    form = AssignForm(collection=collection)
    return render(request, "judging/dashboard.html", {
        "collection": collection, "topics": topics, "assessors": assessors, "form": form, "pools": pools,
        "assignments": selectors.assignment_rows(collection), "transfer": TransferForm()})


@organizer_required
def assignment_change(request: HttpRequest, slug: str, assignment_id: int) -> HttpResponse:
    """POST from the dashboard: reassign an assignment's unjudged documents, or take them back."""
    assignment = get_object_or_404(Assignment.objects.select_related("assessor", "topic"), pk=assignment_id,
                                   pool__collection__slug=slug)
    form = TransferForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            if form.cleaned_data["action"] == "withdraw":
                n = assignment_withdraw(assignment=assignment)
                messages.success(request, f"Topic {assignment.topic.qid}: {n} unjudged documents taken back from "
                                          f"{assignment.assessor.username}.")
            else:
                to = form.cleaned_data["to"]
                n = assignment_transfer(assignment=assignment, to=to, created_by=request.user)
                messages.success(request, f"Topic {assignment.topic.qid}: {n} unjudged documents moved from "
                                          f"{assignment.assessor.username} to {to.username}.")
        except AssignmentRefused as exc:
            messages.error(request, str(exc))
    elif request.method == "POST":
        messages.error(request, " ".join(e for errors in form.errors.values() for e in errors))
    return redirect("judging:dashboard", slug=slug)


@organizer_required
def assign(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    form = AssignForm(request.POST or None, collection=collection)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            summary = assignments_create(pool=data["pool"], assessors=list(data["assessors"]),
                                         topics=[t.qid for t in data["topics"]] or None, overlap=data["overlap"],
                                         batch_size=data["batch_size"], created_by=request.user)
        except AssignmentRefused as exc:
            form.add_error(None, str(exc))
        else:
            messages.success(request, f"Assigned {summary.documents} documents ({summary.items} judgments)."
                                      + _without_text_note(collection, data["pool"]))
            return redirect("judging:dashboard", slug=collection.slug)
    return render(request, "judging/assign.html", {"collection": collection, "form": form},
                  status=400 if form.errors else 200)

def _without_text_note(collection: Collection, pool: Pool) -> str:
    """A sentence for the assign message when the pool holds documents the workbench has no text for."""
    row = next((r for r in selectors.pooled_without_text(collection) if r["pool"].pk == pool.pk), None)
    if row is None or not row["without_text"]:
        return ""
    what = ("assessors open them at the document URL" if collection.document_url and collection.judge_by_link
            else "assessors cannot grade them until the documents are uploaded")
    return f" {row['without_text']:,} of the pool's {row['pooled']:,} documents have no text: {what}."


@organizer_required
def agreement(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    if request.method == "POST":
        form = AdjudicationForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                adjudication_record(collection=collection, qid=data["qid"], docno=data["docno"], grade=data["grade"],
                                    user=request.user, comment=data["comment"])
            except (JudgmentRefused, Topic.DoesNotExist) as exc:
                messages.error(request, str(exc) or "No such topic.")
            else:
                reason = f" (reason: “{data['comment']}”)" if data.get("comment") else ""
                messages.success(request, f"Topic {data['qid']}, {data['docno']}: adjudicated as {data['grade']} "
                                          f"{collection.grade_labels.get(data['grade'], '')}{reason}.")
                return redirect("judging:agreement", slug=collection.slug)
        else:
            messages.error(request, "The adjudication was incomplete: " + "; ".join(
                f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()))
    report = selectors.agreement_report(collection)
    pairs = PairAgreementTable(report["pairs"].to_dict("records"), prefix="p-")
    topics = TopicAgreementTable(report["topics"].to_dict("records"), prefix="t-")
    RequestConfig(request, paginate={"per_page": 50}).configure(pairs)
    RequestConfig(request, paginate={"per_page": 50}).configure(topics)
    disputed = report["disagreements"].to_dict("records")
    labels = collection.grade_labels
    evidence = selectors.disagreement_evidence(collection, [(r["qid"], r["docno"]) for r in disputed[:500]])
    for row in disputed:
        row["grade_list"] = [(name, grade, labels.get(grade, "")) for name, grade in sorted(row["grades"].items())]
        if row.get("adjudicated") is not None:
            row["adjudicated_label"] = labels.get(row["adjudicated"], "")
        row["evidence"] = evidence.get((row["qid"], row["docno"]))
    return render(request, "judging/agreement.html", {
        "collection": collection, "pairs": pairs, "topics": topics, "disputed": disputed[:500],
        "n_disputed": len(disputed), "scale": [{"grade": g, "label": labels[g]} for g in collection.grades],
        "rankings": ranking_agreement(collection)})

"""Organizer pages of the machine assessors: run a judge on a pool (a background job), cancel it, and read its
agreement with the humans."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.db.models import Count, Q
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from judging.forms import MachineJudgeForm
from judging.machine import JUDGES
from judging.machine.base import JudgeError
from judging.machine_agreement import agreement_job_start, agreement_latest, agreement_stored
from judging.machine_services import (
    MACHINE_JOB,
    endpoint_choices,
    machine_job_cancel,
    machine_job_start,
    machine_judge_ensure,
)
from judging.models import MachineJudge
from judging.queueing import AUDIT_SHARE, queues_route
from judging.tasks import machine_agreement_job, machine_judge
from pooling.models import Pool
from workbench.access.rules import organizer_required
from workbench.models import Collection, Job


@organizer_required
def machine_console(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    form = MachineJudgeForm(request.POST or None, collection=collection, judges=JUDGES, endpoints=endpoint_choices())
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            judge = machine_judge_ensure(collection=collection, name=data["name"], kind=data["kind"],
                                         config={"endpoint": data["endpoint"], "model": data["model"],
                                                 **data["options"]})
        except JudgeError as exc:
            form.add_error(None, str(exc))
        else:
            job, resumed = machine_job_start(judge=judge, pool=data["pool"], user=request.user, task=machine_judge)
            messages.success(request, f"{'Resumed' if resumed else 'Started'}: machine judge {judge.name} on pool "
                                      f"{data['pool'].name}.")
            return redirect("job", job_id=job.pk)
    judges = list(MachineJudge.objects.filter(collection=collection).select_related("user").annotate(
        judged=Count("verdicts", filter=Q(verdicts__ok=True)), failed=Count("verdicts", filter=Q(verdicts__ok=False))))
    jobs = Job.objects.filter(collection=collection, kind=MACHINE_JOB).order_by("-id")[:20]
    return render(request, "judging/machine_console.html", {
        "collection": collection, "form": form, "judges": judges, "jobs": jobs,
        "route": RouteForm(collection=collection) if judges else None}, status=400 if form.errors else 200)


class RouteForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=MachineJudge.objects.none(), empty_label=None, to_field_name="name")
    pool = forms.ModelChoiceField(queryset=Pool.objects.none(), empty_label=None)
    audit_share = forms.FloatField(min_value=0, max_value=1, initial=AUDIT_SHARE, label="Random audit share",
                                   help_text="Share of each queue kept in random order (0.1 = 10%).")

    def __init__(self, *args, collection: Collection, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = MachineJudge.objects.filter(collection=collection).order_by("name")
        self.fields["pool"].queryset = Pool.objects.filter(collection=collection).order_by("name")


@organizer_required
@require_POST
def machine_route(request: HttpRequest, slug: str) -> HttpResponse:
    """Order the human assessors' queues of a pool so that the pairs the machine is least sure of come first."""
    collection = get_object_or_404(Collection, slug=slug)
    form = RouteForm(request.POST, collection=collection)
    if not form.is_valid():
        messages.error(request, "Routing was not changed: " + "; ".join(
            f"{field}: {' '.join(errors)}" for field, errors in form.errors.items()))
    else:
        data = form.cleaned_data
        count = queues_route(judge=data["judge"], pool=data["pool"], audit_share=data["audit_share"])
        messages.success(request, f"{count} human queue{'s' if count != 1 else ''} of pool {data['pool'].name} now "
                                  f"start with what {data['judge'].name} is least sure of "
                                  f"({data['audit_share']:.0%} in random order for auditing).")
    return redirect("judging:machine", slug=collection.slug)


@organizer_required
@require_POST
def machine_cancel(request: HttpRequest, slug: str, job_id: int) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    job = get_object_or_404(Job, pk=job_id, collection=collection, kind=MACHINE_JOB)
    if job.finished:
        messages.info(request, "That job has already finished.")
    else:
        machine_job_cancel(job=job)
        messages.success(request, "The job stops at its next report; what it judged stays. Run it again to continue.")
    return redirect("judging:machine", slug=collection.slug)


@organizer_required
def machine_agreement_page(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    judge = MachineJudge.objects.filter(collection=collection, name=name).first()
    if judge is None:
        raise Http404("No such machine judge.")
    figures, job = agreement_stored(judge)
    if figures is None and job is None:  # nothing computes the judge's current state: a job will
        agreement_job_start(judge, task=machine_agreement_job, user=request.user)
        figures, job = agreement_stored(judge)  # (a worker that runs jobs at once has computed it)
    updating = None
    if figures is None and job is not None and job.status != Job.Status.FAILED:
        figures, updating = agreement_latest(judge), job  # an older state's, while the job computes this one
    if figures is None:
        return render(request, "judging/machine_agreement_computing.html", {
            "collection": collection, "judge": judge, "job": job})
    rows = list(zip(figures["grades"], figures["confusion"], strict=True))
    return render(request, "judging/machine_agreement.html", {
        "collection": collection, "judge": judge, "f": figures, "rows": rows, "updating": updating})


#: verdicts a provenance page lists
VERDICTS_SHOWN = 200


@organizer_required
def machine_verdicts(request: HttpRequest, slug: str, name: str) -> HttpResponse:
    """The provenance of a machine judge's verdicts (all, or of one topic / document): grade or failure, the
    raw reply, score, model, endpoint, prompt hash, latency and tokens."""
    collection = get_object_or_404(Collection, slug=slug)
    judge = MachineJudge.objects.filter(collection=collection, name=name).first()
    if judge is None:
        raise Http404("No such machine judge.")
    qid, docno = request.GET.get("qid", "").strip(), request.GET.get("docno", "").strip()
    verdicts = judge.verdicts.select_related("topic").order_by("topic__qid", "docno", "id")
    if qid:
        verdicts = verdicts.filter(topic__qid=qid)
    if docno:
        verdicts = verdicts.filter(docno=docno)
    return render(request, "judging/machine_verdicts.html", {
        "collection": collection, "judge": judge, "qid": qid, "docno": docno, "count": verdicts.count(),
        "verdicts": verdicts[:VERDICTS_SHOWN], "shown": VERDICTS_SHOWN})

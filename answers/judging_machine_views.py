"""The organizer's page of answer assessors: agreement between every pair of assessors of nugget assignments and
of support judgments (people and machines), and forms to run a declared machine assigner over an answer pool, or a
declared support judge over a support pool, as a background job. The forms' option fields are generated from the
machines' declarations."""

from __future__ import annotations

import math

from django.contrib import messages
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from answers.judging_machine import nugget_agreement, support_agreement
from answers.judging_tasks import KIND, SUPPORT_KIND, assign_nuggets, judge_support
from answers.machine import ASSIGNERS, SUPPORT_JUDGES
from answers.models import AnswerPool, NuggetBank
from judging.machine_endpoints import endpoint_choices
from workbench.access.rules import collection_for_organizer, organizer_required
from workbench.jobs import lifecycle as jobs


def _number(value) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.3f}"


def _rows(agreement) -> list[dict]:
    return [{"a": r.assessor_a, "b": r.assessor_b, "n": int(r.n_shared), "agreement": _number(r.agreement),
             "kappa": _number(r.kappa), "weighted_kappa": _number(r.weighted_kappa), "alpha": _number(r.alpha)}
            for r in agreement.itertuples(index=False)]


def _options(kind, post) -> dict:
    """The declared options of the chosen assigner given in the form (``<kind>-<option>``), typed and checked."""
    given = {p.name: post.get(f"{kind.name}-{p.name}", "") for p in kind.options}
    return {k: v for k, v in kind.read(given).items() if post.get(f"{kind.name}-{k}", "") != ""}


def _start(request: HttpRequest, collection) -> HttpResponse | None:
    support = request.POST.get("role") == "support"
    registry, task, job_kind = (SUPPORT_JUDGES, judge_support, SUPPORT_KIND) if support else \
        (ASSIGNERS, assign_nuggets, KIND)
    pool = AnswerPool.objects.filter(collection=collection,
                                     kind=AnswerPool.Kind.SUPPORT if support else AnswerPool.Kind.NUGGET,
                                     pk=request.POST.get("pool") if str(request.POST.get("pool", "")).isdigit() else 0
                                     ).first()
    if pool is None:
        messages.error(request, "Choose a support pool of citations." if support else
                       "Choose an answer pool of answers for nugget assignment.")
        return None
    try:
        kind = registry.get(request.POST.get("kind", ""))
        options = _options(kind, request.POST)
    except ValueError as exc:
        messages.error(request, str(exc))
        return None
    endpoint, _, model = request.POST.get("endpoint", "").partition("|")
    if kind.needs_network and model not in endpoint_choices().get(endpoint, []):
        messages.error(request, "Choose one of the endpoints the deployment declares (JUDGE_ENDPOINTS).")
        return None
    params = {"pool": pool.pk, "kind": kind.name, "options": options,
              **({"endpoint": endpoint, "model": model} if kind.needs_network else {})}
    try:
        job = jobs.job_start(task, kind=job_kind, user=request.user, collection=collection, params=params)
    except jobs.TooManyJobStarts as exc:
        messages.error(request, str(exc))
        return None
    return redirect("job", job_id=job.pk)


@organizer_required
@require_http_methods(["GET", "POST"])
def nugget_assessors(request: HttpRequest, slug: str) -> HttpResponse:
    collection = collection_for_organizer(request.user, slug)
    if request.method == "POST":
        started = _start(request, collection)
        if started is not None:
            return started
    rows, support_rows = _rows(nugget_agreement(collection)), _rows(support_agreement(collection))
    banks = {b.topic_id: b for b in NuggetBank.objects.filter(collection=collection).annotate(size=Count("nuggets"))
             .order_by("topic_id", "version")}
    topics = [{"topic": t, "bank": banks.get(t.pk)} for t in collection.topics.order_by("qid")]
    context = {"collection": collection, "rows": rows, "support_rows": support_rows, "assigners": list(ASSIGNERS), "topics": topics,
               "pools": AnswerPool.objects.filter(collection=collection, kind=AnswerPool.Kind.NUGGET),
               "support_judges": list(SUPPORT_JUDGES),
               "support_pools": AnswerPool.objects.filter(collection=collection, kind=AnswerPool.Kind.SUPPORT),
               "endpoints": endpoint_choices()}
    return render(request, "answers/judge_machines.html", context, status=200 if request.method == "GET" else 400)

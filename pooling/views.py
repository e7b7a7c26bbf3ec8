"""The console's pool page: the collection's pools, and a form to build or extend one (with a preview
of its size per topic before anything is built); the build itself is a background job."""

from __future__ import annotations

from django.db.models import Count
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from pooling import selectors as pooling_selectors
from pooling.entries import PoolRefused
from pooling.forms import PoolBuildForm, params_of
from pooling.models import Pool
from pooling.preview import pool_preview
from pooling.services import pool_topic_stop, seed_from
from pooling.stopping_view import stopping_states
from pooling.strategies import registry
from pooling.tasks import build_pool
from workbench.access.rules import organizer_required
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection


def _context(collection: Collection, form: PoolBuildForm, preview=None) -> dict:
    pools = (Pool.objects.filter(collection=collection)
             .annotate(documents=Count("entries"), topics=Count("entries__topic", distinct=True)))
    return {"collection": collection, "form": form, "preview": preview, "pools": pools,
            "stopping": stopping_states(collection)}


@organizer_required
@require_POST
def topic_stop(request: HttpRequest, slug: str, pool_id: int) -> HttpResponse:
    """Stop one topic of a cal pool by hand (the stopping-state table's button)."""
    collection = get_object_or_404(Collection, slug=slug)
    pool = get_object_or_404(Pool, pk=pool_id, collection=collection)
    try:
        pool_topic_stop(pool=pool, qid=request.POST.get("qid", ""), reason=request.POST.get("reason", "")[:200])
    except PoolRefused as exc:
        return HttpResponseBadRequest(str(exc))
    return redirect(reverse("pooling:pools", args=[slug]) + "#stopping")


@organizer_required
def pools(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    # a link may prefill the form (the participation page: a new pool of each team's first N runs); with
    # no name given, a name no pool has: the form never extends a pool unless its name is typed
    prefilled = {"name", "strategy", "runs_per_team", *(p.name for p, _ in registry.parameters())}
    initial = {k: v for k, v in request.GET.items() if k in prefilled}
    initial.setdefault("name", pooling_selectors.free_pool_name(collection, "main"))
    form = PoolBuildForm(request.POST or None, collection=collection, initial=initial)
    if request.method != "POST":
        return render(request, "pooling/pools.html", _context(collection, form))
    if request.POST.get("select"):  # select all / none / a team's runs, without JavaScript: nothing is built
        values = {name: request.POST.get(name) for name in form.fields if name != "runs"}
        values["runs"] = form.selection(request.POST["select"], request.POST.getlist("runs"))
        form = PoolBuildForm(collection=collection, initial={k: v for k, v in values.items() if v is not None})
        return render(request, "pooling/pools.html", _context(collection, form))
    if not form.is_valid():
        return render(request, "pooling/pools.html", _context(collection, form), status=400)
    seed = seed_from(form.cleaned_data.get("seed"))
    arguments = form.build_arguments(seed)
    if request.POST.get("action") == "build":
        job = jobs.job_start(build_pool, kind="pool build", user=request.user, collection=collection,
                             params={"arguments": arguments})
        return redirect("job", job_id=job.pk)
    try:
        preview = pool_preview(collection=collection, name=arguments["name"], strategy=arguments["strategy"],
                               params=params_of(arguments), tags=arguments["tags"])
    except PoolRefused as exc:
        form.add_error(None, str(exc))
        return render(request, "pooling/pools.html", _context(collection, form), status=400)
    if form.cleaned_data.get("seed") is None:  # the preview's random seed is the one the build will use
        data = request.POST.copy()
        data["seed"] = str(seed)
        form = PoolBuildForm(data, collection=collection)
        form.is_valid()
    return render(request, "pooling/pools.html", _context(collection, form, preview))

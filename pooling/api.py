"""Organizers' pooling endpoints: a collection's pools, and starting a pool build (the pool page's form, its
checks and messages, and the same job, under the same job-start limit)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db.models import Count
from django.http import QueryDict
from ninja import Router, Schema, Status

from pooling.forms import PoolBuildForm
from pooling.models import Pool
from pooling.services import seed_from
from pooling.strategies import registry
from pooling.tasks import build_pool
from workbench.api.core import (
    ApiRefused,
    collection_readable,
    job_out,
    organized_collection,
    register,
    replies,
)
from workbench.jobs import lifecycle as jobs

router = Router()


class PoolOut(Schema):
    name: str
    strategy: str
    entries: int
    created_at: datetime


class BuildIn(Schema):
    name: str
    strategy: str
    runs: list[str] = []
    runs_per_team: int | None = None
    seed: int | None = None
    order: str | None = None
    parameters: dict[str, Any] = {}


class StartedOut(Schema):
    job: int
    status: str
    url: str


@router.get("/collections/{slug}/pools", response=replies(200, list[PoolOut]), summary="A collection's pools")
def pools(request, slug: str):
    collection = collection_readable(request.auth, slug)
    rows = Pool.objects.filter(collection=collection).annotate(n=Count("entries")).order_by("created_at", "id")
    return [{"name": p.name, "strategy": p.strategy, "entries": p.n, "created_at": p.created_at} for p in rows]


def _form_data(body: BuildIn) -> QueryDict:
    data = QueryDict(mutable=True)
    data["name"], data["strategy"] = body.name, body.strategy
    data.setlist("runs", [str(tag) for tag in body.runs])
    for key, value in {"runs_per_team": body.runs_per_team, "seed": body.seed, "order": body.order,
                       **body.parameters}.items():
        if value is None or key in ("name", "strategy", "runs"):
            continue
        if isinstance(value, bool):
            if value:
                data[key] = "on"
        elif isinstance(value, list):
            data.setlist(key, [str(v) for v in value])
        else:
            data[key] = str(value)
    return data


def _build_help() -> str:
    """The endpoint's description, its strategies and parameters from their declarations (``registry``)."""
    strategies = ", ".join(f"`{name}`" for name in registry.names())
    parameters = "\n".join(f"- `{p.name}` ({p.type}; {', '.join(users)}): {p.describe()}"
                           for p, users in registry.parameters())
    return ("The pool page's form as JSON: `name` (a new name builds a pool, an existing one extends it), "
            f"`strategy` ({strategies}), `runs` (none: every run offered to the pool), `runs_per_team`, `seed`, "
            f"`order` ({', '.join(f'`{o}`' for o in Pool.Order.values)}), and the strategy's own `parameters` by "
            "name (e.g. `{\"depth\": 10}`); checked as the form checks them, started as the page starts it (the "
            "job-start limit applies: 429 with Retry-After).\n\nParameters, by the strategies that read them:\n\n"
            + parameters)


@router.post("/collections/{slug}/pools", response=replies(202, StartedOut),
             summary="Start building (or extending) a pool: a job to follow at /jobs/{id}", description=_build_help())
def pool_build_start(request, slug: str, body: BuildIn):
    collection = organized_collection(request.auth, slug)
    if body.order is None:
        body.order = Pool.Order.SHUFFLED
    form = PoolBuildForm(_form_data(body), collection=collection)
    if not form.is_valid():
        problems = [f"{field}: {message}" if field != "__all__" else message
                    for field, messages in form.errors.items() for message in messages]
        raise ApiRefused(400, "the pool cannot be built: " + "; ".join(problems), problems)
    arguments = form.build_arguments(seed_from(form.cleaned_data.get("seed")))
    job = jobs.job_start(build_pool, kind="pool build", user=request.auth, collection=collection,
                         params={"arguments": arguments})
    job.refresh_from_db()
    return Status(202, {"job": job.pk, "status": job_out(job)["status"], "url": f"/api/v1/jobs/{job.pk}"})


register("", router, tags=["pools"])

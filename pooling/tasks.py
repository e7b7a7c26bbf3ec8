"""Pooling's background jobs: building or extending a pool (run by ``manage.py db_worker``)."""

from __future__ import annotations

from django.urls import reverse
from django_tasks import task

from pooling import strategies as S
from pooling.services import pool_build
from workbench import jobs


@task()
def build_pool(job_id: int) -> None:
    with jobs.running(job_id) as progress:
        job = progress.job
        arguments = dict(job.params["arguments"])
        if arguments.get("strata"):
            arguments["strata"] = [S.Stratum(*s) for s in arguments["strata"]]
        progress.step(f"pooling with {arguments['strategy']}")
        summary = pool_build(collection=job.collection, **arguments)
        pool = summary.pool
        progress.finish(lines=[f"pool {pool.name} ({pool.strategy}, seed {pool.seed}, {pool.order} order): added "
                               f"{summary.added} documents in round {summary.round}; {summary.total} documents on "
                               f"{summary.topics} topics {summary.runs_text()}"],
                        url=reverse("pooling:pools", args=[job.collection.slug]), label="Pools of this collection")

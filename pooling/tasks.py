"""Pooling's background jobs: building or extending a pool (run by ``manage.py db_worker``). With ``JOB_PARTS``
> 1, a depth-k build over more runs than that is split: parts read slices of the runs (``pooling.split``), any
worker claims them, and the join builds the pool from them, as one worker would have."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from django_tasks import task

from pooling import split
from pooling import strategies as S
from pooling.services import pool_build
from workbench import jobs, subjobs
from workbench.models import Job


def _arguments(job: Job) -> dict:
    arguments = dict(job.params["arguments"])
    if arguments.get("strata"):
        arguments["strata"] = [S.Stratum(*s) for s in arguments["strata"]]
    return arguments


def _build(progress: jobs.Progress, arguments: dict, frames: dict | None = None) -> None:
    job = progress.job
    progress.step(f"pooling with {arguments['strategy']}")
    summary = pool_build(collection=job.collection, frames=frames, **arguments)
    pool = summary.pool
    progress.finish(lines=[f"pool {pool.name} ({pool.strategy}, seed {pool.seed}, {pool.order} order): added "
                           f"{summary.added} documents in round {summary.round}; {summary.total} documents on "
                           f"{summary.topics} topics {summary.runs_text()}"],
                    url=reverse("pooling:pools", args=[job.collection.slug]), label="Pools of this collection")


def _slices(job: Job, arguments: dict) -> list[dict]:
    """The parts of a split build (slices of the runs), or [] when the build is not split."""
    parts = int(getattr(settings, "JOB_PARTS", 1) or 1)
    if parts <= 1 or not split.splittable(arguments):
        return []
    try:
        tags = split.pool_tags(job.collection, arguments.get("tags"))
    except split.PoolRefused:
        return []  # the build says why, in one line
    if len(tags) < 2 * parts:
        return []
    return [{"tags": tags[i * len(tags) // parts:(i + 1) * len(tags) // parts]} for i in range(parts)]


@task()
def build_pool(job_id: int) -> None:
    job = Job.objects.get(pk=job_id)
    slices = _slices(job, job.params["arguments"])
    if slices:
        subjobs.split(job_id, task=pool_part, parts=slices, join=join_pool)
        return
    with jobs.running(job_id) as progress:
        _build(progress, _arguments(progress.job))


@task(takes_context=True)
def pool_part(context, job_id: int) -> None:
    """One part of a split build: its runs read and cut to the pool's depth."""
    with subjobs.part(job_id, context) as progress:
        if progress is None:
            return
        job = progress.job
        progress.step(f"reading {len(job.params['tags'])} runs (part {job.params['part'] + 1} of {job.parent.total})")
        depth = job.parent.params["arguments"]["depth"]
        subjobs.keep(progress, split.cut_runs(job.collection, job.params["tags"], depth))


@task(takes_context=True)
def join_pool(context, job_id: int) -> None:
    """The pool of a split build, from its parts' runs (in one transaction, as a build by one worker)."""
    job = Job.objects.get(pk=job_id)
    if job.finished or subjobs.superseded(job, context):
        return
    with jobs.running(job_id) as progress:
        _build(progress, _arguments(progress.job), split.frames_of(subjobs.outputs(progress.job)))


# a build is not retried (a join that died after writing the pool would add an empty round): it fails
subjobs.recovery(pool_part, join_pool, join_retry=False)

"""Pooling's background jobs: building or extending a pool (run by ``manage.py db_worker``). With ``JOB_PARTS``
> 1, a depth-k build over more runs than that is split: parts read slices of the runs (``pooling.split``), any
worker claims them, and the join builds the pool from them, as one worker would have."""

from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from django_tasks import task

from pooling import split
from pooling import strategies as S
from pooling.features import KIND as FEATURES_KIND
from pooling.features import features_for
from pooling.services import pool_build
from workbench import jobs, subjobs
from workbench.corpus import documents_copy_in
from workbench.models import Job
from workbench.services import ImportRefused


def copy_in_pooled(collection, pool, progress) -> list[str]:
    """A collection that uses a corpus by reference gets the pooled documents' text copied in now, so that
    judging never waits on the corpus; the line that says so (none for a collection without one)."""
    if not collection.corpus_references.exists():
        return []
    docnos = list(pool.entries.values_list("docno", flat=True).distinct())
    said = f"copying the text of {len(docnos):,} pooled documents from the corpus"
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        progress.step(said, done=done)

    if progress is not None:
        progress.step(said, done=0, total=len(docnos))
    try:
        copied = documents_copy_in(collection=collection, docnos=docnos, progress=advance if progress else None)
    except ImportRefused as exc:  # the pool stands; each document is then fetched when it is opened
        return [f"the pooled documents' text could not be copied in now ({exc}); each is read from the corpus "
                "when an assessor opens it"]
    return [f"{copied:,} pooled documents' text copied in from the corpus"]


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
    copied = copy_in_pooled(job.collection, pool, progress)
    progress.finish(lines=[f"pool {pool.name} ({pool.strategy}, seed {pool.seed}, {pool.order} order): added "
                           f"{summary.added} documents in round {summary.round}; {summary.total} documents on "
                           f"{summary.topics} topics {summary.runs_text()}"] + copied,
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


@task()
def compute_features(job_id: int) -> None:
    """The collection's features for active learning, again after its documents changed (queued by a judgment
    in a ``cal`` pool that found them stale)."""
    with jobs.running(job_id) as progress:
        collection = progress.job.collection
        progress.step(f"computing the {FEATURES_KIND} of {collection.documents.count():,} documents")
        features = features_for(collection)
        progress.finish(lines=[f"{FEATURES_KIND} of {len(features.docnos) if features else 0:,} documents stored"],
                        url=reverse("pooling:pools", args=[collection.slug]), label="Pools of this collection")


# a build is not retried (a join that died after writing the pool would add an empty round): it fails
subjobs.recovery(pool_part, join_pool, join_retry=False)

"""Pooling's background jobs: building or extending a pool (run by ``manage.py db_worker``). With ``JOB_PARTS``
> 1, a new depth-k pool over many runs is built by topic (``pooling.split``): parts any worker claims write
their topics' entries into the pool, hidden until the join publishes it, as one worker would have built it."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django_tasks import task

from pooling import split
from pooling import strategies as S
from pooling.feature_tasks import compute_features
from pooling.services import pool_build
from workbench.collections.services import ImportRefused
from workbench.corpora.corpus import documents_copy_in
from workbench.jobs import lifecycle as jobs
from workbench.jobs import subjobs
from workbench.jobs.kinds import JobKind
from workbench.models import Job


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


def _build(progress: jobs.Progress, arguments: dict) -> None:
    progress.step(f"pooling with {arguments['strategy']}")
    _finish(progress, pool_build(collection=progress.job.collection, **arguments))


def _finish(progress: jobs.Progress, summary) -> None:
    job, pool = progress.job, summary.pool
    copied = copy_in_pooled(job.collection, pool, progress)
    progress.finish(lines=[f"pool {pool.name} ({pool.strategy}, seed {pool.seed}, {pool.order} order): added "
                           f"{summary.added} documents in round {summary.round}; {summary.total} documents on "
                           f"{summary.topics} topics {summary.runs_text()}"] + copied,
                    url=reverse("pooling:pools", args=[job.collection.slug]), label="Pools of this collection")


@task()
def build_pool(job_id: int) -> None:
    job = Job.objects.get(pk=job_id)
    with transaction.atomic():  # the hidden pool and its parts, or neither
        parts = split.plan(job, job.params["arguments"], int(getattr(settings, "JOB_PARTS", 1) or 1))
        if parts:
            subjobs.split(job_id, task=pool_part, parts=parts, join=join_pool, on_failed=split.discard)
            return
    with jobs.running(job_id) as progress:
        _build(progress, _arguments(progress.job))


@task(takes_context=True)
def pool_part(context, job_id: int) -> None:
    """One part of a split build: its topics pooled and their entries written into the hidden pool."""
    with subjobs.part(job_id, context) as progress:
        if progress is None:
            return
        job = progress.job
        progress.step(f"pooling {len(job.params['topics'])} topics over every run "
                      f"(part {job.params['part'] + 1} of {job.parent.total})")
        subjobs.keep(progress, split.write_part(job))


@task(takes_context=True)
def join_pool(context, job_id: int) -> None:
    """The pool of a split build published, with its provenance and parameters (one transaction)."""
    job = Job.objects.get(pk=job_id)
    if job.finished or subjobs.superseded(job, context):
        return
    with jobs.running(job_id) as progress:
        progress.step("publishing the pool")
        try:
            summary = split.publish(progress.job, subjobs.outputs(progress.job))
        except Exception:
            split.discard(progress.job)
            raise
        _finish(progress, summary)


#: this app's jobs (registered by workbench.jobs.kinds.autodiscover): a part done again removes what it wrote first;
#: a join done again finds its pool published
JOB_KINDS = (
    JobKind("pool build", "Pool build", build_pool, part=pool_part, join=join_pool,
            help="Builds a pool with a strategy; split by topic when the strategy allows it."),
    JobKind("active-learning features", "Active-learning features", compute_features,
            help="Computes the documents' features cal learns from, once per collection."),
)

"""Pooling's background jobs: building or extending a pool (run by ``manage.py db_worker``)."""

from __future__ import annotations

from django.urls import reverse
from django_tasks import task

from pooling import strategies as S
from pooling.features import KIND as FEATURES_KIND
from pooling.features import features_for
from pooling.services import pool_build
from workbench import jobs
from workbench.corpus import documents_copy_in
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
        copied = copy_in_pooled(job.collection, pool, progress)
        progress.finish(lines=[f"pool {pool.name} ({pool.strategy}, seed {pool.seed}, {pool.order} order): added "
                               f"{summary.added} documents in round {summary.round}; {summary.total} documents on "
                               f"{summary.topics} topics {summary.runs_text()}"] + copied,
                        url=reverse("pooling:pools", args=[job.collection.slug]), label="Pools of this collection")


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

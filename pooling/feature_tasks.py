"""The active-learning features job (:mod:`pooling.features`; re-exported by ``pooling.tasks``).

Its own module so that what builds and advances pools can ask for it: ``pooling.tasks`` imports the pool
services, which import :mod:`pooling.advance`, which asks for this job when a judgment finds the stored
features stale.
"""

from __future__ import annotations

from django.db import transaction
from django.urls import reverse
from django_tasks import task

from pooling.features import KIND, features_for
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection, Job


@task()
def compute_features(job_id: int) -> None:
    """The collection's features for active learning, again after its documents changed (queued by a judgment
    in a ``cal`` pool that found them stale)."""
    with jobs.running(job_id) as progress:
        collection = progress.job.collection
        progress.step(f"computing the {KIND} of {collection.documents.count():,} documents")
        features = features_for(collection)
        progress.finish(lines=[f"{KIND} of {len(features.docnos) if features else 0:,} documents stored"],
                        url=reverse("pooling:pools", args=[collection.slug]), label="Pools of this collection")


def request_features(collection: Collection) -> None:
    """Queue the features job for the collection once the write that found its features stale (a judgment) is
    committed, unless one is waiting or running then (a burst of judgments gives one job)."""
    collection_pk = collection.pk
    transaction.on_commit(lambda: _queue(collection_pk))


def _queue(collection_pk: int) -> None:
    collection = Collection.objects.filter(pk=collection_pk).first()
    if collection is None or Job.objects.filter(kind=KIND, collection=collection,
                                                status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).exists():
        return
    jobs.job_start(compute_features, kind=KIND, collection=collection)

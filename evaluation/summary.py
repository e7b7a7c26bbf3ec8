"""A collection's counts across every layer (what `show_collection` prints): only the top app sees them all."""

from __future__ import annotations

from judging.models import Judgment
from pooling.models import PoolEntry
from workbench.models import Collection


def collection_summary(collection: Collection) -> dict:
    """What `show_collection` prints."""
    return {
        "slug": collection.slug,
        "name": collection.name,
        "topics": collection.topics.count(),
        "documents": collection.documents.count(),
        "runs": list(collection.runs.order_by("tag").values_list("tag", flat=True)),
        "judgments": Judgment.objects.filter(collection=collection).count(),
        "pool": PoolEntry.objects.filter(pool__collection=collection).values("topic_id", "docno").distinct().count(),
    }

"""A collection's counts across every layer (what `show_collection` prints): only the top app sees them all."""

from __future__ import annotations

from evaluation.selectors import judged_figures
from judging.models import Judgment
from pooling.models import PoolEntry
from workbench.models import Collection


def collection_summary(collection: Collection) -> dict:
    """What `show_collection` prints. ``judgments`` counts judgment records (revisions included); the two
    "judged" figures are the pages' (:func:`evaluation.selectors.judged_figures`): ``judged_in_pool`` of the
    main pool, and ``judged_documents``, the judged documents of every topic, in the pool or outside it."""
    judged = judged_figures(collection)
    return {
        "slug": collection.slug,
        "name": collection.name,
        "topics": collection.topics.count(),
        "documents": collection.documents.count(),
        "runs": list(collection.runs.order_by("tag").values_list("tag", flat=True)),
        "judgments": Judgment.objects.filter(collection=collection).count(),
        "pool": PoolEntry.objects.filter(pool__collection=collection, pool__published=True).values("topic_id", "docno").distinct().count(),
        "judged_in_pool": {"pool": judged.pool, "judged": judged.judged_in_pool, "pooled": judged.pooled,
                           "percent": judged.percent_in_pool},
        "judged_documents": judged.judgments,
    }

"""A collection's document features for active learning, computed once (Django side of :mod:`.strategies.features`).

The features of a collection are kept in process, keyed by the collection and a fingerprint of its
documents (how many, the last id), so that a new document import recomputes them and nothing else does.
"""

from __future__ import annotations

from django.db.models import Count, Max

from pooling.strategies.features import Features, build_features
from workbench.cache import LRU
from workbench.models import Collection, Document

__all__ = ["features_for", "fingerprint"]

_cache = LRU(size=8)


def fingerprint(collection: Collection) -> tuple[int, int, int]:
    stats = Document.objects.filter(collection_id=collection.pk).aggregate(n=Count("id"), last=Max("id"))
    return collection.pk, stats["n"] or 0, stats["last"] or 0


def features_for(collection: Collection) -> Features | None:
    """The collection's features (None when it holds no document), computed on first use."""
    key = fingerprint(collection)
    if key[1] == 0:
        return None
    cached = _cache.get(key)
    if cached is None:
        rows = Document.objects.filter(collection_id=collection.pk).order_by("id").values_list(
            "docno", "title", "text").iterator(chunk_size=5000)
        docnos, texts = [], []
        for docno, title, text in rows:
            docnos.append(docno)
            texts.append(f"{title} {text}")
        cached = build_features(docnos, texts)
        _cache.put(key, cached)
    return cached

"""A collection's document features for active learning, computed once (Django side of :mod:`.strategies.features`).

Computed by whoever needs them first (the job that builds a ``cal`` pool, or ``simulate_pool``) and
stored in the database (:class:`pooling.models.CollectionFeatures`), so that the web processes that serve
judgments only load them; kept in process afterwards. A fingerprint of the documents (how many, the last
id) tells when an import made them stale.
"""

from __future__ import annotations

import io

from django.db.models import Count, Max

from pooling.models import CollectionFeatures
from pooling.strategies.cal import Corpus
from pooling.strategies.features import Features, build_features, load_features
from workbench.cache import LRU
from workbench.models import Collection, Document

__all__ = ["corpus_for", "features_for", "fingerprint", "topic_texts"]

_cache = LRU(size=8)


def fingerprint(collection: Collection) -> tuple[int, int, int]:
    stats = Document.objects.filter(collection_id=collection.pk).aggregate(n=Count("id"), last=Max("id"))
    return collection.pk, stats["n"] or 0, stats["last"] or 0


def _compute(collection: Collection) -> Features:
    rows = Document.objects.filter(collection_id=collection.pk).order_by("id").values_list(
        "docno", "title", "text").iterator(chunk_size=5000)
    docnos, texts = [], []
    for docno, title, text in rows:
        docnos.append(docno)
        texts.append(f"{title} {text}")
    return build_features(docnos, texts)


def _stored(key: tuple[int, int, int]) -> Features | None:
    stored = CollectionFeatures.objects.filter(collection_id=key[0], documents=key[1], last_document=key[2]).first()
    return None if stored is None else load_features(io.BytesIO(bytes(stored.data)))


def features_for(collection: Collection) -> Features | None:
    """The collection's features (None when it holds no document): from memory, the database, or computed."""
    key = fingerprint(collection)
    if key[1] == 0:
        return None
    cached = _cache.get(key)
    if cached is None:
        cached = _stored(key)
        if cached is None:
            cached = _compute(collection)
            buffer = io.BytesIO()
            cached.save(buffer)
            CollectionFeatures.objects.update_or_create(collection_id=collection.pk, defaults={
                "documents": key[1], "last_document": key[2], "data": buffer.getvalue()})
        _cache.put(key, cached)
    return cached


def topic_texts(collection: Collection) -> dict[str, str]:
    """qid -> title and description, the text ``cal`` seeds its classifier with."""
    return {qid: " ".join(x for x in (title, description) if x)
            for qid, title, description in collection.topics.values_list("qid", "title", "description")}


def corpus_for(collection: Collection) -> Corpus | None:
    """What ``cal`` learns over: the features and the topics' texts (None without documents)."""
    features = features_for(collection)
    return None if features is None else Corpus(features, topic_texts(collection))

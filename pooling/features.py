"""A collection's document features for active learning, computed once (Django side of :mod:`.strategies.features`).

Computed by a job or a command (the job that builds a ``cal`` pool, the features job, ``simulate_pool``) and
stored in the database (:class:`pooling.models.CollectionFeatures`), so that the web processes that serve
judgments only load them; kept in process afterwards. A fingerprint of the documents (how many, the last
id) tells when an import made them stale, and the layout's version (``strategies.features.VERSION``, in the
blob) when an upgrade did: a judgment then goes on with the stored features (the new documents are not
candidates yet; features of an older layout give ``cal`` no BM25 anchor) and queues the features job
(:mod:`pooling.feature_tasks`), never computes them in the request (6.8 s at 100,000 documents).
"""

from __future__ import annotations

import io
from collections.abc import Callable

from django.db.models import Count, Max

from pooling.models import CollectionFeatures
from pooling.strategies.cal import Corpus
from pooling.strategies.features import VERSION, Features, build_features, load_features
from workbench.cache import LRU
from workbench.models import Collection, Document

__all__ = ["corpus_for", "features_for", "fingerprint", "topic_texts"]

_cache = LRU(size=8)
#: (collection, documents, last document, built at) of stored features of an older layout: not loaded again
_outdated = LRU(size=64)


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
    """The stored features of these documents at the current layout, or None."""
    rows = CollectionFeatures.objects.filter(collection_id=key[0], documents=key[1], last_document=key[2])
    built = rows.values_list("built_at", flat=True).first()
    if built is None or _outdated.get((*key, built)) is not None:
        return None
    stored = rows.first()
    features = None if stored is None else load_features(io.BytesIO(bytes(stored.data)))
    if features is not None and features.version < VERSION:
        _outdated.put((*key, stored.built_at), True)
        return None
    return features


KIND = "active-learning features"


def _latest_stored(collection: Collection) -> Features | None:
    stored = CollectionFeatures.objects.filter(collection_id=collection.pk).defer("data").first()
    if stored is None:
        return None
    key = (collection.pk, stored.documents, stored.last_document, stored.built_at)  # not a current features' key
    cached = _cache.get(key)
    if cached is None:
        cached = load_features(io.BytesIO(bytes(stored.data)))
        _cache.put(key, cached)
    return cached


def features_for(collection: Collection, *, compute: bool = True,
                 stale: Callable[[Collection], None] | None = None) -> Features | None:
    """The collection's features (None when it holds no document): from memory, the database, or computed.
    ``compute=False`` (a request): stale stored features are used as they are and ``stale`` is told (the
    caller queues the features job, :func:`pooling.feature_tasks.request_features`); they are computed here
    only if none were ever stored (a ``cal`` pool's build stores them)."""
    key = fingerprint(collection)
    if key[1] == 0:
        return None
    cached = _cache.get(key)
    if cached is None:
        cached = _stored(key)
        if cached is None and not compute:
            outdated = _latest_stored(collection)
            if outdated is not None:
                if stale is not None:
                    stale(collection)
                return outdated
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


def corpus_for(collection: Collection, *, compute: bool = True,
               stale: Callable[[Collection], None] | None = None) -> Corpus | None:
    """What ``cal`` learns over: the features and the topics' texts (None without documents)."""
    features = features_for(collection, compute=compute, stale=stale)
    return None if features is None else Corpus(features, topic_texts(collection))

"""What evaluation computes, kept in process per *version* of a collection (``workbench.cache.LRU``).

Evaluation stores nothing (no database writes): it reads the collection's state once per version, hands
it to the Django-free engine and keeps the results here.

Version: judgments are an append-only log (never deleted but with their topic), so the last judgment's id
and the number of topics change whenever the qrels can; with the runs' (id, checksum, team, contributes),
the pools' (id, updated_at) and each pool's number of entries (counted on its unique index) it identifies
everything a score depends on. Reading it costs a few index look-ups and one count per pool (no count of
judgments: a page pays it on every request); everything else is computed once per version.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Hashable

from django.db.models import Max

from judging.models import Judgment
from pooling.models import Pool, PoolEntry
from workbench.cache import LRU
from workbench.models import Collection, Run, Topic

#: results per version (leaderboards, scores, qrels, snapshots)
cache = LRU(size=64)
#: rankings of every run against the current qrels: big (an entry per judged line), so only the latest few
rankings = LRU(size=2)


def clear_caches() -> None:
    """Forget every computed result (benchmarks measuring cold reads; tests)."""
    cache.clear()
    rankings.clear()


def cached(key: Hashable, compute: Callable[[], object]):
    """Compute once per key (keys start with the collection's version)."""
    return cache.get_or_compute(key, compute)


_pinned: contextvars.ContextVar[dict | None] = contextvars.ContextVar("pinned_versions", default=None)


@contextlib.contextmanager
def one_version():
    """Within the block, each collection's version is read once: every read of a page (or of one
    selector, which calls several cached steps) sees one state of the collection, and the four queries
    of :func:`version` are paid once rather than per step. For reads only: a write inside the block
    would not be seen. Nested blocks share the outermost's versions."""
    if _pinned.get() is not None:
        yield
        return
    token = _pinned.set({})
    try:
        yield
    finally:
        _pinned.reset(token)


def reads(function):
    """Decorator for read-only selectors: the whole call sees one version (:func:`one_version`)."""

    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        with one_version():
            return function(*args, **kwargs)

    return wrapped


def version(collection: Collection) -> tuple:
    pinned = _pinned.get()
    if pinned is not None and collection.pk in pinned:
        return pinned[collection.pk]
    key = _read_version(collection)
    if pinned is not None:
        pinned[collection.pk] = key
    return key


def _read_version(collection: Collection) -> tuple:
    last = Judgment.objects.filter(collection=collection).aggregate(m=Max("id"))["m"]  # an index look-up
    topics = Topic.objects.filter(collection=collection).count()
    runs = tuple(Run.objects.filter(collection=collection).order_by("tag")
                 .values_list("id", "tag", "sha256", "team", "contributes"))
    pools = tuple(Pool.objects.filter(collection=collection).order_by("id").values_list("id", "updated_at"))
    entries = tuple(PoolEntry.objects.filter(pool_id=pool).count() for pool, _ in pools)  # its unique index
    gains = tuple(sorted((collection.grade_gains or {}).items()))
    return (collection.pk, collection.relevant_from, gains, last, topics, runs, pools, entries)

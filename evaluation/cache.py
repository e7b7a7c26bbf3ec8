"""What evaluation computes, kept in process per *version* of a collection (``workbench.cache.LRU``).

Evaluation stores nothing (no database writes): it reads the collection's state once per version, hands
it to the Django-free engine and keeps the results here.

Version: judgments are an append-only log, so (count, last id) of a collection's judgments changes
whenever its qrels can; with the runs' (id, checksum, team, contributes), the pools' (id, updated_at)
and the pool entries' (count, last id) it identifies everything a score depends on. Reading it costs
four small queries; everything else is computed once per version.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Hashable

from django.db.models import Count, Max

from judging.models import Judgment
from pooling.models import Pool, PoolEntry
from workbench.cache import LRU
from workbench.models import Collection, Run

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
    judgments = Judgment.objects.filter(collection=collection).aggregate(n=Count("id"), last=Max("id"))
    runs = tuple(Run.objects.filter(collection=collection).order_by("tag")
                 .values_list("id", "tag", "sha256", "team", "contributes"))
    pools = tuple(Pool.objects.filter(collection=collection).order_by("id").values_list("id", "updated_at"))
    entries = PoolEntry.objects.filter(pool__collection=collection).aggregate(n=Count("id"), last=Max("id"))
    gains = tuple(sorted((collection.grade_gains or {}).items()))
    return (collection.pk, collection.relevant_from, gains, judgments["n"], judgments["last"], runs, pools,
            entries["n"], entries["last"])

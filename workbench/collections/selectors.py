"""Reads of the shared domain."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import connection
from django.db.models import F, Q, QuerySet
from django.db.models.functions import Coalesce

from workbench.models import Collection, Run, RunData

if TYPE_CHECKING:  # pandas and the run store (pyarrow) come with the first run read, not with every start-up
    import pandas as pd


def is_organizer(user) -> bool:
    """Organizers run tracks: staff, superusers and members of the "organizers" group."""
    if not user.is_authenticated:
        return False
    if user.is_superuser or user.is_staff:
        return True
    return user.groups.filter(name="organizers").exists()


def may_organize(user, collection: Collection) -> bool:
    """The one access rule for a collection's organizer pages, jobs and downloads: superusers manage every
    collection; a user with the organizer role manages the collections they are an organizer of, and those
    with no organizers assigned (every organizer manages those, as before organizers were per collection)."""
    if not is_organizer(user):
        return False
    if user.is_superuser:
        return True
    organizers = set(collection.organizers.values_list("pk", flat=True))
    return not organizers or user.pk in organizers


def organized_collections(user) -> QuerySet[Collection]:
    """The collections ``user`` manages (see ``may_organize``)."""
    if not is_organizer(user):
        return Collection.objects.none()
    if user.is_superuser:
        return Collection.objects.all()
    return Collection.objects.filter(Q(organizers=user) | Q(organizers=None)).distinct()


def collections_visible_to(user) -> QuerySet[Collection]:
    if is_organizer(user):
        managed = organized_collections(user)
        if is_researcher(user):
            return Collection.objects.filter(Q(pk__in=managed.values("pk")) | Q(researchers_may_download=True))
        return managed
    if user.is_authenticated and user.groups.filter(name="researchers").exists():
        return Collection.objects.filter(researchers_may_download=True)
    return Collection.objects.none()


class RunDataMissing(ValueError):
    """A run whose ranked lines are not in the database (removed by hand): pages say so in one line."""


def run_frames(collection: Collection, *, tags=None, contributing_only: bool = False, topics=None,
               depth: int | None = None) -> dict[str, pd.DataFrame]:
    """Decoded run entries (qid, docno, rank, score; see runstore) by run tag, cached in-process; with
    ``topics``, only those topics' rows (a part of a job split by topic: decoded for it, not cached); with
    ``depth``, at least each topic's first ``depth`` rows in ranking order (a depth-k pool: not cached)."""
    from workbench.collections import runstore

    # not collection.runs: setting the known collection on each run reads the deferred collection_id (a query per run)
    runs = Run.objects.filter(collection_id=collection.pk)
    if tags is not None:
        runs = runs.filter(tag__in=list(tags))
    if contributing_only:
        runs = runs.filter(contributes=True)
    runs = list(runs.only("id", "tag", "sha256"))
    frames: dict[str, pd.DataFrame] = {}
    missing = []
    for run in runs:
        frame = runstore.frame_cache.get((run.id, run.sha256))
        if frame is None:
            missing.append(run)
        else:
            frames[run.tag] = frame if topics is None else frame[frame["qid"].isin(list(topics))].reset_index(drop=True)
    if missing:
        blobs = _run_blobs([r.id for r in missing], depth=depth)
        lost = sorted(run.tag for run in missing if run.id not in blobs)
        if lost:
            raise RunDataMissing(f"run {', '.join(map(repr, lost))} of collection {collection.slug!r} has no stored "
                                 "lines (they were removed outside the workbench): import the run file again")
        for run in missing:
            frames[run.tag] = runstore.decode(blobs.pop(run.id), topics, depth)
            if topics is None and depth is None:
                runstore.frame_cache.put((run.id, run.sha256), frames[run.tag])
    return {run.tag: frames[run.tag] for run in runs}


def _run_blobs(ids: list[int], *, depth: int | None = None) -> dict[int, bytes]:
    """The stored tables of these runs; for rows down to ``depth`` at most ``runstore.HEAD_DEPTH``, their heads
    where they have one (what a depth-k pool reads). On PostgreSQL in binary: Django's cursor receives bytea as
    hex text, twice the bytes, decoded in Python (most of a cold read of 150 runs)."""
    from workbench.collections import runstore

    head = depth is not None and depth <= runstore.HEAD_DEPTH
    if connection.vendor != "postgresql":
        column = Coalesce("head", "table") if head else F("table")
        return dict(RunData.objects.filter(run_id__in=ids).values_list("run_id", column))
    import psycopg  # only a PostgreSQL deployment needs it loaded

    meta = RunData._meta
    quote = connection.ops.quote_name
    table = quote(meta.get_field("table").column)
    if head:
        table = f"COALESCE({quote(meta.get_field('head').column)}, {table})"
    sql = (f"SELECT {quote(meta.get_field('run').column)}, {table} "
           f"FROM {quote(meta.db_table)} WHERE {quote(meta.get_field('run').column)} = ANY(%s)")
    connection.ensure_connection()
    # a plain (server-binding) cursor: the client-binding ones Django makes cannot return binary
    with psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, [ids], binary=True)
        return {run_id: bytes(blob) for run_id, blob in cursor.fetchall()}


def is_researcher(user) -> bool:
    return user.is_authenticated and user.groups.filter(name="researchers").exists()


def can_download(user, collection: Collection) -> bool:
    """The collection's organizers always; researchers where the organizer allows it; assessors never."""
    return may_organize(user, collection) or (collection.researchers_may_download and is_researcher(user))

"""The extras' files: what the results pages other than the leaderboard read, stored by the board job beside
the board (:mod:`evaluation.board_extras` computes them; :mod:`evaluation.board_files` holds the boards).

For one collection version and qrels policy, each extra is one Parquet file (a table, and JSON in the file's
metadata) named ``<collection id>/extras/<version>.<policy>.<name>.parquet``, stored whole or not at all where
the boards are (:mod:`evaluation.board_store`). This module names, writes and reads them; it computes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evaluation import board_files, board_store, cache
from workbench.jsonsafe import numpy_scalar
from workbench.models import Collection, Job

__all__ = ["DEFAULT_LOO", "LAST_EXTRA", "LOO_KIND", "TOPIC_DEPTHS", "extra_name", "latest", "loo_name", "pending",
           "prune", "read_extra", "stored", "topic_qrels", "write_extra"]

#: the ``Job.kind`` of a leave-one-out computed for a measure the board job does not store
LOO_KIND = "leave-one-out"
#: the depths of the topic page's "relevant found per pool depth" (``selectors.topic_report``'s default)
TOPIC_DEPTHS = (1, 5, 10, 20, 50, 100)
#: the leave-one-out every board job stores (the reusability page's default)
DEFAULT_LOO = (("map", "run"), ("map", "team"))
#: the extra a board job writes last: when it is there, the job stored every extra
LAST_EXTRA = f"loo.{DEFAULT_LOO[-1][1]}.{DEFAULT_LOO[-1][0]}"


def extras_dir(collection_pk: int) -> Path:
    """The extras on this machine's disk (with files in object storage, this process's cache of them)."""
    return board_files.board_dir() / _folder(collection_pk)


def _folder(collection_pk: int) -> str:
    return f"{collection_pk}/extras"


def extra_name(collection_pk: int, version: str, policy: str, name: str) -> str:
    return f"{_folder(collection_pk)}/{version}.{board_files._policy_file(policy)}.{name}.parquet"


def loo_name(measure_name: str, by: str) -> str:
    """The extra of a leave-one-out: ``loo.run.map`` (the measure's printed name, made safe for a file)."""
    safe = "".join(c if c.isalnum() or c in "_-" else f"~{ord(c):x}" for c in measure_name)
    return f"loo.{by}.{safe}"


# ----------------------------------------------------------------------------------------- files
def write_extra(name: str, frame: pd.DataFrame, meta: dict | None = None) -> Path:
    return board_store.write(name, extra_table(frame, meta))


def extra_table(frame: pd.DataFrame, meta: dict | None = None) -> pa.Table:
    """The table an extra is stored as: ``frame``, and ``meta`` as JSON in its metadata."""
    table = pa.Table.from_pandas(frame, preserve_index=False)
    return table.replace_schema_metadata({
        **(table.schema.metadata or {}), b"extra": json.dumps(meta or {}, default=numpy_scalar).encode()})


def read_extra(path: Path) -> tuple[pd.DataFrame, dict]:
    table = pq.read_table(path)
    meta = json.loads((table.schema.metadata or {}).get(b"extra", b"{}"))
    return table.to_pandas(), meta


def stored(collection: Collection, policy: str, name: str) -> tuple[pd.DataFrame, dict] | None:
    """The extra ``name`` of the collection's current version under ``policy``, or None (not stored)."""
    version = cache.version(collection)
    return board_store.cached((version, "board extra", policy, name),
                              extra_name(collection.pk, board_files.version_key(version), policy, name), read_extra)


def topic_qrels(collection: Collection, policy: str, qid: str) -> pd.DataFrame | None:
    """One topic's lines of the qrels the board job evaluated with (qid, docno, rel), or None (not stored):
    read from the file alone, without the other topics' judgments."""
    name = extra_name(collection.pk, board_files.version_key(cache.version(collection)), policy, "qrels")
    return board_store.read_local(name, lambda path: pq.read_table(path, filters=[("qid", "=", qid)]).to_pandas())


def latest(collection: Collection, policy: str, name: str) -> tuple[pd.DataFrame, dict] | None:
    """The newest stored extra ``name`` under ``policy`` whatever its version (shown, marked "updating",
    while a job computes the current one), or None."""
    found = board_store.listing(_folder(collection.pk), f".{board_files._policy_file(policy)}.{name}.parquet")
    if not found:
        return None
    stored_name, written = found[0]
    return board_store.cached(("board extra file", str(board_files.board_dir()), stored_name, written), stored_name,
                              read_extra)


def prune(collection_pk: int, kept: set[str], policy: str) -> None:
    """Remove the extras of ``policy`` whose version is not in ``kept`` (the boards kept)."""
    infix = f"{board_files._policy_file(policy)}."
    for name in board_store.names(_folder(collection_pk)):
        version, _, rest = name.rsplit("/", 1)[1].partition(".")
        if rest.startswith(infix) and version not in kept:
            board_store.delete(name)


def pending(collection: Collection, measure: str, by: str, policy: str) -> Job | None:
    """The job that will store this leave-one-out: a board job queued or running (for the default
    measure), or a leave-one-out job queued or running for it."""
    active = [Job.Status.QUEUED, Job.Status.RUNNING]
    if (measure, by) in DEFAULT_LOO:
        job = board_files.pending_job(collection)
        if job is not None and policy in job.params.get("policies", []):
            return job
    for job in Job.objects.filter(collection=collection, kind=LOO_KIND, status__in=active).order_by("-id"):
        if {k: v for k, v in job.params.items() if k != "version"} == {"measure": measure, "by": by, "policy": policy}:
            return job
    return None

"""The stored boards: one evaluation of a collection version per qrels policy, as files any web process reads.

A board holds, for one version of a collection (:func:`evaluation.cache.version`) and one qrels policy,
every run's per-topic values and trec_eval "all" values of the base measures
(:func:`evaluation.scoring.base_requests`), infAP/xinfAP/infNDCG where the pool was sampled, and what a
leaderboard needs besides (teams, contributed runs, the main pool, the number of judged topics). Stored as one
Parquet file named ``<collection id>/<version>.<policy>.parquet`` (per-topic values as columns, run and topic
dictionary-encoded; the rest as JSON in the file's metadata), whole or not at all, in ``BOARD_DIR`` or, with
files in object storage, in the bucket, read by any web process through its own cache
(:mod:`evaluation.board_store`).

This module reads and writes those files and tells the state of the board jobs; it computes nothing.
:mod:`evaluation.board` builds boards, :func:`evaluation.tasks.request_board` asks for one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from evaluation import board_store, cache
from evaluation.engine import parse_measures
from evaluation.engine.evaluator import EvalResult
from judging.policies import DEFAULT_POLICY
from workbench.models import Collection, Job

__all__ = ["KEEP", "KIND", "Board", "any_stored", "board_dir", "board_name", "current", "known_policies",
           "last_job", "latest", "pending_job", "read", "refusal", "stored_figure", "version_key", "write"]

#: the ``Job.kind`` of a board computation
KIND = "board"
#: boards kept per collection and policy besides the newest (the "updating" page shows the previous one)
KEEP = 1


@dataclass(frozen=True)
class Board:
    """One stored evaluation: ``scores`` (tag -> the engine's result, per topic and "all") and ``meta``."""

    version: str
    policy: str
    scores: dict[str, EvalResult]
    meta: dict

    @property
    def requests(self) -> list[str]:
        return list(self.meta["requests"])


def version_key(version: tuple) -> str:
    """A short stable name for a collection version (its tuple holds ids, checksums and timestamps)."""
    return hashlib.sha1(repr(version).encode()).hexdigest()[:16]


def _policy_file(policy: str) -> str:
    return policy.replace("/", "+")


def board_dir() -> Path:
    """The boards on this machine's disk: ``BOARD_DIR`` if set (the tests give each test its own), else
    ``VAR_DIR/boards``; with files in object storage, this process's cache of them."""
    return board_store.root()


def board_name(collection_pk: int, version: str, policy: str) -> str:
    return f"{collection_pk}/{version}.{_policy_file(policy)}.parquet"


# ----------------------------------------------------------------------------------------------- writing
def write(name: str, scores: dict[str, EvalResult], meta: dict) -> Path:
    """Store ``scores`` (every run's per-topic values as one wide table) and ``meta`` whole or not at all."""
    names = sorted({n for s in scores.values() for n in s.values})
    tags, qids, columns = [], [], {n: [] for n in names}
    aggregates = {}
    for tag, s in scores.items():
        tags.extend([tag] * len(s.qids))
        qids.extend(map(str, s.qids))
        for n in names:
            v = s.values.get(n)
            columns[n].append(np.full(len(s.qids), np.nan) if v is None else np.asarray(v, dtype=np.float64))
        aggregates[tag] = {k: _plain(v) for k, v in s.aggregate.items()}
    table = pa.table({"tag": pa.array(tags, pa.string()).dictionary_encode(),
                      "qid": pa.array(qids, pa.string()).dictionary_encode(),
                      **{n: pa.array(np.concatenate(c) if c else np.zeros(0), pa.float64())
                         for n, c in columns.items()}})
    full = {**meta, "aggregates": aggregates, "order": list(scores)}
    return board_store.write(name, table.replace_schema_metadata({b"board": json.dumps(full).encode()}))


def _plain(value):
    if hasattr(value, "item"):
        value = value.item()
    return value


def read(path: Path) -> Board:
    """A stored board (the runs' results rebuilt from the columns, without copying per topic)."""
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[b"board"])
    aggregates, order = meta.pop("aggregates"), meta.pop("order")
    measures = tuple(parse_measures(meta["requests"]))
    tag_column = table.column("tag").combine_chunks()
    codes = tag_column.indices.to_numpy(zero_copy_only=False)
    dictionary = tag_column.dictionary.to_pylist()
    qids = np.asarray(table.column("qid").to_pylist(), dtype=object)
    names = [n for n in table.column_names if n not in ("tag", "qid")]
    values = {n: table.column(n).to_numpy() for n in names}
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if codes.size else np.zeros(0, dtype=int)
    ends = np.r_[starts[1:], codes.size].astype(int)
    rows = {dictionary[codes[a]]: (int(a), int(b)) for a, b in zip(starts, ends, strict=True)}
    scores = {}
    for tag in order:
        a, b = rows.get(tag, (0, 0))
        per_topic = {n: v[a:b] for n, v in values.items()}
        scores[tag] = EvalResult(list(qids[a:b]), per_topic, aggregates[tag], measures, tag)
    policy = meta["policy"]
    return Board(version=meta["version"], policy=policy, scores=scores, meta=meta)


# ----------------------------------------------------------------------------------------------- reading
def current(collection: Collection, policy: str) -> Board | None:
    """The board of the collection's current version under ``policy``, or None (not computed yet)."""
    version = cache.version(collection)
    return board_store.cached((version, "board", policy), board_name(collection.pk, version_key(version), policy),
                              read)


def stored_figure(collection: Collection, name: str) -> dict | None:
    """A figure the board job stored beside the scores (``completeness``, ``judged_figures``,
    ``assessors``) for the collection's current version, or None when no board of it is stored."""
    stored = current(collection, DEFAULT_POLICY)
    return None if stored is None else stored.meta.get(name)


def latest(collection: Collection, policy: str) -> Board | None:
    """The newest stored board under ``policy``, whatever its version (shown while the current one is computed)."""
    found = _listing(collection, policy)
    if not found:
        return None
    name, written = found[0]
    return board_store.cached(("board file", str(board_dir()), name, written), name, read)


def any_stored(collection: Collection, policy: str) -> bool:
    """Whether a board of any version is stored under ``policy`` (a listing: no file read, no version)."""
    return bool(_listing(collection, policy))


def _listing(collection: Collection, policy: str) -> list[tuple[str, float]]:
    """The collection's stored boards under ``policy``, every version, newest first."""
    return board_store.listing(str(collection.pk), f".{_policy_file(policy)}.parquet")


def known_policies(collection: Collection) -> list[str]:
    """The policies of the collection's stored boards (those pages asked for), default first. Asked on every
    saved judgment: in a bucket, the listing is kept in this process until a board job starts or ends (only
    a board job stores a board of a new policy)."""
    if not board_store.shared():
        return _known_policies(collection.pk)
    last = Job.objects.filter(collection=collection, kind=KIND).order_by("-id").values_list("id", "status").first()
    return list(cache.cached(("board policies", collection.pk, last), lambda: _known_policies(collection.pk)))


def _known_policies(collection_pk: int) -> list[str]:
    found = {name.rsplit("/", 1)[1].split(".", 1)[1].removesuffix(".parquet").replace("+", "/")
             for name in board_store.names(str(collection_pk))}
    return sorted(found | {DEFAULT_POLICY}, key=lambda p: (p != DEFAULT_POLICY, p))


def pending_job(collection: Collection) -> Job | None:
    """The board job queued or running for the collection, if any."""
    return Job.objects.filter(collection=collection, kind=KIND,
                              status__in=[Job.Status.QUEUED, Job.Status.RUNNING]).order_by("-id").first()


def last_job(collection: Collection) -> Job | None:
    return Job.objects.filter(collection=collection, kind=KIND).order_by("-id").first()


def refusal(job: Job | None, collection: Collection, policy: str) -> str:
    """Why the job could not evaluate ``policy`` at the collection's current version ("" if it did not refuse)."""
    if job is None or job.status != Job.Status.DONE:
        return ""
    result = job.result or {}
    if result.get("version") != version_key(cache.version(collection)):
        return ""
    return (result.get("skipped") or {}).get(policy, "")

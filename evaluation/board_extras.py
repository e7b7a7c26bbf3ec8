"""What the results pages other than the leaderboard read, stored by the board job beside the board
(:mod:`evaluation.board`) so that no page ranks or scores runs in the request.

For one collection version and qrels policy, each *extra* is one Parquet file (a table, and JSON in the
file's metadata) named ``<collection id>/extras/<version>.<policy>.<name>.parquet``, stored whole or not at all
where the boards are (:mod:`evaluation.board_store`: ``BOARD_DIR``, or the bucket):

* ``qrels``: the qrels evaluated (a page that needs one topic's judgments reads them alone);
* ``topics``: every topic's relevant documents found per pool depth (the topic page's table and plot) and
  its number of relevant documents;
* ``recall``: the recall estimates of every topic (topic and reusability pages); ``run_recall``: each run's
  recall against them (reusability page);
* ``curves``: every run's mean precision-recall (interpolated or not) and ROC curve (curves page), from one
  ranking of every run (:mod:`evaluation.engine.curve_batch`);
* ``loo.<by>.<measure>``: leave-one-run-out or leave-one-team-out of a measure (reusability page), MAP by
  run and by team in every board job, another measure in a job the page asks for (:data:`LOO_KIND`).

Every extra holds the numbers the request would compute (the same functions, or, for curves, the same
floats: tests compare them). A page reads an extra of the current version or, when there is none,
computes in the request as before (an assessor's qrels, another measure) or shows the job's progress
(leave-one-out, the one heavy computation).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from evaluation import board, board_store, cache
from workbench.jsonsafe import numpy_scalar
from workbench.models import Collection, Job

__all__ = ["LOO_KIND", "TOPIC_DEPTHS", "build_extras", "extra_name", "loo_name", "read_extra", "stored",
           "store_leave_one_out"]

#: the ``Job.kind`` of a leave-one-out computed for a measure the board job does not store
LOO_KIND = "leave-one-out"
#: the depths of the topic page's "relevant found per pool depth" (``selectors.topic_report``'s default)
TOPIC_DEPTHS = (1, 5, 10, 20, 50, 100)
#: the leave-one-out every board job stores (the reusability page's default)
DEFAULT_LOO = (("map", "run"), ("map", "team"))
#: runs ranked at once for their curves (the ranking of every document of 50 runs, not of all)
CURVE_BATCH = 50
#: the extra a board job writes last: when it is there, the job stored every extra
LAST_EXTRA = f"loo.{DEFAULT_LOO[-1][1]}.{DEFAULT_LOO[-1][0]}"


def extras_dir(collection_pk: int) -> Path:
    """The extras on this machine's disk (with files in object storage, this process's cache of them)."""
    return board.board_dir() / _folder(collection_pk)


def _folder(collection_pk: int) -> str:
    return f"{collection_pk}/extras"


def extra_name(collection_pk: int, version: str, policy: str, name: str) -> str:
    return f"{_folder(collection_pk)}/{version}.{board._policy_file(policy)}.{name}.parquet"


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
                              extra_name(collection.pk, board.version_key(version), policy, name), read_extra)


def topic_qrels(collection: Collection, policy: str, qid: str) -> pd.DataFrame | None:
    """One topic's lines of the qrels the board job evaluated with (qid, docno, rel), or None (not stored):
    read from the file alone, without the other topics' judgments."""
    name = extra_name(collection.pk, board.version_key(cache.version(collection)), policy, "qrels")
    return board_store.read_local(name, lambda path: pq.read_table(path, filters=[("qid", "=", qid)]).to_pandas())


def latest(collection: Collection, policy: str, name: str) -> tuple[pd.DataFrame, dict] | None:
    """The newest stored extra ``name`` under ``policy`` whatever its version (shown, marked "updating",
    while a job computes the current one), or None."""
    found = board_store.listing(_folder(collection.pk), f".{board._policy_file(policy)}.{name}.parquet")
    if not found:
        return None
    stored_name, written = found[0]
    return board_store.cached(("board extra file", str(board.board_dir()), stored_name, written), stored_name,
                              read_extra)


def prune(collection_pk: int, kept: set[str], policy: str) -> None:
    """Remove the extras of ``policy`` whose version is not in ``kept`` (the boards kept)."""
    infix = f"{board._policy_file(policy)}."
    for name in board_store.names(_folder(collection_pk)):
        version, _, rest = name.rsplit("/", 1)[1].partition(".")
        if rest.startswith(infix) and version not in kept:
            board_store.delete(name)


# ------------------------------------------------------------------------------------- computing
#: the extras read from the qrels and the runs alone (not from the board's scores) and their steps' text: a split
#: board job computes them in parts (:mod:`evaluation.board_topics`)
ALONE = {"qrels": "the qrels", "topics": "relevant documents per pool depth of every topic",
         "recall": "recall estimates", "curves": "precision-recall and ROC curves of every run"}


def build_extras(collection: Collection, policy: str, key: str, *, step: Callable[[str], None],
                 loo: dict | None = None, tables: dict | None = None) -> None:
    """Compute and store every extra of the collection's current version (``key``) under ``policy``; ``loo``:
    the leave-one-out by (measure, by), and ``tables``, extras by name (:func:`computed_extra`), computed
    already (by the parts of a split board job)."""
    for name in ("qrels", "topics", "recall", "run_recall", "curves"):  # run_recall reads the recall stored
        if name in ALONE:
            step(ALONE[name])
        table = (tables or {}).get(name)
        board_store.write(extra_name(collection.pk, key, policy, name),
                          table if table is not None else computed_extra(collection, policy, name))
    for i, (measure, by) in enumerate(DEFAULT_LOO):
        step(f"leave one {by} out ({measure}), {i + 1} of {len(DEFAULT_LOO)}")
        store_leave_one_out(collection, policy, measure, by, key=key, found=(loo or {}).get((measure, by)))


def computed_extra(collection: Collection, policy: str, name: str) -> pa.Table:
    """The table of the extra ``name`` (one of :data:`ALONE`, or ``run_recall``) computed here."""
    from evaluation import recall_estimates, scoring

    meta = None
    if name == "qrels":
        qrels = scoring.qrels_frame(collection, policy=policy)
        frame = pd.DataFrame({"qid": qrels["qid"].astype(str), "docno": qrels["docno"].astype(str),
                              "rel": qrels["rel"].to_numpy()})
    elif name == "topics":
        frame, meta = topic_depths(collection, policy)
    elif name == "recall":
        frame = recall_estimates.recall_estimates(collection, qrels_policy=policy)
    elif name == "run_recall":
        frame = recall_estimates.run_recall(collection, qrels_policy=policy)
    else:
        frame = all_curves(collection, policy)
    return extra_table(frame, meta)


def topic_depths(collection: Collection, policy: str) -> tuple[pd.DataFrame, dict]:
    """Every topic's ``relevant_by_depth`` (column ``qid`` added) and relevant documents, as the topic page
    computes them for one topic."""
    from evaluation import scoring, snapshot
    from pooling import strategies as S
    from workbench.selectors import run_frames

    snap = snapshot.snapshot(collection)
    qrels = scoring.qrels_frame(collection, policy=policy)
    qid_text = qrels["qid"].astype(str)
    contributing = [t for t, c in snap.contributed.items() if c]
    runs = run_frames(collection, tags=contributing, depth=max(TOPIC_DEPTHS))  # the heads of the runs
    provenance = S.ranked_entries(runs, max(TOPIC_DEPTHS)) if runs else None
    parts = []
    if provenance is not None and len(provenance):
        by_topic = dict(tuple(provenance.groupby(provenance["qid"].astype(str), sort=False)))
        qrels_of = dict(tuple(qrels.groupby(qid_text, sort=False)))
        for qid, lines in by_topic.items():
            mine = qrels_of.get(qid, qrels.iloc[:0])
            table = S.relevant_by_depth(lines, mine, TOPIC_DEPTHS, relevant_from=snap.relevant_from)
            parts.append(table.assign(qid=qid))
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["depth", "pool_size", "judged", "judged_fraction", "relevant", "relevant_per_judgment", "qid"])
    relevant = qrels[collection.is_relevant(qrels["rel"])].groupby(qid_text).size()
    return frame, {"relevant": {str(q): int(n) for q, n in relevant.items()}}


def all_curves(collection: Collection, policy: str) -> pd.DataFrame:
    """Columns tag, kind, x, y: every run's mean curve of each kind (what ``curves.run_curves`` gives)."""
    from evaluation import scoring
    from evaluation.engine.curve_batch import mean_curves
    from evaluation.engine.qrels import Qrels
    from evaluation.engine.ranking import rank_runs

    frame = scoring.qrels_frame(collection, policy=policy)
    qrels = Qrels.from_frame({"qid": frame["qid"].astype(str), "docno": frame["docno"],
                              "rel": frame["rel"].astype(int)})
    runs = scoring.frames(collection)
    tags = list(runs)
    found = []
    for start in range(0, len(tags), CURVE_BATCH):  # a run's curves do not depend on the others'
        batch = tags[start:start + CURVE_BATCH]
        # the curves rank every document of a run (no -M 1000), with the qrels' own grades (not gains)
        curves = mean_curves(rank_runs(qrels, [runs[t] for t in batch]), qrels, collection.relevant_from)
        found += [(batch[index], kinds) for index, kinds in curves.items()]
    return curves_frame(found)


def curves_frame(curves: list[tuple[str, dict]]) -> pd.DataFrame:
    """The curves extra's frame of (tag, kind -> (x values, y values)) in the runs' order."""
    rows = {"tag": [], "kind": [], "x": [], "y": []}
    for tag, kinds in curves:
        for kind, (xs, ys) in kinds.items():
            rows["tag"] += [tag] * len(xs)
            rows["kind"] += [kind] * len(xs)
            rows["x"] += xs
            rows["y"] += ys
    return pd.DataFrame(rows).astype({"tag": "category", "kind": "category"})


def store_leave_one_out(collection: Collection, policy: str, measure: str, by: str, *, key: str | None = None,
                        found=None) -> Path:
    """Compute leave-one-out (``reusability.compute_leave_one_out``; ``found``: computed already) and store it
    for the current version."""
    from evaluation import reusability, scoring

    with cache.one_version():
        key = key or board.version_key(cache.version(collection))
        name = scoring.measure_names([measure])
        loo = found or reusability.compute_leave_one_out(collection, measure=measure, by=by, qrels_policy=policy)
        summary = {f: getattr(loo, f) for f in ("collection", "measure", "by", "source", "max_drop", "mean_drop",
                                               "max_drop_pct", "max_rank_change", "tau", "tau_ap", "runs")}
        return write_extra(extra_name(collection.pk, key, policy, loo_name(name[0], by)), loo.table,
                           {"summary": summary})


def pending(collection: Collection, measure: str, by: str, policy: str) -> Job | None:
    """The job that will store this leave-one-out: a board job queued or running (for the default
    measure), or a leave-one-out job queued or running for it."""
    active = [Job.Status.QUEUED, Job.Status.RUNNING]
    if (measure, by) in DEFAULT_LOO:
        job = board.pending_job(collection)
        if job is not None and policy in job.params.get("policies", []):
            return job
    for job in Job.objects.filter(collection=collection, kind=LOO_KIND, status__in=active).order_by("-id"):
        if {k: v for k, v in job.params.items() if k != "version"} == {"measure": measure, "by": by, "policy": policy}:
            return job
    return None

"""What the results pages other than the leaderboard read, stored by the board job beside the board
(:mod:`evaluation.board`) so that no page ranks or scores runs in the request; this module computes them, their
files are :mod:`evaluation.extra_files`'s.

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
* ``significance``: every pair of runs on MAP (paired t, Holm: the significance page's first choice) and
  its heatmap, so that a web worker's first visit computes neither;
* ``pools`` (default policy only): every pool's statistics (sizes, unique contributions, run-to-run overlap,
  judged and relevant counts: :func:`pooling.selectors.pool_statistics` against the judged qrels), as JSON in the
  file's metadata, for the pool page and a team's pool contributions;
* ``loo.<by>.<measure>``: leave-one-run-out or leave-one-team-out of a measure (reusability page), MAP by
  run and by team in every board job, another measure in a job the page asks for (:data:`LOO_KIND`).

Every extra holds the numbers the request would compute (the same functions, or, for curves, the same
floats: tests compare them). A page reads an extra of the current version or, when there is none,
computes in the request as before (an assessor's qrels, another measure) or shows the job's progress
(leave-one-out, the one heavy computation).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pyarrow as pa

from evaluation import board_files, board_store, cache, recall_estimates, reusability, scoring, snapshot
from evaluation.engine.curve_batch import mean_curves
from evaluation.engine.qrels import Qrels
from evaluation.engine.ranking import rank_runs
from evaluation.extra_files import (  # noqa: F401  (the extras' files, under the names pages and tests use)
    DEFAULT_LOO,
    LAST_EXTRA,
    LOO_KIND,
    TOPIC_DEPTHS,
    extra_name,
    extra_table,
    extras_dir,
    latest,
    loo_name,
    pending,
    prune,
    read_extra,
    stored,
    topic_qrels,
    write_extra,
)
from judging.policies import DEFAULT_POLICY
from judging.qrels import qrels as judged_qrels
from pooling import selectors as pooling_selectors
from pooling import strategies as S
from pooling.models import Pool
from workbench.collections.selectors import run_frames
from workbench.models import Collection

__all__ = ["ALONE", "POOLS", "build_extras", "computed_extra", "curves_frame", "pool_figures", "store_leave_one_out", "store_pools",
           "store_significance",
           "topic_depths"]

#: the extra of every pool's statistics (stored under the default policy)
POOLS = "pools"
#: the significance page's first choice (measure, test, correction), stored for each policy as this extra
SIGNIFICANCE, SIGNIFICANCE_EXTRA = ("map", "t", "holm"), "significance"

#: runs ranked at once for their curves (the ranking of every document of 50 runs, not of all)
CURVE_BATCH = 50
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
    if policy == DEFAULT_POLICY:  # first: the pool page waits for it (it shows an older version's meanwhile)
        step("every pool's statistics")
        store_pools(collection, key)
    for name in ("qrels", "topics", "recall", "run_recall", "curves"):  # run_recall reads the recall stored
        if name in ALONE:
            step(ALONE[name])
        table = (tables or {}).get(name)
        board_store.write(extra_name(collection.pk, key, policy, name),
                          table if table is not None else computed_extra(collection, policy, name))
    step("the significance of every pair of runs (the significance page's first choice)")
    store_significance(collection, policy, key)
    for i, (measure, by) in enumerate(DEFAULT_LOO):
        step(f"leave one {by} out ({measure}), {i + 1} of {len(DEFAULT_LOO)}")
        store_leave_one_out(collection, policy, measure, by, key=key, found=(loo or {}).get((measure, by)))


def computed_extra(collection: Collection, policy: str, name: str) -> pa.Table:
    """The table of the extra ``name`` (one of :data:`ALONE`, or ``run_recall``) computed here."""
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


def store_significance(collection: Collection, policy: str, key: str) -> Path | None:
    """Store the ``significance`` extra: every pair of runs under the significance page's first choice
    (:data:`SIGNIFICANCE`) and its heatmap, what the page's first visit in a web worker would compute (nothing
    when fewer than two runs or topics)."""
    from evaluation import scores as stored_scores
    from evaluation.heatmap import heatmap_svg
    from evaluation.significance_pairs import significance_pairs

    measure, test, correction = SIGNIFICANCE
    scores = stored_scores.evaluate(collection, [measure], policy=policy)
    pairs = significance_pairs(scores, scoring.measure_names([measure])[0], test=test, correction=correction,
                               alpha=0.05)
    if not len(pairs):
        return None
    svg, n_runs = heatmap_svg(pairs, measure=measure)
    return write_extra(extra_name(collection.pk, key, policy, SIGNIFICANCE_EXTRA), pairs,
                       {"heatmap": svg, "n_runs": n_runs})


def store_pools(collection: Collection, key: str) -> Path:
    """Store the ``pools`` extra of the version ``key`` (also when no board could be: a pool not judged yet)."""
    return write_extra(extra_name(collection.pk, key, DEFAULT_POLICY, POOLS), *pool_figures(collection))


def pool_figures(collection: Collection) -> tuple[pd.DataFrame, dict]:
    """The ``pools`` extra: (a frame of the pools' ids, ``{"pools": {pool id: statistics}}``), the statistics
    exactly as :func:`evaluation.selectors.pool_statistics` computes them in a request."""
    qrels = judged_qrels(collection)
    pools = {str(pool.pk): pooling_selectors.pool_statistics(pool, qrels)
             for pool in Pool.objects.filter(collection=collection).select_related("collection").order_by("id")}
    return pd.DataFrame({"pool": list(pools)}, dtype=str), {"pools": pools}


def topic_depths(collection: Collection, policy: str) -> tuple[pd.DataFrame, dict]:
    """Every topic's ``relevant_by_depth`` (column ``qid`` added) and relevant documents, as the topic page
    computes them for one topic."""
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
    with cache.one_version():
        key = key or board_files.version_key(cache.version(collection))
        name = scoring.measure_names([measure])
        loo = found or reusability.compute_leave_one_out(collection, measure=measure, by=by, qrels_policy=policy)
        summary = {f: getattr(loo, f) for f in ("collection", "measure", "by", "source", "max_drop", "mean_drop",
                                               "max_drop_pct", "max_rank_change", "tau", "tau_ap", "runs")}
        return write_extra(extra_name(collection.pk, key, policy, loo_name(name[0], by)), loo.table,
                           {"summary": summary})



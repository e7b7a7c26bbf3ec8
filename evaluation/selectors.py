"""Reads of evaluation for the pages and commands: leaderboards (:mod:`evaluation.leaderboard`), per-run
and per-topic reports, significance, precision-recall curves, leave-one-out, recall estimates and
assessor agreement on rankings.

Scores follow trec_eval 9.0.8 (see :mod:`evaluation.scoring`); measure names are trec_eval's printed
names (``ndcg_cut_10``). Everything is computed once per version of the collection (its judgments, runs
and pools) and kept in process, so a page that asks again gets the same objects back at once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evaluation import board_files, cache, extra_files, scoring, snapshot
from evaluation import scores as stored_scores
from evaluation.board_extras import POOLS, SIGNIFICANCE, SIGNIFICANCE_EXTRA
from evaluation.board_leaderboard import stored_leaderboard
from evaluation.engine.significance import CORRECTION_CHOICES, TEST_CHOICES
from evaluation.judged import JudgedFigures, pool_figures
from evaluation.leaderboard import (
    CI_METHOD,
    Leaderboard,
    RunScore,
    leaderboard,
    policy_key,
    topic_table,
    topics_of,
)
from evaluation.measures import DEFAULT_MEASURES, ROBUST_MEASURES
from evaluation.recall_estimates import recall_estimates, run_recall
from evaluation.reusability import LeaveOneOut, assessor_ranking_agreement, leave_one_out
from evaluation.scoring import EvaluationError
from evaluation.significance_pairs import significance_pairs
from judging.models import Judgment
from judging.policies import DEFAULT_POLICY, HUMAN, MACHINE, POLICIES, uses_machine
from judging.qrels import assessor_names as judging_assessor_names
from judging.qrels import qrels as judged_qrels
from pooling import selectors as pooling_selectors
from pooling import strategies as S
from pooling.models import Pool
from workbench.models import Collection

__all__ = [
    "CI_METHOD", "DEFAULT_MEASURES", "ROBUST_MEASURES", "EvaluationError", "LeaveOneOut", "Leaderboard", "RunScore",
    "assessor_ranking_agreement", "leave_one_out", "leaderboard", "stored_leaderboard", "pr_curves", "recall_estimates", "run_recall",
    "JudgedFigures", "assessor_names", "judged_figures", "pool_statistics", "stored_pool_statistics", "stored_heatmap", "run_report", "significance_matrix", "topic_overview", "topic_report",
]


# ----------------------------------------------------------------------------------------- reports
def _one_name(measure: str) -> str:
    names = scoring.measure_names([measure])
    if len(names) != 1:
        raise EvaluationError(f"choose one measure value: {measure!r} gives {len(names)} ({', '.join(names)})")
    return names[0]


@cache.reads
def run_report(collection: Collection, tag: str, *, measure: str = "map", qrels_policy: str = DEFAULT_POLICY,
               assessor: str | None = None) -> pd.DataFrame:
    """The TREC participant report: per topic, the run's score against the best, median and worst of all runs.

    Columns: qid, score, best, median, worst, best_run, has_results. Best/median/worst are over the runs
    that returned results for the topic; a topic the run has no results for scores 0 (has_results False).
    """
    name = _one_name(measure)
    scores = stored_scores.evaluate(collection, [measure], policy=qrels_policy, assessor=assessor)
    if tag not in scores:
        raise EvaluationError(f"no run {tag!r} in collection {collection.slug!r}")
    topics = topics_of(scores)
    table = topic_table(scores, name, topics)
    own = table[tag]
    out = pd.DataFrame({
        "qid": topics, "score": own.fillna(0.0).to_numpy(), "best": table.max(axis=1).to_numpy(),
        "median": table.median(axis=1).to_numpy(), "worst": table.min(axis=1).to_numpy(),
        "best_run": table.fillna(-np.inf).idxmax(axis=1).to_numpy(), "has_results": own.notna().to_numpy()})
    return out


def _topic_lines(frame: pd.DataFrame, qid: str) -> pd.DataFrame:
    """A run's lines for one topic (on the category codes of a stored run: no string comparison)."""
    column = frame["qid"]
    if isinstance(column.dtype, pd.CategoricalDtype):
        position = column.cat.categories.get_indexer([qid])[0]
        if position < 0:
            return frame.iloc[:0]
        rows = np.flatnonzero(column.cat.codes.to_numpy() == position)
        if rows.size and rows[-1] - rows[0] + 1 == rows.size:  # stored runs hold a topic's lines together
            return frame.iloc[rows[0]: rows[-1] + 1]
        return frame.iloc[rows]
    return frame[column == qid]


@cache.reads
def topic_report(collection: Collection, qid: str, *, measures: Sequence[str] | None = None,
                 qrels_policy: str = DEFAULT_POLICY, assessor: str | None = None,
                 depths: Sequence[int] = (1, 5, 10, 20, 50, 100)) -> dict:
    """One topic: its text, pool size, judgments, relevant documents found per pool depth, recall
    estimate, and every run's scores on it.

    ``relevant_by_depth`` (:func:`pooling.strategies.relevant_by_depth`) ranks the contributing runs the
    way pools rank them, to the deepest of ``depths``: within the stored pool's depth it is the pool's
    own provenance, below it it shows how much a deeper pool would still need to judge.
    """
    topic = collection.topics.filter(qid=qid).first()
    if topic is None:
        raise EvaluationError(f"no topic {qid!r} in collection {collection.slug!r}")
    requests = list(measures) if measures else list(DEFAULT_MEASURES)
    names = scoring.measure_names(requests)
    snap = snapshot.snapshot(collection)
    scores = stored_scores.evaluate(collection, requests, policy=qrels_policy, assessor=assessor)
    pool = snap.main_pool
    counts = judged_figures(collection).topics.get(qid, {"pooled": 0, "judged_in_pool": 0, "judgments": 0})
    stored = extra_files.stored(collection, scoring.normalise_policy(qrels_policy), "topics") \
        if assessor is None and tuple(depths) == extra_files.TOPIC_DEPTHS else None
    if stored is not None:  # the board job's figures of every topic
        frame, meta = stored
        by_depth = frame[frame["qid"] == qid].drop(columns="qid").reset_index(drop=True)
        by_depth = by_depth if len(by_depth) else pd.DataFrame(columns=DEPTH_COLUMNS)
        relevant = int(meta["relevant"].get(qid, 0))
    else:
        by_depth, relevant = _topic_depths(collection, snap, qid, qrels_policy, assessor, depths)
    rows = []
    for tag, s in scores.items():
        has = qid in s.qids
        row = {"run": tag, "team": snap.teams[tag], "contributed": snap.contributed[tag], "has_results": has}
        for n in [*names, "judged_10"]:
            row[n] = float(s.column(n, [qid], 0.0)[0])
        rows.append(row)
    runs = pd.DataFrame(rows).sort_values([names[0], "run"], ascending=[False, True], kind="stable") \
        .reset_index(drop=True) if rows else pd.DataFrame()
    estimates = recall_estimates(collection, qrels_policy=qrels_policy, assessor=assessor)
    estimate = estimates[estimates["qid"] == qid]
    return {"qid": qid, "title": topic.title, "description": topic.description, "narrative": topic.narrative,
            "pool": None if pool is None else pool.name, "pool_size": counts["pooled"],
            "judged_in_pool": counts["judged_in_pool"], "judgments": counts["judgments"],
            "relevant": relevant, "relevant_by_depth": by_depth,
            "measures": names, "runs": runs,
            "recall": _defined(estimate.iloc[0].to_dict()) if len(estimate) else None}


DEPTH_COLUMNS = ["depth", "pool_size", "judged", "judged_fraction", "relevant", "relevant_per_judgment"]


def _topic_depths(collection, snap, qid: str, qrels_policy: str, assessor: str | None, depths
                  ) -> tuple[pd.DataFrame, int]:
    """A topic's relevant documents found per pool depth, and its relevant documents, from its judgments
    and the contributing runs' lines (what the board job stores for every topic)."""
    qrels = scoring.qrels_frame(collection, policy=qrels_policy, assessor=assessor)
    mine = qrels[qrels["qid"].astype(str) == qid]
    contributing = [t for t, c in snap.contributed.items() if c]
    topic_runs = {t: _topic_lines(f, qid) for t, f in scoring.frames(collection, contributing).items()}
    provenance = S.ranked_entries(topic_runs, max(depths)) if topic_runs else pd.DataFrame(
        columns=["qid", "docno", "tag", "rank"])
    by_depth = S.relevant_by_depth(provenance, mine, depths, relevant_from=snap.relevant_from) \
        if len(provenance) else pd.DataFrame(columns=DEPTH_COLUMNS)
    return by_depth, int(collection.is_relevant(mine["rel"]).sum())


@cache.reads
def significance_matrix(collection: Collection, *, measure: str = "map", test: str = "t", correction: str = "holm",
                        tags: Sequence[str] | None = None, qrels_policy: str = DEFAULT_POLICY,
                        assessor: str | None = None, alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of runs (run_a ranked above run_b) on one measure: run_a, run_b, mean_a, mean_b, mean_diff,
    statistic, p_value, p_adjusted, significant, effect_size (Cohen's d_z), ci_low, ci_high (95% interval
    of the mean difference: Student's t for ``test="t"``, else the engine's BCa bootstrap)."""
    name = _one_name(measure)
    try:
        test, correction = TEST_CHOICES.parse(test), CORRECTION_CHOICES.parse(correction)
    except ValueError as exc:
        raise EvaluationError(str(exc)) from None
    snap = snapshot.snapshot(collection)
    key = (snap.version, "significance", name, test, correction, None if tags is None else tuple(tags),
           policy_key(qrels_policy, assessor), alpha)

    def compute() -> pd.DataFrame:
        stored = _stored_significance(collection, (name, test, correction), tags, qrels_policy, assessor, alpha)
        if stored is not None:  # the board job's, for the page's first choice
            return stored[0]
        scores = stored_scores.evaluate(collection, [measure], policy=qrels_policy, assessor=assessor, tags=tags)
        return significance_pairs(scores, name, test=test, correction=correction, alpha=alpha)

    return cache.cached(key, compute)


def _stored_significance(collection: Collection, choice: tuple, tags, qrels_policy: str, assessor: str | None,
                         alpha: float) -> tuple[pd.DataFrame, dict] | None:
    """The ``significance`` extra (:func:`evaluation.board_extras.store_significance`: the pairs, and the heatmap
    in its meta) when ``choice`` is the one the board job stores, or None."""
    if choice != SIGNIFICANCE or tags is not None or assessor is not None or alpha != 0.05:
        return None
    return extra_files.stored(collection, scoring.normalise_policy(qrels_policy), SIGNIFICANCE_EXTRA)


@cache.reads
def stored_heatmap(collection: Collection, *, measure: str, test: str, correction: str, qrels_policy: str,
                   assessor: str | None) -> tuple[str, int] | None:
    """The heatmap (SVG, number of runs) the board job drew for this choice, or None (not its choice, not stored)."""
    stored = _stored_significance(collection, (_one_name(measure), test, correction), None, qrels_policy, assessor,
                                  0.05)
    return None if stored is None else (stored[1]["heatmap"], int(stored[1]["n_runs"]))


@cache.reads
def pr_curves(collection: Collection, tags: Sequence[str], *, qrels_policy: str = DEFAULT_POLICY,
              assessor: str | None = None) -> pd.DataFrame:
    """Interpolated precision at recall 0.0, 0.1, ..., 1.0 (trec_eval's ``iprec_at_recall``, averaged over
    topics) of each run: columns tag, recall, precision."""
    scores = stored_scores.evaluate(collection, ["iprec_at_recall"], policy=qrels_policy, assessor=assessor,
                               tags=list(tags))
    levels = [round(0.1 * i, 1) for i in range(11)]
    rows = [{"tag": tag, "recall": level, "precision": float(s.aggregate[f"iprec_at_recall_{level:3.2f}"])}
            for tag, s in scores.items() for level in levels]
    return pd.DataFrame(rows, columns=["tag", "recall", "precision"])



def topic_overview(collection: Collection) -> list[dict]:
    """Every topic in natural order: qid, title, pool size (main pool), judged in the pool, judgments (incl.
    outside the pool) — both from :func:`judged_figures` — and relevant documents (qrels)."""
    titles = dict(collection.topics.values_list("qid", "title"))
    figures = judged_figures(collection)
    judged = judged_qrels(collection)
    relevant = (judged[collection.is_relevant(judged["rel"])].groupby("qid").size().to_dict()
                if len(judged) else {})
    empty = {"pooled": 0, "judged_in_pool": 0, "judgments": 0}
    rows = []
    for q in S.sorted_topics(titles):
        counts = figures.topics.get(q, empty)
        rows.append({"qid": q, "title": titles[q], "pool_size": counts["pooled"], "judged": counts["judged_in_pool"],
                     "judgments": counts["judgments"], "relevant": relevant.get(q, 0)})
    return rows


@cache.reads
def judged_figures(collection: Collection, pool_name: str | None = None) -> JudgedFigures:
    """:class:`JudgedFigures` of the pool ``pool_name`` (default: the main pool, as the leaderboard uses)."""
    snap = snapshot.snapshot(collection)
    info = snap.main_pool if pool_name is None else next((p for p in snap.pools if p.name == pool_name), None)
    key = (snap.version, "judged figures", None if info is None else info.name)
    def compute() -> JudgedFigures:
        stored = board_files.stored_figure(collection, "judged_figures") if pool_name is None else None
        if stored is not None:  # the board job read them at this version
            return JudgedFigures(**stored)
        return pool_figures(collection, None if info is None else info.pool)

    return cache.cached(key, compute)


@cache.reads
def pool_statistics(pool: Pool) -> dict:
    """:func:`pooling.selectors.pool_statistics` of ``pool`` against the collection's qrels, once per version of
    the collection (:func:`evaluation.cache.version`: a judgment, a run, a pool built or extended makes a new
    one): read from what the version's board job stored (:func:`stored_pool_statistics`), else computed here.
    The pool page and a team's results read it on every visit. Shared: read it, do not change it (a shallow
    copy is returned)."""
    collection = pool.collection

    def compute() -> dict:
        stored = stored_pool_statistics(pool)
        return stored if stored is not None else pooling_selectors.pool_statistics(pool, judged_qrels(collection))

    return dict(cache.cached((cache.version(collection), "pool statistics", pool.pk), compute))


@cache.reads
def stored_pool_statistics(pool: Pool, *, latest: bool = False) -> dict | None:
    """The statistics of ``pool`` the board job stored for the collection's current version (the ``pools``
    extra, :mod:`evaluation.board_extras`), or None; with ``latest``, those of the newest version stored
    (shown, marked "updating", while the job computes the current one)."""
    collection = pool.collection
    found = (extra_files.latest if latest else extra_files.stored)(collection, DEFAULT_POLICY, POOLS)
    if found is None:
        return None
    stats = found[1].get("pools", {}).get(str(pool.pk))
    return None if stats is None else dict(stats)


@cache.reads
def assessor_names(collection: Collection) -> list[str]:
    """Who judged the collection (assessors and imported qrels; adjudicators left out), once per version:
    from the version's stored board when its job wrote one (:mod:`evaluation.board`), else from the
    judgments."""
    def compute() -> list[str]:
        stored = board_files.current(collection, DEFAULT_POLICY)
        if stored is not None and "assessors" in stored.meta:
            return list(stored.meta["assessors"])
        return judging_assessor_names(collection)

    return cache.cached((cache.version(collection), "assessor names"), compute)


def _defined(row: dict) -> dict:
    """A row for a page: undefined numbers (NaN) as None, so that a template shows nothing rather than "nan"."""
    return {k: (None if isinstance(v, float) and v != v else v) for k, v in row.items()}


#: how deep in each run's ranking the share judged only by a machine is measured
MACHINE_SHARE_DEPTH = 10


def machine_only_share(collection: Collection, depth: int = MACHINE_SHARE_DEPTH) -> dict[str, float]:
    """Per run, the share of its top ``depth`` documents (over all topics, ranked as trec_eval ranks: score
    descending, ties by docno descending) whose grade comes from a machine assessor alone."""
    human = judged_qrels(collection, policy=HUMAN)
    machine = judged_qrels(collection, policy=MACHINE)
    if machine.empty:
        return {}
    only = pd.MultiIndex.from_frame(machine[["qid", "docno"]]).difference(
        pd.MultiIndex.from_frame(human[["qid", "docno"]]))
    out = {}
    for tag, frame in scoring.frames(collection).items():
        top = (frame.sort_values(["qid", "score", "docno"], ascending=[True, False, False])
               .groupby("qid", sort=False).head(depth))
        keys = pd.MultiIndex.from_arrays([top["qid"].astype(str), top["docno"].astype(str)])
        out[tag] = float(keys.isin(only).mean()) if len(keys) else 0.0
    return out


def offered_policies(collection: Collection) -> list:
    """The qrels policies a page offers: those reading machine assessors only once one has judged here."""
    machine = Judgment.objects.filter(collection=collection, source=Judgment.Source.MACHINE).exists()
    return [p for p in POLICIES if machine or not uses_machine(p.name)]

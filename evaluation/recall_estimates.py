"""Estimates of R (the number of relevant documents of each topic) and each run's recall against them.

Per topic, the estimate comes from the stored pool where it was sampled (Horvitz-Thompson with a
confidence interval), else from how the number of relevant documents found grows with the depth of the
contributing runs (``evaluation.engine.recall``). Re-exported by :mod:`evaluation.selectors`; cached
per collection version.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evaluation import cache, extra_files, scoring, snapshot
from evaluation import scores as stored_scores
from evaluation.engine.qrels import Qrels, codes_in
from evaluation.engine.recall import curves_from_best, sampled_estimate
from evaluation.scoring import MAX_DEPTH
from evaluation.snapshot import Snapshot
from judging.policies import DEFAULT_POLICY
from pooling import strategies as S
from pooling.strategies.ranking import top_rows
from workbench.models import Collection

__all__ = ["RECALL_COLUMNS", "recall_estimates", "run_recall"]


def _run_depths(collection: Collection, tags: list[str]) -> dict[str, int]:
    """qid -> the deepest rank any of the runs returns for it (at most MAX_DEPTH)."""
    deepest: dict[str, int] = {}
    for frame in scoring.frames(collection, tags).values():
        qid = frame["qid"]
        if isinstance(qid.dtype, pd.CategoricalDtype):  # stored runs: count the codes
            codes = qid.cat.codes.to_numpy()
            counts = np.bincount(codes[codes >= 0], minlength=len(qid.cat.categories))
            sizes = zip(qid.cat.categories.astype(str), counts, strict=True)
        else:
            sizes = qid.astype(str).value_counts(sort=False).items()
        for q, n in sizes:
            if n and n > deepest.get(q, 0):
                deepest[q] = int(n)
    return {q: min(n, MAX_DEPTH) for q, n in deepest.items()}


def _best_ranks(runs: dict[str, pd.DataFrame], cap: int, qrels: Qrels
                ) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The distinct documents the runs rank within ``cap`` (ranked as pools rank them), each with the best
    rank any run gives it and its grade in ``qrels`` (NaN when unjudged), as (topics, topic codes, ranks,
    grades): on integer codes (a string group-by over every run line costs ten times more)."""
    if not runs:
        return [], np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
    rows = top_rows(runs, cap)
    encoded = rows.docno.dictionary_encode()
    doc = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    pair = rows.topic.astype(np.int64) * max(len(encoded.dictionary), 1) + doc
    order = np.argsort(pair)
    sorted_pair = pair[order]
    starts = np.flatnonzero(np.r_[True, sorted_pair[1:] != sorted_pair[:-1]]) if order.size else order
    best = np.minimum.reduceat(rows.rank[order], starts) if order.size else order
    first = order[starts]
    topic, doc = rows.topic[first].astype(np.int64), doc[first]
    position = qrels.topic_position()
    qrels_topic = np.array([position.get(q, -1) for q in rows.topics], dtype=np.int64)
    doc_code = codes_in(encoded.dictionary, qrels.vocabulary)
    rel = np.full(first.size, np.nan)
    found, judgment = qrels.lookup(qrels_topic[topic], doc_code[doc]) if first.size else (first, first)
    rel[found] = qrels.grades[judgment]
    return list(rows.topics), topic, best.astype(np.int64), rel


RECALL_COLUMNS = ["qid", "known_relevant", "estimate", "method", "ci_low", "ci_high", "complete_depth", "note"]


@cache.reads
def recall_estimates(collection: Collection, *, qrels_policy: str = DEFAULT_POLICY, assessor: str | None = None,
                     confidence: float = 0.95, cap: int = 100) -> pd.DataFrame:
    """Per qrels topic: known relevant documents and an estimate of how many there are, with its method and
    a ``confidence`` interval (:mod:`evaluation.engine.recall`): Horvitz-Thompson where the collection
    has a sampled pool, otherwise the accumulation curve over the contributing runs' depth (complete
    depth looked for within the top ``cap``). Columns ``RECALL_COLUMNS``, topics in natural order."""
    snap = snapshot.snapshot(collection)
    policy = scoring.normalise_policy(qrels_policy)
    if (assessor, confidence, cap) == (None, 0.95, 100):  # the pages' figures: stored by the board job
        found = extra_files.stored(collection, policy, "recall")
        if found is not None:
            return found[0]
    key = (snap.version, "recall", policy, assessor, confidence, cap)
    return cache.cached(key, lambda: _recall(collection, snap, policy, assessor, confidence, cap))


def _recall(collection, snap: Snapshot, policy, assessor, confidence, cap) -> pd.DataFrame:
    qrels = scoring.qrels_frame(collection, policy=policy, assessor=assessor).astype({"qid": str, "docno": str})
    relevant = qrels[collection.is_relevant(qrels["rel"])]
    known = relevant.groupby("qid").size().reindex(qrels["qid"].unique(), fill_value=0)
    pool = snap.sampled_pool
    if pool is not None:
        ht = sampled_estimate(pool.entries, qrels, pool.params.get("stratum_sizes", {}),
                              relevant_from=snap.relevant_from, confidence=confidence).set_index("qid")
        pooled = pd.MultiIndex.from_frame(pool.entries[["qid", "docno"]].astype(str))
        outside = relevant[~pd.MultiIndex.from_frame(relevant[["qid", "docno"]]).isin(pooled)].groupby("qid").size()
        rows = []
        for qid, r in known.items():
            extra = float(outside.get(qid, 0))
            if qid in ht.index and bool(ht.at[qid, "complete"]):
                est = ht.loc[qid]
                rows.append({"qid": qid, "known_relevant": int(r), "estimate": max(float(r), est["estimate"] + extra),
                             "method": f"horvitz-thompson (sampled pool {pool.name})",
                             "ci_low": max(float(r), est["ci_low"] + extra), "ci_high": est["ci_high"] + extra,
                             "complete_depth": np.nan,
                             "note": f"{int(est['judged'])} judged sampled documents"
                                     + (f", plus {int(extra)} relevant outside the pool" if extra else "")})
            else:
                why = "a stratum of the sample is not judged yet" if qid in ht.index else "topic not in the sample"
                rows.append({"qid": qid, "known_relevant": int(r), "estimate": float(r), "method": f"known only ({why})",
                             "ci_low": float(r), "ci_high": np.nan, "complete_depth": np.nan, "note": ""})
        out = pd.DataFrame(rows, columns=RECALL_COLUMNS)
    else:
        tags = [t for t, c in snap.contributed.items() if c]
        topics, topic, rank, rel = _best_ranks(scoring.frames(collection, tags), cap,
                                               scoring.prepared_qrels(collection, policy=policy, assessor=assessor))
        curves = curves_from_best(topics, topic, rank, rel, known, relevant_from=snap.relevant_from,
                                  run_depth=_run_depths(collection, tags), confidence=confidence)
        out = curves[RECALL_COLUMNS]
    order = S.sorted_topics(out["qid"])
    return out.set_index("qid").loc[order].reset_index()


@cache.reads
def run_recall(collection: Collection, *, tags: list[str] | None = None, qrels_policy: str = DEFAULT_POLICY,
               assessor: str | None = None) -> pd.DataFrame:
    """Per run: relevant documents retrieved (within 1000) and recall, the mean over topics of
    ``num_rel_ret / R``, with R the known relevant count (recall_known, trec_eval's recall_1000) and with
    R the estimate (recall_estimated). Topics with R = 0 are left out; a topic without results counts 0."""
    if tags is None and assessor is None:  # every run: stored by the board job
        found = extra_files.stored(collection, scoring.normalise_policy(qrels_policy), "run_recall")
        if found is not None:
            return found[0]
    estimates = recall_estimates(collection, qrels_policy=qrels_policy, assessor=assessor).set_index("qid")
    scores = stored_scores.evaluate(collection, ["num_rel_ret"], policy=qrels_policy, assessor=assessor, tags=tags)
    snap = snapshot.snapshot(collection)
    topics = estimates.index
    known = estimates["known_relevant"].to_numpy(dtype=float)
    estimated = estimates["estimate"].to_numpy(dtype=float)
    rows = []
    for tag, s in scores.items():
        found = s.column("num_rel_ret", list(topics), 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            recall_known = np.nanmean(np.where(known > 0, found / known, np.nan)) if (known > 0).any() else np.nan
            recall_est = np.nanmean(np.where(estimated > 0, found / estimated, np.nan)) \
                if (estimated > 0).any() else np.nan
        rows.append({"run": tag, "team": snap.teams[tag], "contributed": snap.contributed[tag],
                     "relevant_retrieved": int(found.sum()), "recall_known": float(recall_known),
                     "recall_estimated": float(recall_est)})
    return pd.DataFrame(rows, columns=["run", "team", "contributed", "relevant_retrieved", "recall_known",
                                       "recall_estimated"])


# ------------------------------------------------------------------------- assessors and rankings

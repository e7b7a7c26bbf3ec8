"""Recall estimates of the pools that have a random component, per topic: how many relevant documents the
topic has (estimated, with a 95% interval) and the recall of the pool so far (with its interval).

- ``sampled`` pools (stratified samples of the runs' documents, infAP-style): Horvitz-Thompson over the
  judged sample (:func:`evaluation.engine.recall.sampled_estimate`); the pool's recall is the relevant
  documents it found over that estimate, its interval the estimate's interval turned round.
- ``cal`` pools whose stopping rule judges a random sample on the side (target, qbcb): the topic's stored
  state (:meth:`pooling.strategies.cal.CalPool.status`, as the pools page shows it): the review's recall
  from the side sample (Clopper-Pearson); the relevant documents from qbcb's sample rate over the
  collection, or for the target set as found / recall (Lincoln-Petersen).

Other pools have no estimate: every figure they give is a count. The pool page shows these rows and
exports them (CSV), and the release bundle holds them as ``recall_estimates.tsv``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from evaluation import cache
from evaluation.engine.recall import sampled_estimate
from judging.policies import DEFAULT_POLICY
from judging.qrels import qrels as judged_qrels
from pooling import advance
from pooling import selectors as pooling_selectors
from pooling.models import Pool, PoolTopicState
from pooling.strategies import registry
from pooling.strategies.ranking import sorted_topics
from workbench.formats import spreadsheet

__all__ = ["COLUMNS", "has_estimates", "pool_recall_estimates", "collection_recall_estimates", "estimates_tsv"]

COLUMNS = ["pool", "qid", "method", "judged", "found", "sample_judged", "sample_relevant", "relevant_estimate",
           "relevant_low", "relevant_high", "recall", "recall_low", "recall_high", "confidence"]

#: the pool page's table: (key, heading, kind of evaluation.tables.rows_table)
PAGE_COLUMNS = [("qid", "Topic", "text"), ("judged", "Judged", "int"), ("found", "Relevant found", "int"),
                ("sample_judged", "Sample judged", "int"), ("sample_relevant", "Sample relevant", "int"),
                ("relevant_estimate", "Relevant (est.)", "num"), ("relevant_low", "Relevant 95% low", "num"),
                ("relevant_high", "Relevant 95% high", "num"), ("recall", "Recall so far (est.)", "num"),
                ("recall_low", "Recall 95% low", "num"), ("recall_high", "Recall 95% high", "num"),
                ("method", "Method", "text")]

SAMPLED = "sampled strata: Horvitz-Thompson over the judged sample; recall = found / estimate"
QBCB = "cal qbcb: recall from the side sample (Clopper-Pearson); relevant = documents x sample rate"
TARGET = "cal target set: recall from the target set (Clopper-Pearson); relevant = found / recall"


def _declared(pool: Pool):
    return registry.STRATEGIES.get(pool.strategy)  # None: imported judgments


def has_estimates(pool: Pool) -> bool:
    """Whether the pool has a random component to estimate from (a sampled pool, a cal pool with a sample):
    what its strategy declares (``samples``) and its recorded parameters draw."""
    declared = _declared(pool)
    return declared is not None and declared.samples_in(pool.params)


def _nan(value) -> float:
    return float("nan") if value is None else float(value)


def _cal_row(pool: Pool, qid: str, status: dict) -> dict:
    recall, relevant = status.get("recall_estimate") or {}, status.get("relevant_estimate")
    found = int(status["found"])
    qbcb = pool.params["cal"].get("stop") == "qbcb"
    if relevant is None and recall:  # the target set: Lincoln-Petersen, R = found / recall
        est, low, high = (recall.get(k) for k in ("estimate", "low", "high"))
        relevant = {"estimate": found / est if est else None, "low": found / high if high else None,
                    "high": found / low if low else None}
    relevant = relevant or {}
    return {"pool": pool.name, "qid": qid, "method": QBCB if qbcb else TARGET, "judged": int(status["judgments"]),
            "found": found, "sample_judged": int(status["side_judgments"]),
            "sample_relevant": int(status.get("side_relevant") or 0),
            "relevant_estimate": _nan(relevant.get("estimate")), "relevant_low": _nan(relevant.get("low")),
            "relevant_high": _nan(relevant.get("high")), "recall": _nan(recall.get("estimate")),
            "recall_low": _nan(recall.get("low")), "recall_high": _nan(recall.get("high")),
            "confidence": _nan(recall.get("confidence", 0.95))}


def _cal_rows(pool: Pool) -> list[dict]:
    stored = dict(PoolTopicState.objects.filter(pool=pool).values_list("qid", "status"))
    rows = []
    for qid in sorted_topics(pool.params.get("budgets", {})):
        status = stored[qid] if qid in stored else advance.topic_status(pool, qid)
        if status is not None:
            rows.append(_cal_row(pool, qid, status))
    return rows


def _sampled_rows(pool: Pool, policy: str) -> list[dict]:
    entries = pooling_selectors.pool_entry_table(pool)
    sizes = pool.params.get("stratum_sizes", {})
    qrels = judged_qrels(pool.collection, policy=policy).astype({"qid": str, "docno": str})
    ht = sampled_estimate(entries, qrels, sizes, relevant_from=pool.collection.relevant_from).set_index("qid")
    rows = []
    for qid in sorted_topics(set(entries["qid"].astype(str))):
        judged, found = (int(ht.at[qid, "judged"]), int(ht.at[qid, "relevant_found"])) if qid in ht.index else (0, 0)
        est, low, high = (float(ht.at[qid, k]) if qid in ht.index else math.nan
                          for k in ("estimate", "ci_low", "ci_high"))
        with np.errstate(divide="ignore", invalid="ignore"):
            recall = found / est if est > 0 else math.nan
            recall_low = found / high if high > 0 else math.nan
            recall_high = min(1.0, found / low) if low > 0 else math.nan
        rows.append({"pool": pool.name, "qid": qid, "method": SAMPLED, "judged": judged, "found": found,
                     "sample_judged": judged, "sample_relevant": found, "relevant_estimate": est,
                     "relevant_low": low, "relevant_high": high, "recall": recall, "recall_low": recall_low,
                     "recall_high": recall_high, "confidence": 0.95})
    return rows


def pool_recall_estimates(pool: Pool, *, policy: str = DEFAULT_POLICY) -> pd.DataFrame:
    """``COLUMNS`` per topic of the pool (empty for a pool without a random component); NaN where there is
    no estimate yet (no relevant document in the sample, a stratum not judged). Once per version of the
    collection (a judgment, a topic stopped by hand or a build makes a new one)."""
    def compute() -> pd.DataFrame:
        declared = _declared(pool)
        if declared is not None and declared.stratified:
            rows = _sampled_rows(pool, policy)
        elif has_estimates(pool):  # an adaptive pool's side sample (cal's stopping rule)
            rows = _cal_rows(pool)
        else:
            rows = []
        return pd.DataFrame(rows, columns=COLUMNS)

    return cache.cached((cache.version(pool.collection), "pool recall estimates", pool.pk, policy), compute)


def collection_recall_estimates(collection, *, policy: str = DEFAULT_POLICY) -> pd.DataFrame:
    """The rows of every pool of the collection with a random component, pools by name."""
    frames = [pool_recall_estimates(p, policy=policy) for p in collection.pools.order_by("name") if has_estimates(p)]
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)


def estimates_tsv(frame: pd.DataFrame) -> str:
    """Tab-separated, a header line, numbers to 4 decimals (as the pool page shows them), empty for none."""
    return spreadsheet.frame_csv(frame, sep="\t", index=False, lineterminator="\n", float_format="%.4f", na_rep="")

"""The budget planner of a collection: its runs and judgments so far handed to ``evaluation.engine.budget``,
plus the judging cost (judgments per hour per assessor, as the judging dashboard measures it) in hours."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from evaluation import scoring, snapshot
from evaluation.engine.budget import BudgetPlan, plan_budget
from judging.qrels import qrels
from judging.selectors import judging_dashboard
from pooling.models import PoolEntry
from workbench.models import Collection

__all__ = ["budget_plan", "judging_cost"]


def _ranked(runs: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """tag, qid, docno, rank: score descending, ties by docno descending (trec_eval's order)."""
    frames = []
    for tag, frame in runs.items():
        ordered = frame[["qid", "docno", "score"]].astype({"qid": str, "docno": str}).sort_values(
            ["qid", "score", "docno"], ascending=[True, False, False], kind="stable")
        ordered["rank"] = ordered.groupby("qid").cumcount() + 1
        frames.append(ordered.assign(tag=tag)[["tag", "qid", "docno", "rank"]])
    if not frames:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in
                             (("tag", str), ("qid", str), ("docno", str), ("rank", "int64"))})
    return pd.concat(frames, ignore_index=True)


def _pool_size(collection: Collection) -> int:
    return PoolEntry.objects.filter(pool__collection=collection, pool__published=True).values("topic_id", "docno").distinct().count()


def budget_plan(collection: Collection, *, planned: int | None = None, bootstrap: int = 200) -> BudgetPlan:
    """The plan from the collection's qrels (default policy) and every run; a judged document's pool depth is
    the best rank a contributing run gave it. ``planned`` defaults to the size of the collection's pools (the
    judgments so far when that is smaller)."""
    runs = scoring.frames(collection)
    ranked = _ranked(runs)
    declared = snapshot.snapshot(collection).declared
    contributing = [t for t, c in declared.items() if c] or list(runs)
    judged = qrels(collection).astype({"qid": str, "docno": str})
    best = ranked[ranked["tag"].isin(contributing)].groupby(["qid", "docno"])["rank"].min()
    depth = best.reindex(pd.MultiIndex.from_frame(judged[["qid", "docno"]])).to_numpy() if len(judged) else []
    judged = judged.assign(depth=np.asarray(depth, dtype=float))
    return plan_budget(ranked, judged, relevant_from=collection.relevant_from,
                       planned=planned or _pool_size(collection) or None, bootstrap=bootstrap)


def judging_cost(collection: Collection, judgments: int | None, *, per_hour: float | None = None,
                 cost_per_hour: float | None = None) -> dict:
    """Hours (and cost) of ``judgments`` more judgments: at ``per_hour`` judgments per hour per assessor, by default
    the median of the assessors' measured rates; hours for one assessor, and for all who judged in parallel."""
    rates = judging_dashboard(collection)["assessors"]
    measured = rates["per_hour"].dropna() if "per_hour" in rates else pd.Series(dtype=float)
    assessors = int((rates["judged"] > 0).sum()) if "judged" in rates else 0
    rate = per_hour or (float(measured.median()) if len(measured) else None)
    if judgments is None or not rate or not math.isfinite(rate):
        return {"per_hour": rate, "assessors": assessors, "hours": None, "hours_in_parallel": None, "cost": None}
    hours = judgments / rate
    return {"per_hour": round(rate, 1), "assessors": assessors, "hours": round(hours, 1),
            "hours_in_parallel": round(hours / assessors, 1) if assessors else None,
            "cost": round(hours * cost_per_hour, 2) if cost_per_hour is not None else None,
            "measured": per_hour is None}

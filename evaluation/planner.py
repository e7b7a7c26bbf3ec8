"""The budget planner of a collection: its runs and judgments so far handed to ``evaluation.engine.budget``,
plus the judging cost in hours, at the rate measured on human judging only."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from django.db.models import Count, Sum

from evaluation import scoring, snapshot
from evaluation.engine.budget import BudgetPlan, plan_budget
from judging.models import Judgment
from judging.qrels import qrels
from pooling.models import Pool, PoolEntry
from workbench.models import Collection

__all__ = ["budget_plan", "human_rate", "judging_cost"]


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


def _pool_depth(collection: Collection) -> int | None:
    """The deepest depth of the collection's published pools (None when none was built to a depth)."""
    depths = [p.get("depth") for p in Pool.objects.filter(collection=collection, published=True)
              .values_list("params", flat=True)]
    depths = [int(d) for d in depths if isinstance(d, int | float) and d > 0]
    return max(depths) if depths else None


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
                       planned=planned or _pool_size(collection) or None, bootstrap=bootstrap,
                       max_depth=_pool_depth(collection))


#: a rate is measured from at least this many timed human judgments; a judgment shown for less than
#: MIN_SECONDS was not read by a person (a script posting through the judging page) and is left out
MIN_JUDGMENTS, MIN_SECONDS = 20, 1.0


def human_rate(collection: Collection) -> dict:
    """Judgments per hour per assessor from human judging only: judgments made on the judging page by a
    signed-in assessor with the visible time the page recorded (imported, adjudicated and machine judgments
    have none, scripted ones a fraction of a second). The median of the assessors' rates, with the number of
    judgments and assessors it rests on; ``per_hour`` is None under MIN_JUDGMENTS judgments."""
    rows = list(Judgment.objects.filter(collection=collection, source=Judgment.Source.WEB, user__isnull=False,
                                        time_spent_ms__gte=MIN_SECONDS * 1000)
                .order_by().values("assessor").annotate(n=Count("id"), ms=Sum("time_spent_ms")).values_list("n", "ms"))
    judgments = sum(n for n, _ in rows)
    rates = [n / (ms / 3_600_000) for n, ms in rows if ms]
    per_hour = float(np.median(rates)) if rates and judgments >= MIN_JUDGMENTS else None
    return {"per_hour": per_hour, "judgments": judgments, "assessors": len(rows)}


def judging_cost(collection: Collection, judgments: int | None, *, per_hour: float | None = None,
                 cost_per_hour: float | None = None) -> dict:
    """Hours (and cost) of ``judgments`` more judgments: at ``per_hour`` judgments per hour per assessor, by default
    the median of the assessors' rates measured on human judging (:func:`human_rate`); hours for one assessor,
    and for all who judged in parallel. ``rated_on`` is how many judgments the measured rate rests on."""
    measured = human_rate(collection)
    assessors = measured["assessors"]
    rate = per_hour or measured["per_hour"]
    base = {"per_hour": round(rate, 1) if rate else None, "assessors": assessors, "hours": None,
            "hours_in_parallel": None, "cost": None, "measured": per_hour is None,
            "rated_on": measured["judgments"], "enough": measured["per_hour"] is not None}
    if judgments is None or not rate or not math.isfinite(rate):
        return base
    hours = judgments / rate
    return {**base, "hours": round(hours, 1), "hours_in_parallel": round(hours / assessors, 1) if assessors else None,
            "cost": round(hours * cost_per_hour, 2) if cost_per_hour is not None else None}

"""The stopping state of every topic of a collection's cal pools, as the pools page shows it."""

from __future__ import annotations

from pooling import advance
from pooling.models import Pool, PoolTopicState
from pooling.strategies import registry
from pooling.strategies.ranking import sorted_topics

__all__ = ["stopping_states"]


def _pct(value):
    return None if value is None else f"{100 * value:.0f}%"


def _row(qid: str, status: dict) -> dict:
    decision, estimate = status["decision"], status["recall_estimate"]
    return {"qid": qid, "judgments": status["judgments"], "found": status["found"],
            "side": status["side_judgments"], "stopped": decision["stopped"], "rule": decision["rule"],
            "reason": decision["reason"], "at": decision["at"],
            "claim": (f"recall ≥ {_pct(decision['claimed_recall'])} at {_pct(decision['confidence'])} confidence"
                      if decision["stopped"] and decision["claimed_recall"] is not None else ""),
            "estimate": (f"{_pct(estimate['estimate'])} (95% CI {_pct(estimate['low'])}–{_pct(estimate['high'])})"
                         if estimate else "")}


def stopping_states(collection) -> list[dict]:
    """[{pool, rows}] for each cal pool: per topic judgments, relevant found, the rule's state and the
    recall estimate with its interval where the rule has a side sample."""
    out = []
    for pool in Pool.objects.filter(collection=collection).order_by("name"):
        declared = registry.STRATEGIES.get(pool.strategy)
        if declared is None or not declared.stops:
            continue
        qids = sorted_topics(pool.params.get("budgets", {}))  # 1, 2, …, 10, as every other table
        # as each topic's last judgment left it; a topic never stored (a pool built before) is computed once
        stored = dict(PoolTopicState.objects.filter(pool=pool).values_list("qid", "status"))
        out.append({"pool": pool, "rows": [_row(q, stored[q] if q in stored else advance.topic_status(pool, q))
                                           for q in qids]})
    return out

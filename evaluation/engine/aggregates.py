"""Aggregates across topics besides trec_eval's arithmetic mean, for any per-topic measure.

``gmean``: geometric mean with each topic's value floored at 0.00001, as trec_eval's ``gm_map`` and
``gm_bpref`` do (Robertson, "On GMAP", CIKM 2006), so one zero does not make it 0.
``hmean``: harmonic mean ``n / sum(1 / v_t)``; 0 when a topic scores 0 (its reciprocal is unbounded).
``median``: the middle value (the mean of the two middle ones for an even number of topics).
With trec_eval's ``-c`` the topics of the qrels the run has no result for count as 0, as for the mean.
Printed names carry the aggregate: ``gm_P_10``, ``hm_map``, ``median_ndcg_cut_10``.

>>> round(aggregate([0.5, 0.2, 0.8], "hmean", 3), 6)   # 3 / (2 + 5 + 1.25)
0.363636
>>> aggregate([0.1, 0.4, 0.3, 0.9], "median", 4)
0.35
"""

from __future__ import annotations

import math

import numpy as np

AGGREGATES = {"mean": "", "gmean": "gm_", "hmean": "hm_", "median": "median_"}
GM_FLOOR = 0.00001

__all__ = ["AGGREGATES", "aggregate", "printed_name"]


def aggregate(values, how: str, n_topics: int) -> float:
    """The ``how`` of ``values`` over ``n_topics`` topics (missing ones 0)."""
    v = np.asarray(values, dtype=np.float64)
    if n_topics > v.size:
        v = np.concatenate([v, np.zeros(n_topics - v.size)])
    if v.size == 0:
        return 0.0
    if how == "mean":
        return float(v.sum() / v.size)
    if how == "gmean":
        return float(math.exp(np.log(np.maximum(v, GM_FLOOR)).sum() / v.size))
    if how == "hmean":
        return 0.0 if (v <= 0).any() else float(v.size / (1.0 / v).sum())
    if how == "median":
        return float(np.median(v))
    raise ValueError(f"unknown aggregate {how!r} (one of {', '.join(AGGREGATES)})")


def printed_name(name: str, how: str) -> str:
    return AGGREGATES[how] + name

"""Rank-fusion pools: judge documents in fused order until the budget is spent.

References:
    - Reciprocal rank fusion: G. V. Cormack, C. L. A. Clarke and S. Buettcher, "Reciprocal rank fusion
      outperforms Condorcet and individual rank learning methods", SIGIR 2009.
      score(d) = sum over runs r that rank d within the candidate depth of 1 / (k + rank_r(d)), k = 60.
    - Borda count: J. A. Aslam and M. Montague, "Models for metasearch", SIGIR 2001.
      score(d) = sum over runs r of (D - rank_r(d) + 1), D = candidate depth of the topic (a run that does
      not rank d within D gives it 0 points).
    - Fusion as a pooling order: D. E. Losada, J. Parapar and A. Barreiro, "Multi-armed bandits for
      adjudicating documents in pooling-based evaluation of information retrieval systems",
      Information Processing & Management 53(5), 2017 (Borda and RRF are among its baselines).

Budget: ``budget`` is per topic (an int, or a mapping qid -> int); ``total_budget`` is for the whole
collection and is split across topics by :func:`allocate_budget` (equal shares, capped by each topic's
candidate count, the leftover given to topics that can still use it). Give at most one of them; with
neither, every candidate is pooled (the result is then just an order).

Example: r1 = [a, b], r2 = [b, c] for one topic, RRF k=60: b = 1/62 + 1/61, a = 1/61, c = 1/62; with a
budget of 2 the pool is [b, a].
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from .depth import contributing_runs
from .ranking import Depth, Runs, depth_array, ranked_entries, sorted_topics
from .result import PoolResult, make_entries, restrict_provenance

__all__ = ["Budget", "allocate_budget", "borda_pool", "fused_order", "fusion_pool", "resolve_budget",
           "rrf_pool"]

Budget = int | Mapping[str, int] | None


def allocate_budget(total: int, capacity: Mapping[str, int]) -> dict[str, int]:
    """Split ``total`` judgments across topics: equal shares, no topic above its capacity.

    Water-filling: every topic gets min(capacity, L) with L the largest level that fits in ``total``;
    what is left (fewer judgments than topics with room) goes one by one to the topics with room, in
    natural topic order. Returns qid -> budget; the budgets sum to min(total, sum(capacity)).

    >>> allocate_budget(10, {"1": 2, "2": 100, "3": 100})
    {'1': 2, '2': 4, '3': 4}
    """
    if total < 0:
        raise ValueError("total_budget must be >= 0")
    topics = sorted_topics(capacity)
    caps = np.array([int(capacity[q]) for q in topics], dtype=np.int64)
    low, high = 0, int(caps.max(initial=0))
    while low < high:  # largest L with sum(min(caps, L)) <= total
        mid = (low + high + 1) // 2
        if np.minimum(caps, mid).sum() <= total:
            low = mid
        else:
            high = mid - 1
    alloc = np.minimum(caps, low)
    room = np.flatnonzero(caps > alloc)
    alloc[room[: max(int(total) - int(alloc.sum()), 0)]] += 1
    return {q: int(a) for q, a in zip(topics, alloc, strict=True)}


def resolve_budget(budget: Budget, total_budget: int | None, capacity: Mapping[str, int]) -> dict[str, int]:
    """Per-topic budgets from either a per-topic ``budget`` or a ``total_budget`` (not both)."""
    if budget is not None and total_budget is not None:
        raise ValueError("give either budget (per topic) or total_budget, not both")
    if total_budget is not None:
        return allocate_budget(total_budget, capacity)
    if budget is None:
        return {q: int(c) for q, c in capacity.items()}
    if isinstance(budget, Mapping):
        given = {str(q): int(b) for q, b in budget.items()}
        return {q: min(int(c), max(given.get(q, 0), 0)) for q, c in capacity.items()}
    if budget < 0:
        raise ValueError("budget must be >= 0")
    return {q: min(int(c), int(budget)) for q, c in capacity.items()}


def fused_order(ranked: pd.DataFrame, *, method: str = "rrf", k: int = 60, depth: Depth = None) -> pd.DataFrame:
    """Fuse ranked lists (qid, docno, tag, rank) into one order per topic.

    Returns qid, docno, min_depth, n_runs, fused (the fused score), ordered by topic, fused score
    descending, min_depth, docno.
    """
    if method not in ("rrf", "borda"):
        raise ValueError(f"unknown fusion method {method!r} (rrf or borda)")
    topics = sorted_topics(pd.unique(ranked["qid"]))
    qcode = pd.Index(topics).get_indexer(ranked["qid"]).astype(np.int64)
    dcode, docs = pd.factorize(ranked["docno"], sort=True)
    rank = ranked["rank"].to_numpy(dtype=np.int64)
    if method == "rrf":
        points = 1.0 / (k + rank)
    else:
        if depth is None:
            limit = np.zeros(len(topics), dtype=np.int64)
            np.maximum.at(limit, qcode, rank)
        else:
            limit = depth_array(depth, topics)
        points = (limit[qcode] - rank + 1).astype(np.float64)
    key = qcode * max(len(docs), 1) + dcode
    ukey, inverse = np.unique(key, return_inverse=True)
    fused = np.bincount(inverse, weights=points, minlength=len(ukey))
    min_depth = np.full(len(ukey), np.iinfo(np.int64).max)
    np.minimum.at(min_depth, inverse, rank)
    n_runs = np.bincount(inverse, minlength=len(ukey))
    q_of = ukey // max(len(docs), 1)
    d_of = ukey % max(len(docs), 1)
    order = np.lexsort((d_of, min_depth, -np.round(fused, 12), q_of))
    return pd.DataFrame({
        "qid": pd.array(np.array(topics, dtype=object)[q_of[order]], dtype="str"),
        "docno": pd.array(np.asarray(docs, dtype=object)[d_of[order]], dtype="str"),
        "min_depth": min_depth[order],
        "n_runs": n_runs[order],
        "fused": fused[order],
    })


def fusion_pool(
    runs: Runs,
    budget: Budget = None,
    *,
    method: str = "rrf",
    depth: Depth = 100,
    k: int = 60,
    total_budget: int | None = None,
    tags: Iterable[str] | None = None,
    teams: Mapping[str, str] | None = None,
    priorities: Mapping[str, int] | None = None,
    runs_per_team: int | None = None,
) -> PoolResult:
    """Pool the first ``budget`` documents per topic in rank-fusion order (see the module docstring).

    Candidates are the documents ranked within ``depth`` by a contributing run. ``pool_rank`` is the fused
    order; ``min_depth`` the best rank any run gave the document.
    """
    chosen = contributing_runs(runs, tags=tags, teams=teams, priorities=priorities,
                               runs_per_team=runs_per_team)
    ranked = ranked_entries(chosen, depth)
    order = fused_order(ranked, method=method, k=k, depth=depth)
    capacity = order.groupby("qid", sort=False).size()
    budgets = resolve_budget(budget, total_budget, capacity.to_dict())
    position = order.groupby("qid", sort=False).cumcount().to_numpy()
    limit = order["qid"].map(budgets).to_numpy(dtype=np.int64)
    selected = order[position < limit].reset_index(drop=True)
    entries = make_entries(selected)
    params = {"method": method, "depth": dict(depth) if isinstance(depth, Mapping) else depth,
              "runs": list(chosen), "budget": dict(budget) if isinstance(budget, Mapping) else budget,
              "total_budget": total_budget}
    if method == "rrf":
        params["k"] = k
    return PoolResult(method, params, entries, restrict_provenance(ranked, entries))


def rrf_pool(runs: Runs, budget: Budget = None, **kwargs) -> PoolResult:
    """:func:`fusion_pool` with reciprocal-rank fusion (k = 60 unless given)."""
    return fusion_pool(runs, budget, method="rrf", **kwargs)


def borda_pool(runs: Runs, budget: Budget = None, **kwargs) -> PoolResult:
    """:func:`fusion_pool` with Borda count (points = depth - rank + 1)."""
    return fusion_pool(runs, budget, method="borda", **kwargs)

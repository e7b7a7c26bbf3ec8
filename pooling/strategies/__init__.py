"""Pooling algorithms as pure functions over runs. Django-free: nothing here imports Django.

A run is a pandas DataFrame with columns qid, docno, score (float) in file order (``rank`` is never
read); runs come as a mapping tag -> DataFrame. Every strategy ranks runs the same way (score
descending, ties in file order; see :mod:`.ranking`), which reproduces NIST's pools.

Fixed pools return a :class:`PoolResult` (entries + provenance):
    depth_pool, rrf_pool / borda_pool / fusion_pool, stratified_pool
Adaptive pools are stateful objects with ``next_document(qid)`` / ``record(qid, docno, relevant)``:
    MoveToFront, MaxMean, BayesianBandit (adaptive_pool(name, ...) builds one by name)
Every strategy by name: ``STRATEGIES`` of :mod:`.registry`, the only list of them, each declared once in
its own module of :mod:`.declared` (:mod:`.declaration`: typed parameters and capabilities).
Then: assign_judging_order, new_entries (extension), estimate_relevant (Horvitz-Thompson), and the
statistics in :mod:`.stats`.
"""

from .adaptive import AdaptivePool, BayesianBandit, MaxMean, MoveToFront, replay
from .depth import contributing_runs, depth_pool
from .fusion import allocate_budget, borda_pool, fused_order, fusion_pool, rrf_pool
from .ordering import assign_judging_order, new_entries
from .ranking import ranked_entries, select_runs, sorted_topics
from .registry import STRATEGIES, adaptive_pool
from .result import PoolResult, provenance_dicts
from .sampling import DEFAULT_STRATA, RelevantEstimate, Stratum, estimate_relevant, stratified_pool
from .stats import judging_progress, overlap_matrix, pool_size, relevant_by_depth, unique_contributions

__all__ = [
    "DEFAULT_STRATA",
    "STRATEGIES",
    "AdaptivePool",
    "BayesianBandit",
    "MaxMean",
    "MoveToFront",
    "PoolResult",
    "RelevantEstimate",
    "Stratum",
    "adaptive_pool",
    "allocate_budget",
    "assign_judging_order",
    "borda_pool",
    "contributing_runs",
    "depth_pool",
    "estimate_relevant",
    "fused_order",
    "fusion_pool",
    "judging_progress",
    "new_entries",
    "overlap_matrix",
    "pool_size",
    "provenance_dicts",
    "ranked_entries",
    "relevant_by_depth",
    "replay",
    "rrf_pool",
    "select_runs",
    "sorted_topics",
    "stratified_pool",
    "unique_contributions",
]

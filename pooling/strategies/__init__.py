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

from importlib import import_module

#: where each name below lives: a module is imported when one of its names is first used (PEP 562), so that
#: the registry (the model's choices, every command's start-up) does not import pandas for the strategies
_HOME = {"AdaptivePool": "adaptive", "BayesianBandit": "adaptive", "MaxMean": "adaptive", "MoveToFront": "adaptive",
         "replay": "adaptive", "contributing_runs": "depth", "depth_pool": "depth", "allocate_budget": "fusion",
         "borda_pool": "fusion", "fused_order": "fusion", "fusion_pool": "fusion", "rrf_pool": "fusion",
         "assign_judging_order": "ordering", "new_entries": "ordering", "ranked_entries": "ranking",
         "select_runs": "ranking", "sorted_topics": "ranking", "STRATEGIES": "registry", "adaptive_pool": "registry",
         "PoolResult": "result", "provenance_dicts": "result", "DEFAULT_STRATA": "sampling",
         "RelevantEstimate": "sampling", "Stratum": "sampling", "estimate_relevant": "sampling",
         "stratified_pool": "sampling", "judging_progress": "stats", "overlap_matrix": "stats", "pool_size": "stats",
         "relevant_by_depth": "stats", "unique_contributions": "stats"}


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_HOME[name]}"), name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOME})


__all__ = sorted(_HOME)

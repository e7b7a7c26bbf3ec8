"""Depth-k pooling (TREC): the union of each run's top k documents per topic."""

from __future__ import annotations

from ..declaration import PoolParams, Strategy, StrategyRefused, declared
from ..depth import depth_pool
from ..ranking import Runs
from ..result import PoolResult
from .common import Candidates


def build(runs: Runs, p: PoolParams) -> PoolResult:
    if p.depth is None:
        raise StrategyRefused("depth pooling needs --depth K")
    return depth_pool(runs, p.depth, **p.selection())


STRATEGY = Strategy("depth", "Depth-k (TREC)", False, build, order=10, params=declared(Candidates),
                    help="Every run's top k documents of each topic, as NIST pools.", splits_by_topic=True)

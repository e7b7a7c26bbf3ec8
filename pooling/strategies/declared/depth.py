"""Depth-k pooling (TREC): the union of each run's top k documents per topic."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..declaration import PoolParams, Strategy, StrategyRefused, declared
from .common import Candidates

if TYPE_CHECKING:  # the implementation (pandas) is imported when a pool is built, not with the declaration
    from ..ranking import Runs
    from ..result import PoolResult


def build(runs: Runs, p: PoolParams) -> PoolResult:
    if p.depth is None:
        raise StrategyRefused("depth pooling needs --depth K")
    from ..depth import depth_pool

    return depth_pool(runs, p.depth, **p.selection())


STRATEGY = Strategy("depth", "Depth-k (TREC)", False, build, order=10, params=declared(Candidates),
                    help="Every run's top k documents of each topic, as NIST pools.", splits_by_topic=True)

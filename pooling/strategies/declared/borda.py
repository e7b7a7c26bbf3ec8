"""Borda count: the runs' candidates fused by Borda points (depth - rank + 1), the best of them up to
the budget."""

from __future__ import annotations

from ..declaration import PoolParams, Strategy, StrategyRefused, declared
from ..fusion import fusion_pool
from ..ranking import Runs
from ..result import PoolResult
from .common import Budget, Candidates, TotalBudget


def build(runs: Runs, p: PoolParams) -> PoolResult:
    if p.budget is None and p.total_budget is None:
        raise StrategyRefused("borda pooling needs a budget (--budget N per topic or --total-budget N)")
    return fusion_pool(runs, p.budget, method="borda", depth=p.depth or 100, total_budget=p.total_budget,
                       **p.selection())


STRATEGY = Strategy("borda", "Borda count", False, build, order=30,
                    params=declared(Candidates, Budget, TotalBudget),
                    help="The runs' candidates fused by Borda points (depth - rank + 1); the best up to the budget.")

"""Reciprocal-rank fusion: the runs' candidates fused by reciprocal rank (1 / (60 + rank)), the best of
them up to the budget."""

from __future__ import annotations

from ..declaration import PoolParams, Strategy, StrategyRefused, declared
from ..fusion import fusion_pool
from ..ranking import Runs
from ..result import PoolResult
from .common import Budget, Candidates, TotalBudget


def build(runs: Runs, p: PoolParams) -> PoolResult:
    if p.budget is None and p.total_budget is None:
        raise StrategyRefused("rrf pooling needs a budget (--budget N per topic or --total-budget N)")
    return fusion_pool(runs, p.budget, method="rrf", depth=p.depth or 100, total_budget=p.total_budget,
                       **p.selection())


STRATEGY = Strategy("rrf", "Reciprocal-rank fusion", False, build, order=20,
                    params=declared(Candidates, Budget, TotalBudget),
                    help="The runs' candidates fused by reciprocal rank (1 / (60 + rank)); the best up to the budget.")

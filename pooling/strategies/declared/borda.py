"""Borda count: the runs' candidates fused by Borda points (depth - rank + 1), the best of them up to
the budget."""

from __future__ import annotations

from ..declaration import Strategy, declared
from .common import Budget, Candidates, TotalBudget, fused

build = fused("borda")


STRATEGY = Strategy("borda", "Borda count", False, build, order=30,
                    params=declared(Candidates, Budget, TotalBudget),
                    help="The runs' candidates fused by Borda points (depth - rank + 1); the best up to the budget.")

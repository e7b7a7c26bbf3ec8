"""Reciprocal-rank fusion: the runs' candidates fused by reciprocal rank (1 / (60 + rank)), the best of
them up to the budget."""

from __future__ import annotations

from ..declaration import Strategy, declared
from .common import Budget, Candidates, TotalBudget, fused

build = fused("rrf")


STRATEGY = Strategy("rrf", "Reciprocal-rank fusion", False, build, order=20,
                    params=declared(Candidates, Budget, TotalBudget),
                    help="The runs' candidates fused by reciprocal rank (1 / (60 + rank)); the best up to the budget.")

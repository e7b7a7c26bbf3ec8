"""Move-to-front: an adaptive pool; runs that find relevant documents are read further (move-to-front)."""

from __future__ import annotations

from ..adaptive import MoveToFront
from ..declaration import Strategy, declared
from .common import Budget, Candidates, Shared, TotalBudget, adaptive_build

STRATEGY = Strategy(
    MoveToFront.name, "Move-to-front", True, adaptive_build(MoveToFront), pool_class=MoveToFront, order=50,
    params=declared(Candidates, Budget, TotalBudget, Shared),
    help="Runs that find relevant documents are read further (move-to-front).")

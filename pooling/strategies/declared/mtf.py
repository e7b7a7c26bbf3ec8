"""Move-to-front: an adaptive pool; runs that find relevant documents are read further (move-to-front)."""

from __future__ import annotations

from ..declaration import Strategy, declared
from .common import Budget, Candidates, Shared, TotalBudget, adaptive_build

POOL = "pooling.strategies.adaptive:MoveToFront"  # imported when a pool is built

STRATEGY = Strategy(
    "mtf", "Move-to-front", True, adaptive_build(POOL), pool_class=POOL, order=50,
    params=declared(Candidates, Budget, TotalBudget, Shared),
    help="Runs that find relevant documents are read further (move-to-front).")

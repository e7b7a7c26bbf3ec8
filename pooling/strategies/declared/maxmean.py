"""MaxMean bandit: an adaptive pool; the run with the highest posterior mean of relevance so far gives
the next document."""

from __future__ import annotations

from ..declaration import Strategy, declared
from .common import Budget, Candidates, Shared, TotalBudget, adaptive_build

POOL = "pooling.strategies.adaptive:MaxMean"  # imported when a pool is built

STRATEGY = Strategy(
    "maxmean", "MaxMean bandit", True, adaptive_build(POOL), pool_class=POOL, order=60,
    params=declared(Candidates, Budget, TotalBudget, Shared),
    help="The run with the highest posterior mean of relevance so far gives the next document.")

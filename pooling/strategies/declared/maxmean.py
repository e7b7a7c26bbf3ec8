"""MaxMean bandit: an adaptive pool; the run with the highest posterior mean of relevance so far gives
the next document."""

from __future__ import annotations

from ..adaptive import MaxMean
from ..declaration import Strategy, declared
from .common import Budget, Candidates, Shared, TotalBudget, adaptive_build

STRATEGY = Strategy(
    MaxMean.name, "MaxMean bandit", True, adaptive_build(MaxMean), pool_class=MaxMean, order=60,
    params=declared(Candidates, Budget, TotalBudget, Shared),
    help="The run with the highest posterior mean of relevance so far gives the next document.")

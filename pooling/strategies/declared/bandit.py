"""Bayesian bandit: an adaptive pool; thompson sampling over the runs' relevance (a Bayesian bandit)."""

from __future__ import annotations

from ..declaration import Strategy, declared
from .common import Budget, Candidates, Shared, TotalBudget, adaptive_build

POOL = "pooling.strategies.adaptive:BayesianBandit"  # imported when a pool is built

STRATEGY = Strategy(
    "bandit", "Bayesian bandit", True, adaptive_build(POOL), pool_class=POOL, order=70,
    params=declared(Candidates, Budget, TotalBudget, Shared),
    help="Thompson sampling over the runs' relevance (a Bayesian bandit).")

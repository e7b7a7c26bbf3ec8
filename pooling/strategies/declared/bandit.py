"""Bayesian bandit: an adaptive pool; thompson sampling over the runs' relevance (a Bayesian bandit)."""

from __future__ import annotations

from ..adaptive import BayesianBandit
from ..declaration import Strategy, declared
from .common import Budget, Candidates, Shared, TotalBudget, adaptive_build

STRATEGY = Strategy(
    BayesianBandit.name, "Bayesian bandit", True, adaptive_build(BayesianBandit), pool_class=BayesianBandit, order=70,
    params=declared(Candidates, Budget, TotalBudget, Shared),
    help="Thompson sampling over the runs' relevance (a Bayesian bandit).")

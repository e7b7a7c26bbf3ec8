"""Stratified sampling: documents sampled by the depth they first appear at, at each stratum's rate."""

from __future__ import annotations

from ..declaration import PoolParams, Strategy, declared
from ..ranking import Runs
from ..result import PoolResult
from ..sampling import DEFAULT_STRATA, stratified_pool
from .common import Strata


def build(runs: Runs, p: PoolParams) -> PoolResult:
    return stratified_pool(runs, p.strata or DEFAULT_STRATA, seed=p.seed, **p.selection())


def recorded(p: PoolParams) -> dict:
    return {"strata": [list(s) for s in (p.strata or DEFAULT_STRATA)]}


STRATEGY = Strategy("sampled", "Stratified sample", False, build, recorded=recorded, order=40,
                    params=declared(Strata), samples=True,
                    help="A random sample of the documents by the depth they first appear at (inferred "
                         "measures estimate from it).")

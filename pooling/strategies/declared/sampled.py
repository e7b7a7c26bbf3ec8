"""Stratified sampling: documents sampled by the depth they first appear at, at each stratum's rate."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..declaration import PoolParams, Strategy, declared
from .common import Strata

if TYPE_CHECKING:  # the implementation (pandas) is imported when a pool is built, not with the declaration
    from ..ranking import Runs
    from ..result import PoolResult


def build(runs: Runs, p: PoolParams) -> PoolResult:
    from ..sampling import DEFAULT_STRATA, stratified_pool

    return stratified_pool(runs, p.strata or DEFAULT_STRATA, seed=p.seed, **p.selection())


def recorded(p: PoolParams) -> dict:
    from ..sampling import DEFAULT_STRATA

    return {"strata": [list(s) for s in (p.strata or DEFAULT_STRATA)]}


STRATEGY = Strategy("sampled", "Stratified sample", False, build, recorded=recorded, order=40,
                    params=declared(Strata), samples=True,
                    help="A random sample of the documents by the depth they first appear at (inferred "
                         "measures estimate from it).")

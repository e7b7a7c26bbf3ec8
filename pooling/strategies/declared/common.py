"""Parameters and builders several strategies share (declared once, listed by each strategy that reads them)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..declaration import PoolParams, StrategyRefused, imported, param

if TYPE_CHECKING:  # the implementations (pandas) are imported when a pool is built, not with the declarations
    from ..adaptive import AdaptivePool
    from ..ranking import Runs
    from ..result import PoolResult
    from ..sampling import Stratum


def stratum(text: str) -> Stratum:
    """FIRST-LAST:RATE, e.g. 11-100:0.1."""
    from ..sampling import Stratum

    try:
        span, rate = text.split(":")
        first, last = span.split("-")
        return Stratum(int(first), int(last), float(rate))
    except ValueError:
        raise ValueError(f"stratum {text!r} is not FIRST-LAST:RATE (e.g. 11-100:0.1)") from None


def strata(text: str) -> list[Stratum]:
    return [stratum(part) for part in text.split()]


@dataclass(frozen=True)
class Candidates:
    depth: int | None = param(None, min=1, max=100000, initial=100, unit="documents",
                              help="k of depth-k pooling, or the depth of the other strategies' "
                                   "candidates, 100 if empty")
    topic_depth: str | None = param(None, label="Per-topic depth", metavar="QID=K", many=True,
                                    help="QID=K pairs separated by spaces, e.g. 301=50 302=100; other topics "
                                         "get the depth above")


@dataclass(frozen=True)
class Budget:
    budget: int | None = param(None, min=1, max=10**9, unit="judgments", help="Judgments per topic")


@dataclass(frozen=True)
class TotalBudget:
    total_budget: int | None = param(None, min=1, max=10**9, unit="judgments", help="Judgments over all topics")


@dataclass(frozen=True)
class Shared:
    shared: bool = param(False, help="Bandits: credit a judgment to every run that retrieved the document")


@dataclass(frozen=True)
class Strata:
    strata: str | None = param(None, metavar="FIRST-LAST:RATE", many=True, parse=strata,
                               help="Sampling strata: FIRST-LAST:RATE separated by spaces, e.g. 1-10:1 "
                                    "11-100:0.1; 1-10:1 11-100:0.1 if empty")


def adaptive_build(pool_class: str) -> Callable[[Runs, PoolParams], AdaptivePool]:
    """The build of an adaptive strategy whose pool is the class ``pool_class`` (``"module:Class"``)."""
    def build(runs: Runs, p: PoolParams) -> AdaptivePool:
        return imported(pool_class)(runs, p.budget, depth=p.depth or 100, total_budget=p.total_budget, seed=p.seed,
                   shared=p.shared, **p.selection())

    return build


def fused(method: str) -> Callable[[Runs, PoolParams], PoolResult]:
    """The build of a fusion strategy (``rrf``, ``borda``): the runs' candidates fused by ``method``, the best up
    to the budget (per topic or in all), which it cannot do without."""
    def build(runs: Runs, p: PoolParams) -> PoolResult:
        if p.budget is None and p.total_budget is None:
            raise StrategyRefused(f"{method} pooling needs a budget (--budget N per topic or --total-budget N)")
        from ..fusion import fusion_pool

        return fusion_pool(runs, p.budget, method=method, depth=p.depth or 100, total_budget=p.total_budget,
                           **p.selection())

    return build

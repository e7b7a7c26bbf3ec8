"""The pooling strategies by name: the one list the service, the command, the model and judging read.

Adding a strategy touches its own module and this registry, nothing else: write the pooling function
(fixed: runs -> :class:`PoolResult`; adaptive: runs -> an :class:`AdaptivePool`), then add a
:class:`Strategy` to ``STRATEGIES`` with a builder that maps :class:`PoolParams` to its arguments and
refuses (``StrategyRefused``, one line for the user) what it cannot work without.

>>> [s.name for s in STRATEGIES.values() if s.adaptive]
['mtf', 'maxmean', 'bandit', 'cal']
>>> get("depth").build({}, PoolParams())
Traceback (most recent call last):
...
pooling.strategies.registry.StrategyRefused: depth pooling needs --depth K
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .adaptive import AdaptivePool, BayesianBandit, MaxMean, MoveToFront
from .cal import CalParams, CalPool, Corpus
from .depth import depth_pool
from .fusion import fusion_pool
from .ranking import Depth, Runs, ranked_entries
from .result import PoolResult
from .sampling import DEFAULT_STRATA, Stratum, stratified_pool

__all__ = ["IMPORTED", "STRATEGIES", "PoolParams", "Strategy", "StrategyRefused", "adaptive_names",
           "adaptive_pool", "choices", "form_choices", "get", "is_adaptive", "names"]

#: pools made of imported judgments rather than built from runs
IMPORTED = ("imported", "Imported")


class StrategyRefused(ValueError):
    """A build the strategy cannot do with the parameters given (the message is one line for the user)."""


@dataclass(frozen=True)
class PoolParams:
    """Everything a build may ask for; each strategy reads the fields it needs.

    ``depth``: k (one for every topic, or per topic); for budgeted and adaptive strategies the depth of
    their candidates (default 100). ``budget``: judgments per topic (or per topic id); ``total_budget``:
    over all topics. ``seed``: of sampling and bandits. ``strata``: sampling strata. ``shared``: bandits
    credit every run that retrieved a judged document. ``teams``, ``priorities``, ``runs_per_team``: pool
    each team's first N runs by priority. ``cal``: the parameters of continuous active learning (one
    object, declared by :class:`.cal.CalParams`); ``corpus``: the collection's features and topic texts,
    given by the caller to strategies that declare ``needs_corpus``.
    """

    depth: Depth | None = None
    budget: int | Mapping[str, int] | None = None
    total_budget: int | None = None
    seed: int = 0
    strata: Sequence[Stratum] | None = None
    shared: bool = False
    teams: Mapping[str, str] | None = None
    priorities: Mapping[str, int] | None = None
    runs_per_team: int | None = None
    cal: CalParams | None = None
    corpus: Corpus | None = None

    def selection(self) -> dict[str, Any]:
        return {"teams": self.teams, "priorities": self.priorities, "runs_per_team": self.runs_per_team}


@dataclass(frozen=True)
class Strategy:
    """One pooling strategy: ``build(runs, params)`` gives a :class:`PoolResult` (fixed) or an
    :class:`AdaptivePool` (adaptive: the judging queue asks it for each next document)."""

    name: str
    label: str
    adaptive: bool
    build: Callable[[Runs, PoolParams], PoolResult | AdaptivePool] = field(repr=False)
    #: parameters recorded on the pool besides the common ones (e.g. the strata of a sample)
    recorded: Callable[[PoolParams], dict] = field(default=lambda params: {}, repr=False)
    #: the class of an adaptive pool (what :func:`adaptive_pool` builds), None for fixed pools
    pool_class: type[AdaptivePool] | None = field(default=None, repr=False)
    #: whether ``build`` needs :attr:`PoolParams.corpus` (the collection's document features)
    needs_corpus: bool = False


def _depth(runs: Runs, p: PoolParams) -> PoolResult:
    if p.depth is None:
        raise StrategyRefused("depth pooling needs --depth K")
    return depth_pool(runs, p.depth, **p.selection())


def _fusion(method: str) -> Callable[[Runs, PoolParams], PoolResult]:
    def build(runs: Runs, p: PoolParams) -> PoolResult:
        if p.budget is None and p.total_budget is None:
            raise StrategyRefused(f"{method} pooling needs a budget (--budget N per topic or --total-budget N)")
        return fusion_pool(runs, p.budget, method=method, depth=p.depth or 100, total_budget=p.total_budget,
                           **p.selection())

    return build


def _sampled(runs: Runs, p: PoolParams) -> PoolResult:
    return stratified_pool(runs, p.strata or DEFAULT_STRATA, seed=p.seed, **p.selection())


def _adaptive(cls: type[AdaptivePool]) -> Callable[[Runs, PoolParams], AdaptivePool]:
    def build(runs: Runs, p: PoolParams) -> AdaptivePool:
        return cls(runs, p.budget, depth=p.depth or 100, total_budget=p.total_budget, seed=p.seed,
                   shared=p.shared, **p.selection())

    return build


def _cal(runs: Runs, p: PoolParams) -> CalPool:
    if p.corpus is None:
        raise StrategyRefused("cal learns from the documents' text: import the collection's documents first")
    if p.budget is None:
        raise StrategyRefused("cal pooling needs a budget (--budget N judgments per topic)")
    per_topic = isinstance(p.budget, Mapping)
    cal = replace(p.cal or CalParams(), budget=None if per_topic else int(p.budget), seed=p.seed)
    topics = {q: t for q, t in p.corpus.topics.items() if not per_topic or q in p.budget}
    seeds, ranked = {}, None
    if cal.seed_depth and runs:
        ranked = ranked_entries(runs, cal.seed_depth)[["qid", "docno", "tag", "rank"]]
        entries = depth_pool(runs, cal.seed_depth).entries
        seeds = {str(q): list(g["docno"].astype(str)) for q, g in entries.groupby("qid", sort=False)}
    pool = CalPool(p.corpus.features, topics, cal, seed_docs=seeds,
                   budgets={str(q): int(b) for q, b in p.budget.items()} if per_topic else None)
    if ranked is not None:
        pool.ranked, pool.params["runs"] = ranked, sorted(runs)
    return pool


STRATEGIES: dict[str, Strategy] = {s.name: s for s in [
    Strategy("depth", "Depth-k (TREC)", False, _depth),
    Strategy("rrf", "Reciprocal-rank fusion", False, _fusion("rrf")),
    Strategy("borda", "Borda count", False, _fusion("borda")),
    Strategy("sampled", "Stratified sample", False, _sampled,
             recorded=lambda p: {"strata": [list(s) for s in (p.strata or DEFAULT_STRATA)]}),
    *(Strategy(cls.name, label, True, _adaptive(cls), pool_class=cls)
      for cls, label in [(MoveToFront, "Move-to-front"), (MaxMean, "MaxMean bandit"),
                         (BayesianBandit, "Bayesian bandit")]),
    Strategy("cal", "Continuous active learning", True, _cal, needs_corpus=True),
]}


def get(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise StrategyRefused(f"unknown strategy {name!r} ({', '.join(STRATEGIES)})") from None


def names() -> list[str]:
    """Every strategy a pool can be built with, in the registry's order (forms, commands, docs)."""
    return list(STRATEGIES)


def adaptive_pool(strategy: str, runs: Runs, budget=None, **kwargs) -> AdaptivePool:
    """Build the adaptive pool named ``strategy`` (one of :func:`adaptive_names`) with the pool class's own
    arguments (simulations and tests; the service goes through :attr:`Strategy.build`)."""
    found = STRATEGIES.get(strategy)
    if found is None or found.pool_class is None:
        raise StrategyRefused(f"unknown adaptive strategy {strategy!r} ({', '.join(adaptive_names())})")
    return found.pool_class(runs, budget, **kwargs)


def is_adaptive(name: str) -> bool:
    """Whether pools of this strategy grow one judged document at a time."""
    strategy = STRATEGIES.get(name)
    return strategy is not None and strategy.adaptive


def adaptive_names() -> list[str]:
    return [s.name for s in STRATEGIES.values() if s.adaptive]


def form_choices() -> list[tuple[str, str]]:
    """(value, label) of every strategy a pool can be built with (forms; without "imported")."""
    return [(s.name, s.label) for s in STRATEGIES.values()]


def choices() -> list[tuple[str, str]]:
    """(value, label) of every strategy a pool may record, for the model's field."""
    return [(s.name, s.label) for s in STRATEGIES.values()] + [IMPORTED]

"""A pool strategy declared once: name, label, help, typed parameters and capabilities.

Everything else is generated from a declaration: the console's form fields (only the chosen strategy's),
``build_pool``'s options, the validation messages, the preview's list of parameters and the docs' table
of strategies. A parameter is a field of a frozen dataclass with its metadata (:func:`param`: type,
bounds, default, unit, help); :func:`declared` reads them into :class:`Param` records (both shared with the
other declarations, in :mod:`workbench.formats.declarations`, whose doctest shows them).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any

from workbench.formats.declarations import Param, declared, param

if TYPE_CHECKING:
    from .adaptive import AdaptivePool
    from .ranking import Depth, Runs
    from .result import PoolResult
    from .sampling import Stratum

__all__ = ["CAPABILITIES", "Param", "PoolParams", "Strategy", "StrategyRefused", "declared", "imported", "param"]

#: what a strategy may declare it does, in the docs' order, with the words the docs use
CAPABILITIES = {"adaptive": "adaptive (grows one judgment at a time)", "needs_corpus": "needs the documents' text",
                "samples": "samples (estimates from a random sample)", "stops": "stops topics (stopping rules)",
                "splits_by_topic": "splits by topic (a build's parts run apart)"}


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
    cal: Any = None  # a .cal.CalParams (cal imports this module: not imported here)
    corpus: Any = None  # a .cal.Corpus
    #: the values of parameters a strategy declares beyond the ones above (by name)
    options: Mapping[str, Any] | None = None

    def selection(self) -> dict[str, Any]:
        return {"teams": self.teams, "priorities": self.priorities, "runs_per_team": self.runs_per_team}


def imported(reference: str) -> Any:
    """What ``"package.module:name"`` names, its module imported now."""
    module, _, name = reference.partition(":")
    return getattr(import_module(module), name)


def _nothing_recorded(params: PoolParams) -> dict:
    return {}


@dataclass(frozen=True)
class Strategy:
    """One pooling strategy: ``build(runs, params)`` gives a :class:`PoolResult` (fixed) or an
    :class:`AdaptivePool` (adaptive: the judging queue asks it for each next document).

    ``params``: what a user gives it (:func:`declared`); ``order``: its place in lists (then by name).
    Capabilities: ``adaptive``, ``needs_corpus`` (``build`` needs :attr:`PoolParams.corpus`),
    ``samples`` (may draw a random sample; ``samples_when(record)`` says whether a pool's recorded
    parameters do), ``stops`` (topics stop), ``splits_by_topic`` (its pool is each run's top k per topic,
    so a build may be split by topic and read only those lines).
    """

    name: str
    label: str
    adaptive: bool
    build: Callable[[Runs, PoolParams], PoolResult | AdaptivePool] = field(repr=False)
    #: parameters recorded on the pool besides the common ones (e.g. the strata of a sample)
    recorded: Callable[[PoolParams], dict] = field(default=_nothing_recorded, repr=False)
    #: the class of an adaptive pool (what ``adaptive_pool`` builds) as ``"module:Class"``, None for fixed pools:
    #: imported when a pool is built, not with the registry (pandas is not a start-up import)
    pool_class: str | None = field(default=None, repr=False)
    needs_corpus: bool = False
    help: str = ""
    params: tuple[Param, ...] = ()
    samples: bool = False
    stops: bool = False
    splits_by_topic: bool = False
    samples_when: Callable[[Mapping], bool] | None = field(default=None, repr=False)
    order: int = 100

    def pool_type(self) -> type[AdaptivePool] | None:
        """The class :attr:`pool_class` names (imported now), None for fixed pools."""
        return None if self.pool_class is None else imported(self.pool_class)

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)

    def capabilities(self) -> list[str]:
        return [c for c in CAPABILITIES if getattr(self, c)]

    @property
    def stratified(self) -> bool:
        """A fixed pool that samples: its entries are the random sample itself, drawn by strata with known
        rates (Horvitz-Thompson estimates, inferred measures); an adaptive one samples on the side."""
        return self.samples and not self.adaptive

    def samples_in(self, record: Mapping) -> bool:
        """Whether a pool built with these recorded parameters drew a random sample."""
        return self.samples and (self.samples_when is None or self.samples_when(record))

    def problems(self, values: Mapping[str, Any], names: Mapping[str, str] | None = None) -> list[str]:
        """Each given value outside its parameter's bounds, one line each (``names``: how to call them,
        e.g. the option ``--target-recall``)."""
        found = []
        for p in self.params:
            problem = p.problem(values.get(p.name), (names or {}).get(p.name, p.name))
            if problem:
                found.append(problem)
        return found

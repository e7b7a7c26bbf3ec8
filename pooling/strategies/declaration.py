"""A pool strategy declared once: name, label, help, typed parameters and capabilities.

Everything else is generated from a declaration: the console's form fields (only the chosen strategy's),
``build_pool``'s options, the validation messages, the preview's list of parameters and the docs' table
of strategies. A parameter is a field of a frozen dataclass with its metadata (:func:`param`: type,
bounds, default, unit, help); :func:`declared` reads them into :class:`Param` records.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class Knobs:
...     k: int = param(10, min=1, max=50, help="Documents per run")
>>> [(p.name, p.type, p.default, p.min, p.max) for p in declared(Knobs)]
[('k', 'int', 10, 1, 50)]
>>> declared(Knobs)[0].problem(60, "--k")
'--k must be at most 50, not 60'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .adaptive import AdaptivePool
    from .ranking import Depth, Runs
    from .result import PoolResult
    from .sampling import Stratum

__all__ = ["CAPABILITIES", "Param", "PoolParams", "Strategy", "StrategyRefused", "declared", "param"]

#: what a strategy may declare it does, in the docs' order, with the words the docs use
CAPABILITIES = {"adaptive": "adaptive (grows one judgment at a time)", "needs_corpus": "needs the documents' text",
                "samples": "samples (estimates from a random sample)", "stops": "stops topics (stopping rules)",
                "splits_by_topic": "splits by topic (a build's parts run apart)"}


class StrategyRefused(ValueError):
    """A build the strategy cannot do with the parameters given (the message is one line for the user)."""


def _number(value: float) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


@dataclass(frozen=True)
class Param:
    """One declared parameter: ``type`` is int, float, bool, choice or text (``parse`` reads the text,
    ``many``: several words on the command line); bounds are inclusive unless ``min_open``/``max_open``;
    ``into`` names the build argument that gathers it (cal's parameters go into ``cal``)."""

    name: str
    type: str
    default: Any = None
    help: str = ""
    label: str = ""
    min: float | None = None
    max: float | None = None
    min_open: bool = False
    max_open: bool = False
    step: float | None = None
    unit: str = ""
    choices: tuple[str, ...] = ()
    optional: bool = False  # None (an empty field) is a value
    initial: Any = None  # what the form shows first when not the default
    into: str | None = None
    metavar: str | None = None
    many: bool = False
    parse: Callable[[str], Any] | None = field(default=None, repr=False, compare=False)
    #: the class ``into`` builds (cal's :class:`.cal.CalParams`): it reads KEY=VALUE words and checks itself
    into_type: type | None = field(default=None, repr=False, compare=False)

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    @property
    def title(self) -> str:
        return self.label or self.name.replace("_", " ").capitalize()

    def bounds(self) -> str:
        """The allowed values in words ("1 to 100,000", "above 0", "bm25 or none"), "" when any value goes."""
        if self.choices:
            return " or ".join([", ".join(self.choices[:-1]), self.choices[-1]] if len(self.choices) > 1
                               else self.choices)
        low = None if self.min is None else ("above " if self.min_open else "at least ") + _number(self.min)
        high = None if self.max is None else ("below " if self.max_open else "at most ") + _number(self.max)
        if low and high and not (self.min_open or self.max_open):
            return f"{_number(self.min)} to {_number(self.max)}"
        return " and ".join(b for b in (low, high) if b)

    def describe(self) -> str:
        """The help of a field or option: its text, then its bounds and default in brackets."""
        notes = [self.bounds()] if self.bounds() else []
        if self.default is not None and self.type != "bool":
            notes.append(f"default {_number(self.default)}{' ' + self.unit if self.unit else ''}")
        return self.help.rstrip(".") + (f" ({'; '.join(notes)})" if notes else "") + "."

    def problem(self, value: Any, name: str | None = None) -> str | None:
        """One line naming the parameter, the bound and the value, or None when the value is allowed."""
        name = name or self.name
        if value is None:
            return None
        if self.choices:
            return None if value in self.choices else f"{name} must be one of {', '.join(self.choices)}, not {value!r}"
        side = self._outside(value) if self.type in ("int", "float") else None
        if side is None:
            return None
        if self.min_open and self.max_open:
            return f"{name} must be between {_number(self.min)} and {_number(self.max)}, not {_number(value)}"
        if side == "low":
            bound = f"{'above' if self.min_open else 'at least'} {_number(self.min)}"
        else:
            bound = f"{'below' if self.max_open else 'at most'} {_number(self.max)}"
        return f"{name} must be {bound}, not {_number(value)}"

    def _outside(self, value: float) -> str | None:
        """"low" or "high" when the value is beyond that bound."""
        if self.min is not None and (value <= self.min if self.min_open else value < self.min):
            return "low"
        if self.max is not None and (value >= self.max if self.max_open else value > self.max):
            return "high"
        return None

    def read(self, text: str, name: str | None = None) -> Any:
        """The value of a typed text (a form field's, an option's), or ValueError with one line."""
        name = name or self.name
        text = str(text).strip()
        if text == "" or (self.optional and text.lower() == "none"):
            return None
        try:
            if self.parse is not None:
                return self.parse(text)
            if self.type == "int":
                return int(text)
            if self.type == "float":
                return float(text)
        except ValueError as exc:
            if self.parse is not None:
                raise ValueError(f"{name}: {exc}") from None
            kind = "an integer" if self.type == "int" else "a number"
            raise ValueError(f"{name} must be {kind}, not {text!r}") from None
        if self.type == "bool":
            return text.lower() in ("1", "true", "on", "yes")
        return text


def param(default: Any = None, **meta: Any) -> Any:
    """A dataclass field declared as a strategy's parameter: ``param(0.8, min=0, max=1, help=...)``."""
    return field(default=default, metadata={"param": meta})


_TYPES = {"int": "int", "float": "float", "bool": "bool", "str": "text"}


def declared(*classes: type, into: str | None = None) -> tuple[Param, ...]:
    """The parameters the dataclasses declare (their fields made with :func:`param`), in field order."""
    found = []
    for cls in classes:
        for f in fields(cls):
            meta = dict(f.metadata.get("param", ()) or ())
            if "help" not in meta:
                continue  # not a parameter a user gives (filled by the build, e.g. cal's budget and seed)
            kind = (f.type.__name__ if isinstance(f.type, type) else str(f.type)).replace(" ", "")
            base = kind.split("|")[0]
            meta.setdefault("type", "choice" if meta.get("choices") else _TYPES.get(base, "text"))
            meta.setdefault("optional", "None" in kind.split("|")[1:])
            meta["choices"] = tuple(meta.get("choices", ()))
            default = None if f.default is MISSING else f.default
            target = meta.pop("into", into)
            found.append(Param(name=f.name, default=default, into=target, into_type=cls if target else None, **meta))
    return tuple(found)


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
    #: the class of an adaptive pool (what ``adaptive_pool`` builds), None for fixed pools
    pool_class: type[AdaptivePool] | None = field(default=None, repr=False)
    needs_corpus: bool = False
    help: str = ""
    params: tuple[Param, ...] = ()
    samples: bool = False
    stops: bool = False
    splits_by_topic: bool = False
    samples_when: Callable[[Mapping], bool] | None = field(default=None, repr=False)
    order: int = 100

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

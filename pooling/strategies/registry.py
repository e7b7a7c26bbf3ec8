"""The pooling strategies by name: the one list the service, the command, the model and judging read.

Each strategy is declared once, in its own module under :mod:`.declared` (a :class:`Strategy` named
``STRATEGY``: name, label, help, typed parameters, capabilities, and a builder that maps
:class:`PoolParams` to its arguments and refuses, with ``StrategyRefused``, what it cannot work
without). :func:`autodiscover` imports those modules and registers what they declare; this module runs
it for its own package when first imported (Django-free callers need no app registry), and
``PoolingConfig.ready()`` calls it too. Adding a strategy is adding a module and its test.

>>> [s.name for s in STRATEGIES.values() if s.adaptive]
['mtf', 'maxmean', 'bandit', 'cal']
>>> get("depth").build({}, PoolParams())
Traceback (most recent call last):
...
pooling.strategies.declaration.StrategyRefused: depth pooling needs --depth K
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.formats.declarations import discovered

from .declaration import Param, PoolParams, Strategy, StrategyRefused

if TYPE_CHECKING:  # the implementations (pandas) are imported when a pool is built, not with the registry
    from .adaptive import AdaptivePool
    from .ranking import Runs

__all__ = ["IMPORTED", "PACKAGE", "STRATEGIES", "Param", "PoolParams", "Strategy", "StrategyRefused",
           "adaptive_names", "adaptive_pool", "autodiscover", "choices", "form_choices", "gathered", "get", "is_adaptive",
           "names", "parameters", "register", "table", "unregister"]

#: pools made of imported judgments rather than built from runs
IMPORTED = ("imported", "Imported")
#: the package whose modules declare the built-in strategies
PACKAGE = "pooling.strategies.declared"

STRATEGIES: dict[str, Strategy] = {}


def register(strategy: Strategy) -> Strategy:
    """Add (or replace) a strategy; the registry stays in the strategies' declared order, then by name.
    A parameter another strategy declares under the same name must have the same type (one form field,
    one command option)."""
    for p in strategy.params:
        known = next((q for s in STRATEGIES.values() if s.name != strategy.name for q in s.params
                      if q.name == p.name), None)
        if known is not None and (known.type, known.into) != (p.type, p.into):
            raise ValueError(f"strategy {strategy.name!r} declares parameter {p.name!r} as {p.type}, another "
                             f"strategy as {known.type}")
    found = {**STRATEGIES, strategy.name: strategy}
    STRATEGIES.clear()
    STRATEGIES.update(sorted(found.items(), key=lambda item: (item[1].order, item[0])))
    return strategy


def unregister(name: str) -> None:
    STRATEGIES.pop(name, None)


def autodiscover(package: str = PACKAGE) -> list[str]:
    """Import every module of ``package`` and register the ``STRATEGY`` each declares (modules without one
    are shared parts); the names registered, in module order. Calling it again changes nothing."""
    return [register(declared).name for declared in discovered(package, "STRATEGY", Strategy)]


def parameters() -> list[tuple[Param, list[str]]]:
    """Every parameter of every strategy once, in the registry's order, with the strategies that read it
    (the console's form has one field per parameter, the command one option)."""
    found: dict[str, tuple[Param, list[str]]] = {}
    for s in STRATEGIES.values():
        for p in s.params:
            found.setdefault(p.name, (p, []))[1].append(s.name)
    return list(found.values())


def get(name: str) -> Strategy:
    try:
        return STRATEGIES[name]
    except KeyError:
        raise StrategyRefused(f"unknown strategy {name!r} ({', '.join(STRATEGIES)})") from None


def gathered() -> list[tuple[str, type, list[str]]]:
    """The build arguments that gather declared parameters into one object (``cal``: a ``CalParams``), with
    its class and the strategies that declare them (forms and commands also take them as KEY=VALUE)."""
    found: dict[str, tuple[type, list[str]]] = {}
    for s in STRATEGIES.values():
        for p in s.params:
            if p.into is not None:
                users = found.setdefault(p.into, (p.into_type, []))[1]
                if s.name not in users:
                    users.append(s.name)
    return [(into, kind, users) for into, (kind, users) in found.items()]


def table() -> list[dict]:
    """The strategies as the docs' table shows them: name, label, help, capabilities, and each parameter's
    name, type, default, bounds, unit and help."""
    return [{"name": s.name, "label": s.label, "help": s.help, "capabilities": s.capabilities(),
             "params": [{"name": p.name, "type": p.type, "default": p.default, "min": p.min, "max": p.max,
                         "bounds": p.bounds(), "unit": p.unit, "help": p.help} for p in s.params]}
            for s in STRATEGIES.values()]


def names() -> list[str]:
    """Every strategy a pool can be built with, in the registry's order (forms, commands, docs)."""
    return list(STRATEGIES)


def adaptive_pool(strategy: str, runs: Runs, budget=None, **kwargs) -> AdaptivePool:
    """Build the adaptive pool named ``strategy`` (one of :func:`adaptive_names`) with the pool class's own
    arguments (simulations and tests; the service goes through :attr:`Strategy.build`)."""
    found = STRATEGIES.get(strategy)
    if found is None or found.pool_class is None:
        raise StrategyRefused(f"unknown adaptive strategy {strategy!r} ({', '.join(adaptive_names())})")
    return found.pool_type()(runs, budget, **kwargs)


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


autodiscover()

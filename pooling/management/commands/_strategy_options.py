"""The command options of the strategies' parameters, generated from their declarations: one option per
parameter (``--target-recall``), its help with bounds and default, and the values a command was given
checked against the chosen strategy's declaration (one line naming the option, the bound and the value)."""

from __future__ import annotations

from collections.abc import Iterable

from pooling.strategies import registry
from pooling.strategies.declaration import Param
from workbench.formats.declarations import add_param_options

__all__ = ["add_gathered_options", "add_param_options", "gathered_objects", "given_params"]


def given_params(opts: dict, strategy: registry.Strategy, offered: Iterable[str] | None = None) -> dict:
    """The chosen strategy's parameters the command was given, read and checked; ValueError (one line)
    for a value out of bounds or an option of a parameter another strategy reads. ``offered``: the names
    of the parameters the command has options for (default: every strategy's)."""
    offered = {p.name for p, _ in registry.parameters()} if offered is None else set(offered)
    for p, users in registry.parameters():
        if p.name in offered and strategy.name not in users and opts.get(p.name) not in (None, False):
            raise ValueError(f"{p.option} applies to {', '.join(users)}, not to {strategy.name}")
    values = {p.name: _value(p, opts[p.name]) for p in strategy.params
              if p.name in offered and opts.get(p.name) is not None}
    problems = strategy.problems(values, {p.name: p.option for p in strategy.params})
    if problems:
        raise ValueError("; ".join(problems))
    return values


def _value(p: Param, given):
    if p.many and p.parse is not None:
        return p.read(" ".join(given), p.option)
    return None if p.type == "choice" and given == "none" else given


def add_gathered_options(parser) -> None:
    """``--cal KEY=VALUE ...``: the parameters a strategy gathers into one object, as words too."""
    for into, _, users in registry.gathered():
        keys = ", ".join(p.name for p in registry.get(users[0]).params if p.into == into)
        parser.add_argument(f"--{into}", nargs="+", default=[], metavar="KEY=VALUE",
                            help=f"{', '.join(users)}: its parameters as KEY=VALUE ({keys}), e.g. stop=target "
                                 "target_recall=0.8, taking precedence over the options above")


def gathered_objects(opts: dict, values: dict, strategy: registry.Strategy) -> dict:
    """{into: object} for the chosen strategy (cal: its :class:`CalParams`): the options given, then the
    ``KEY=VALUE`` words, checked once by the object itself; words for another strategy are refused."""
    objects = {}
    for into, kind, users in registry.gathered():
        words = opts.get(into) or []
        if strategy.name not in users:
            if words:
                raise ValueError(f"--{into} applies to {', '.join(users)}, not to {strategy.name}")
            continue
        named = {w.partition("=")[0].strip().replace("-", "_") for w in words}
        typed = kind.parse(words)
        given = {p.name: values[p.name] for p in strategy.params if p.into == into and p.name in values}
        objects[into] = kind(**{**given, **{k: getattr(typed, k) for k in named}})
    return objects

"""Typed options declared once, for every kind of thing a user configures: a pool strategy's parameters, a
machine judge's options, a measure family's parameters. Django-free and argparse-only, so each app's
forms, commands, validation and the docs' tables are generated from the same records.

An option is a field of a frozen dataclass with its metadata (:func:`param`: type, bounds, default, unit,
help); :func:`declared` reads them into :class:`Param` records; :func:`add_param_options` makes one command
option per record; :func:`checked` reads and checks given values (one line naming the option, the bound
and the value).

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

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

__all__ = ["Param", "add_param_options", "checked", "declared", "discovered", "param"]


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
    """A dataclass field declared as a parameter (a strategy's, a judge's option): ``param(0.8, min=0, max=1, help=...)``."""
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


def add_param_options(parser, params: Iterable[tuple[Param, list[str]]], defaults: bool = False) -> None:
    """One command option per parameter (``params``: each with the names of what reads it, shown in brackets);
    ``defaults``: the declared default when not given (else None: not given)."""
    for p, users in params:
        kwargs = {"dest": p.name, "default": p.default if defaults else None,
                  "help": f"{p.describe()} [{', '.join(users)}]".replace("%", "%%")}
        if p.type == "bool":
            kwargs.update(action="store_true", default=bool(p.default) if defaults else None)
        elif p.many:
            kwargs.update(nargs="+", metavar=p.metavar or "VALUE")
        elif p.type == "choice":
            kwargs.update(choices=[*p.choices, *(["none"] if p.optional else [])])
        elif p.type in ("int", "float"):
            kwargs.update(type=int if p.type == "int" else float, metavar="N" if p.type == "int" else "X")
        parser.add_argument(p.option, **kwargs)


def _typed(p: Param, value: Any, name: str) -> Any:
    """A given value as its parameter's type (text read, an integral float as an int); ValueError otherwise."""
    value = p.read(value, name) if isinstance(value, str) and p.type != "text" else value
    if p.type == "int" and isinstance(value, float) and value.is_integer():
        value = int(value)
    wrong = isinstance(value, bool) or not isinstance(value, int if p.type == "int" else int | float)
    if p.type in ("int", "float") and wrong:
        raise ValueError(f"{name} must be {'an integer' if p.type == 'int' else 'a number'}, not {value!r}")
    return value


def checked(params: Iterable[Param], given: Mapping[str, Any], names: Mapping[str, str] | None = None) -> dict:
    """The values given for ``params`` (text read by type, numbers as they are; None and "" left out), each
    checked against its bounds: ValueError with one line per problem (``names``: how to call each one, e.g.
    its option ``--max-wait``)."""
    values, problems = {}, []
    for p in params:
        if given.get(p.name) in (None, ""):
            continue
        name = (names or {}).get(p.name, p.name)
        try:
            values[p.name] = _typed(p, given[p.name], name)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        problem = p.problem(values[p.name], name)
        if problem:
            problems.append(problem)
    if problems:
        raise ValueError("; ".join(problems))
    return values


def discovered(package: str, attribute: str, kind: type) -> list:
    """The declarations of type ``kind`` that the modules of ``package`` hold under ``attribute`` (``STRATEGY``,
    ``JUDGE``, ``MEASURE``), in module order; modules without one (shared parts) are passed over. What each
    registry's ``autodiscover()`` registers."""
    root = importlib.import_module(package)
    found = []
    for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda m: m.name):
        declared = getattr(importlib.import_module(f"{package}.{info.name}"), attribute, None)
        if isinstance(declared, kind):
            found.append(declared)
    return found

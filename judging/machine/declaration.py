"""A machine judge declared once: name, label, help, typed options and capabilities.

The ``machine_judge`` command's options, the machine assessors' form fields, the validation of a judge's
stored configuration and the docs' table of judges are generated from a declaration. An option is a field
of a frozen dataclass made with :func:`workbench.formats.declarations.param` (type, bounds, default, help).
Django-free.

>>> from dataclasses import dataclass
>>> from workbench.formats.declarations import declared, param
>>> @dataclass(frozen=True)
... class Opts:
...     rounds: int = param(3, min=1, max=9, help="Rounds")
>>> kind = JudgeKind("dice", "Dice", options=declared(Opts))
>>> kind.read({"rounds": "4"}), kind.read({})
({'rounds': 4}, {'rounds': 3})
>>> kind.read({"rounds": 12})
Traceback (most recent call last):
...
judging.machine.base.JudgeError: rounds must be at most 9, not 12
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from judging.machine.base import JudgeError
from workbench.formats.declarations import Param, checked
from workbench.formats.vocabulary import Choice

__all__ = ["CAPABILITIES", "JudgeKind"]

#: what a judge may declare it needs, in the docs' order, with the words the docs use
CAPABILITIES = {"needs_network": "needs the network (an endpoint)", "needs_text": "needs the documents' text"}


@dataclass(frozen=True)
class JudgeKind(Choice):
    """One kind of machine judge: ``judge_class(config, scale=..., ...)`` makes it; ``options``: what a user
    may set (:func:`~workbench.formats.declarations.declared`); ``order``: its place in lists (then by name,
    the first is the default)."""

    judge_class: type | None = field(default=None, repr=False, compare=False)
    options: tuple[Param, ...] = ()
    needs_network: bool = False
    needs_text: bool = True
    order: int = 100

    @property
    def params(self) -> tuple[Param, ...]:
        """The options, under the name the docs' tables read."""
        return self.options

    def capabilities(self) -> list[str]:
        return [c for c in CAPABILITIES if getattr(self, c)]

    def option(self, name: str) -> Param | None:
        return next((p for p in self.options if p.name == name), None)

    def read(self, config: Mapping[str, Any], names: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The declared options of a configuration, typed, with the defaults of those not given; JudgeError
        with one line naming each option out of bounds, its bound and the value."""
        try:
            given = checked(self.options, config, names)
        except ValueError as exc:
            raise JudgeError(str(exc)) from None
        return {**{p.name: p.default for p in self.options}, **given}

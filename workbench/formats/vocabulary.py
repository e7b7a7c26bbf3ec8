"""One object per set of named choices (significance tests, corrections, qrels policies, file formats).

Django-free. Menus, help texts and parsers read their names from a :class:`Vocabulary`, so a name offered
anywhere is a name that is accepted, and an unknown name is refused with the names that exist:

    >>> tests = Vocabulary("test", [("t", "paired t"), ("sign", "sign")])
    >>> tests.parse("sign"), tests.label("t"), tests.describe()
    ('sign', 'paired t', 'paired t or sign')
    >>> tests.parse("z")
    Traceback (most recent call last):
    ...
    workbench.formats.vocabulary.UnknownChoice: unknown test 'z'; choose one of t, sign
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = ["Choice", "UnknownChoice", "Vocabulary"]


class UnknownChoice(ValueError):
    """A name that is not in the vocabulary; the message lists the names that are."""


@dataclass(frozen=True)
class Choice:
    """One name of a vocabulary: the name parsed and sent in forms, and its label for people."""

    name: str
    label: str
    help: str = ""


class Vocabulary:
    """An ordered set of :class:`Choice` (the first is the default unless ``default`` is given)."""

    def __init__(self, what: str, choices: Iterable[Choice | tuple[str, ...]], *, default: str | None = None) -> None:
        self.what = what
        self.choices: tuple[Choice, ...] = tuple(c if isinstance(c, Choice) else Choice(*c) for c in choices)
        self._by_name = {c.name: c for c in self.choices}
        if not self.choices or len(self._by_name) != len(self.choices):
            raise ValueError(f"a vocabulary of {what}s needs distinct names")
        self.default = self.parse(default) if default is not None else self.choices[0].name

    @classmethod
    def of(cls, what: str, names: Iterable[str], labels: dict[str, str], **kwargs) -> Vocabulary:
        """The vocabulary of ``names`` (in that order), each labelled from ``labels``: a name without a
        label is an error at import, so a list of names and its labels cannot drift apart."""
        names = tuple(names)
        missing = [n for n in names if n not in labels]
        extra = [n for n in labels if n not in names]
        if missing or extra:
            raise ValueError(f"{what} labels do not match the names: missing {missing}, unknown {extra}")
        return cls(what, [Choice(n, labels[n]) for n in names], **kwargs)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def __iter__(self) -> Iterator[Choice]:
        return iter(self.choices)

    def __len__(self) -> int:
        return len(self.choices)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def label(self, name: str) -> str:
        return self._by_name[self.parse(name)].label

    def parse(self, name: str | None, *, default: str | None = None) -> str:
        """``name`` if it is one of the names (``None`` or ``""`` give ``default`` when one is given),
        else :class:`UnknownChoice` naming the names that exist."""
        if name in (None, "") and default is not None:
            return default
        if name not in self._by_name:
            raise UnknownChoice(f"unknown {self.what} {name!r}; choose one of {', '.join(self._by_name)}")
        return name

    def describe(self, sep: str = ", ", last: str = " or ") -> str:
        """The labels as a phrase: ``"A, B or C"``."""
        labels = [c.label for c in self.choices]
        return labels[0] if len(labels) == 1 else sep.join(labels[:-1]) + last + labels[-1]

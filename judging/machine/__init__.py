"""Machine judges, in one registry: each module turns (topic, document) pairs into grades with a score and
a provenance record (``judging.machine.base``). Each judge is declared once, in its own module, as a
:class:`~judging.machine.declaration.JudgeKind` named ``JUDGE`` (name, label, help, typed options,
capabilities, its class); :func:`autodiscover` imports the modules of a package and registers what they
declare. This module runs it for its own package when first imported (Django-free callers need no app
registry) and ``JudgingConfig.ready()`` calls it too. Adding a judge is adding a module and its test.
Django-free: the judging services give a judge plain data and record what it says.

>>> JUDGES.names, JUDGES.default
(('embedding', 'openai'), 'embedding')
"""

from __future__ import annotations

from judging.machine.declaration import JudgeKind
from workbench.formats.declarations import Param, discovered
from workbench.formats.vocabulary import Vocabulary

__all__ = ["JUDGES", "PACKAGE", "JudgeKind", "autodiscover", "judge_class", "options", "register", "table",
           "unregister"]

#: the package whose modules declare the built-in judges
PACKAGE = "judging.machine"


class Judges(Vocabulary):
    """The registered judges, in their declared order (the first is the default); a vocabulary, so forms,
    commands and parsers read the same names."""

    def __init__(self) -> None:
        self.what, self.choices, self._by_name, self.default = "machine judge", (), {}, None

    def register(self, kind: JudgeKind) -> JudgeKind:
        """Add (or replace) a judge. An option another judge declares under the same name must have the same
        type (one form field, one command option)."""
        for p in kind.options:
            known = next((q for k in self.choices if k.name != kind.name for q in k.options if q.name == p.name), None)
            if known is not None and known.type != p.type:
                raise ValueError(f"judge {kind.name!r} declares option {p.name!r} as {p.type}, another judge as "
                                 f"{known.type}")
        found = sorted({**self._by_name, kind.name: kind}.values(), key=lambda k: (k.order, k.name))
        self.choices, self._by_name = tuple(found), {k.name: k for k in found}
        self.default = found[0].name
        return kind

    def unregister(self, name: str) -> None:
        self.choices = tuple(k for k in self.choices if k.name != name)
        self._by_name.pop(name, None)
        self.default = self.choices[0].name if self.choices else None

    def get(self, name: str) -> JudgeKind:
        """The judge named ``name`` (``UnknownChoice`` naming the judges otherwise)."""
        return self._by_name[self.parse(name)]


#: every judge, the default first
JUDGES = Judges()


def register(kind: JudgeKind) -> JudgeKind:
    return JUDGES.register(kind)


def unregister(name: str) -> None:
    JUDGES.unregister(name)


def autodiscover(package: str = PACKAGE) -> list[str]:
    """Import every module of ``package`` and register the ``JUDGE`` each declares (modules without one are
    shared parts); the names registered, in module order. Calling it again changes nothing."""
    return [register(declared).name for declared in discovered(package, "JUDGE", JudgeKind)]


def judge_class(kind: str):
    """The class of the judge named ``kind`` (``UnknownChoice`` naming the judges otherwise)."""
    return JUDGES.get(kind).judge_class


def options() -> list[tuple[Param, list[str]]]:
    """Every option of every judge once, in the registry's order, with the judges that read it (the form has
    one field per option, ``machine_judge`` one command option)."""
    found: dict[str, tuple[Param, list[str]]] = {}
    for kind in JUDGES:
        for p in kind.options:
            found.setdefault(p.name, (p, []))[1].append(kind.name)
    return list(found.values())


def table() -> list[dict]:
    """The judges as the docs' table shows them: name, label, help, capabilities, and each option's name,
    type, default, bounds, unit and help."""
    return [{"name": k.name, "label": k.label, "help": k.help, "capabilities": k.capabilities(),
             "options": [{"name": p.name, "type": p.type, "default": p.default, "min": p.min, "max": p.max,
                          "bounds": p.bounds(), "unit": p.unit, "help": p.help} for p in k.options]}
            for k in JUDGES]


autodiscover()

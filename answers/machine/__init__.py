"""The answers' machines, each declared once (a :class:`~judging.machine.declaration.JudgeKind`: name, label,
help, typed options, capabilities) in its own module: nugget *drafters* (a module's ``DRAFTER``: a topic's query
and judged relevant segments -> nuggets marked vital or okay) and nugget *assigners* (a module's ``ASSIGNER``: an
answer x a bank's nuggets -> support, partial_support or not_support). :func:`autodiscover` registers them
when this package is first imported; forms, jobs and docs read :data:`DRAFTERS` and :data:`ASSIGNERS`.
Django-free: the answers app gives a machine plain data (``answers.machine.base``) and records what it says.

>>> ASSIGNERS.names, ASSIGNERS.default, DRAFTERS.names
(('embedding', 'openai'), 'embedding', ('openai',))
"""

from __future__ import annotations

from judging.machine import JudgeKind, Judges
from workbench.formats.declarations import discovered

__all__ = ["ASSIGNERS", "DRAFTERS", "PACKAGE", "autodiscover", "table"]

PACKAGE = "answers.machine"


def _registry(what: str) -> Judges:
    made = Judges()
    made.what = what
    return made


#: the nugget drafters and the nugget assigners, the default first
DRAFTERS = _registry("nugget drafter")
ASSIGNERS = _registry("nugget assigner")


def autodiscover(package: str = PACKAGE) -> list[str]:
    """Import every module of ``package`` and register the ``DRAFTER`` and ``ASSIGNER`` each declares; the names
    registered (``drafter:NAME``, ``assigner:NAME``). Calling it again changes nothing."""
    found = [f"drafter:{DRAFTERS.register(k).name}" for k in discovered(package, "DRAFTER", JudgeKind)]
    return found + [f"assigner:{ASSIGNERS.register(k).name}" for k in discovered(package, "ASSIGNER", JudgeKind)]


def table() -> list[dict]:
    """The machines as the docs' table shows them: role, name, label, help, capabilities and options."""
    return [{"role": role, "name": k.name, "label": k.label, "help": k.help, "capabilities": k.capabilities(),
             "options": [{"name": p.name, "type": p.type, "default": p.default, "bounds": p.bounds(), "unit": p.unit,
                          "help": p.help} for p in k.options]}
            for role, registry in (("drafter", DRAFTERS), ("assigner", ASSIGNERS)) for k in registry]


autodiscover()

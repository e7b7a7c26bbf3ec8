"""The answers' machines, each declared once (a :class:`~judging.machine.declaration.JudgeKind`: name, label,
help, typed options, capabilities) in its own module: nugget *drafters* (a module's ``DRAFTER``: a topic's query
and judged relevant segments -> nuggets marked vital or okay) and nugget *assigners* (a module's ``ASSIGNER``: an
answer x a bank's nuggets -> support, partial_support or not_support) and *support judges* (a module's
``SUPPORT``: a cited sentence x the segment it cites -> full_support, partial_support or no_support).
:func:`autodiscover` registers them when this package is first imported; forms, jobs and docs read
:data:`DRAFTERS`, :data:`ASSIGNERS` and :data:`SUPPORT_JUDGES`.
Django-free: the answers app gives a machine plain data (``answers.machine.base``) and records what it says.

>>> ASSIGNERS.names, ASSIGNERS.default, DRAFTERS.names, SUPPORT_JUDGES.names
(('embedding', 'openai'), 'embedding', ('openai',), ('embedding', 'openai'))
"""

from __future__ import annotations

from judging.machine import JudgeKind, Judges
from workbench.formats.declarations import discovered

__all__ = ["ASSIGNERS", "DRAFTERS", "PACKAGE", "ROLES", "SUPPORT_JUDGES", "autodiscover", "table"]

PACKAGE = "answers.machine"


def _registry(what: str) -> Judges:
    made = Judges()
    made.what = what
    return made


#: the nugget drafters, the nugget assigners and the support judges, the default first
DRAFTERS = _registry("nugget drafter")
ASSIGNERS = _registry("nugget assigner")
SUPPORT_JUDGES = _registry("support judge")
#: each role, the name a module declares it under and its registry
ROLES = (("drafter", "DRAFTER", DRAFTERS), ("assigner", "ASSIGNER", ASSIGNERS),
         ("support judge", "SUPPORT", SUPPORT_JUDGES))


def autodiscover(package: str = PACKAGE) -> list[str]:
    """Import every module of ``package`` and register the ``DRAFTER``, ``ASSIGNER`` and ``SUPPORT`` each
    declares; the names registered (``drafter:NAME``, ``assigner:NAME``, ``support judge:NAME``). Calling it again
    changes nothing."""
    return [f"{role}:{registry.register(k).name}" for role, attribute, registry in ROLES
            for k in discovered(package, attribute, JudgeKind)]


def table() -> list[dict]:
    """The machines as the docs' table shows them: role, name, label, help, capabilities and options."""
    return [{"role": role, "name": k.name, "label": k.label, "help": k.help, "capabilities": k.capabilities(),
             "options": [{"name": p.name, "type": p.type, "default": p.default, "bounds": p.bounds(), "unit": p.unit,
                          "help": p.help} for p in k.options]}
            for role, _, registry in ROLES for k in registry]


autodiscover()

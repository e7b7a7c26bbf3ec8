"""The measure families declared in modules of their own (:mod:`evaluation.engine.families`), added to the
engine's tables (:mod:`evaluation.engine.spec`): each module declares ``MEASURE``, a
:class:`~evaluation.engine.spec.MeasureSpec` with its label, help, typed parameters and kernel.
:func:`autodiscover` registers them; it runs when the engine is first imported (the evaluator reads the
kernels here; Django-free callers need no app registry) and ``EvaluationConfig.ready()`` calls it too.
A registered family is a name ``trec_eval -m``, ``evaluate -m`` and the results pages' *Measures* accept,
and a row of the docs' measures table.
"""

from __future__ import annotations

from collections.abc import Callable

from evaluation.engine.spec import IR_MEASURES, NICKNAMES, ORDER, SPECS, MeasureSpec
from workbench.formats.declarations import discovered

__all__ = ["KERNELS", "PACKAGE", "autodiscover", "register", "table", "unregister"]


#: the package whose modules declare measure families added to the tables above (each a ``MEASURE``)
PACKAGE = "evaluation.engine.families"
#: the kernels of the declared families, by name (the engine's own kernels are in its kernel modules)
KERNELS: dict[str, Callable] = {}


def register(spec: MeasureSpec) -> MeasureSpec:
    """Add a declared family: requested by its name (``-m``, the pages' *Measures*), after the others in the
    output order, in ``all_ext`` when it is not trec_eval's, computed by its ``kernel``."""
    if spec.name in NICKNAMES or spec.name in IR_MEASURES or (spec.name in SPECS and SPECS[spec.name].kernel is None):
        raise ValueError(f"measure {spec.name!r} is already a name of the engine")
    if spec.kernel is None:
        raise ValueError(f"measure {spec.name!r} declares no kernel")
    SPECS[spec.name] = spec
    ORDER.setdefault(spec.name, len(ORDER))
    KERNELS[spec.name] = spec.kernel
    if not spec.trec and spec.name not in NICKNAMES["all_ext"]:
        NICKNAMES["all_ext"] = (*NICKNAMES["all_ext"], spec.name)
    return spec


def unregister(name: str) -> None:
    if name in KERNELS:
        SPECS.pop(name, None), ORDER.pop(name, None), KERNELS.pop(name, None)
        NICKNAMES["all_ext"] = tuple(n for n in NICKNAMES["all_ext"] if n != name)


def autodiscover(package: str = PACKAGE) -> list[str]:
    """Import every module of ``package`` and register the ``MEASURE`` each declares; the names registered.
    Calling it again changes nothing."""
    return [register(declared).name for declared in discovered(package, "MEASURE", MeasureSpec)]


def table() -> list[dict]:
    """Every measure family as the docs' table shows it: name, label, help, parameter syntax, defaults,
    summary, whether trec_eval has it, and each declared parameter's name, type, bounds and help."""
    return [{"name": s.name, "label": s.label, "help": s.help, "kind": s.kind, "default": s.default,
             "summary": s.summary, "trec": s.trec,
             "params": [{"name": p.name, "type": p.type, "min": p.min, "max": p.max, "bounds": p.bounds(),
                         "help": p.help} for p in s.params]}
            for s in SPECS.values()]


autodiscover()

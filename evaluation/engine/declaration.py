"""What a measure family is: :class:`MeasureSpec`, one object per family, declared once in
:mod:`evaluation.engine.families` (trec_eval's table in ``trec_eval.py``, the workbench's own in ``workbench.py``,
and one module per family added since). Parsing (:mod:`evaluation.engine.spec`), the engine, the docs' measures
reference and the leaderboard's measure choices all read these declarations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from workbench.formats.declarations import Param

__all__ = ["CUTS", "CUT_BASE", "CUT_DOUBLE", "CUT_LONG", "FLOAT", "LONG", "PAIRS", "PARAMS_DOUBLE", "RECALL_POINTS",
           "SINGLE", "STRING", "MeasureSpec"]

CUT_LONG, CUT_DOUBLE, PARAMS_DOUBLE, PAIRS, SINGLE = "cut_long", "cut_double", "params_double", "pairs", "single"
CUT_BASE = "cut_base"  # cut-offs and an optional log base ``b=B`` (dcg_jk_cut.10,b=3)
FLOAT, LONG, STRING = "float", "long", "string"

#: trec_eval's default cut-offs (``P``, ``recall``, ``ndcg_cut``...) and recall levels (``iprec_at_recall``)
CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)

#: how each parameter syntax is written, for a form's placeholder and the docs
SYNTAX = {CUT_LONG: "cut-offs, e.g. 10 or 5,10", CUT_DOUBLE: "levels, e.g. 0.5 or .1,.5",
          PARAMS_DOUBLE: "values, comma-separated", PAIRS: "key=value pairs, e.g. p=0.8",
          CUT_BASE: "cut-offs and an optional b=BASE, e.g. 10,b=3", SINGLE: ""}


@dataclass(frozen=True)
class MeasureSpec:
    """One measure family: parameter syntax, defaults, how it prints and how it aggregates.

    ``summary`` is ``mean`` (sum over topics / number of topics), ``sum`` (``num_*``), ``gm`` (geometric
    mean, per-topic values floored at 0.00001), ``num_q``, ``num_rel`` (sum; with ``-c`` the count of
    qrels lines with a positive grade, as 9.0.8 does), ``runid`` or ``none`` (per topic only).
    ``nicknames``: the trec_eval nicknames besides ``all_trec``/``all_ext`` that request it (``official``, ``set``).

    A family added in a module of its own also gives its ``params``
    (:class:`~workbench.formats.declarations.Param`: one for the values of ``P.5,10``, bounds checked on every
    request) and its ``kernel`` (``kernel(ctx, measure)``: one array of per-topic values per printed name, as the
    engine's kernels); the engine's own families are computed by its kernel modules (``kernel`` None).
    """

    name: str
    kind: str
    default: tuple = ()
    value: str = FLOAT
    summary: str = "mean"
    per_topic: bool = True
    trec: bool = True
    label: str = ""
    help: str = ""
    params: tuple[Param, ...] = ()
    kernel: Callable | None = field(default=None, repr=False, compare=False)
    nicknames: tuple[str, ...] = ()

    @property
    def takes_params(self) -> bool:
        """Whether a request may carry parameters (``P.10``); a single measure (``map``) takes none."""
        return self.kind != SINGLE

    @property
    def ranks_runs(self) -> bool:
        """Whether a leaderboard can rank runs by it: a real per-topic value averaged over the topics."""
        return self.value == FLOAT and self.per_topic and self.summary == "mean"

    def example(self) -> str:
        """The request its defaults make, as typed (``P.5,10,...``), or its name."""
        if not self.default:
            return self.name
        return f"{self.name}." + ",".join(f"{d:g}" if isinstance(d, float) else str(d) for d in self.default)

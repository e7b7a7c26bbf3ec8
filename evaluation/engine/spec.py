"""Measure names, parameters and defaults, parsed exactly like trec_eval 9.0.8 parses ``-m``.

A request is ``name`` or ``name.params`` (everything after the first ``.``). Parameter syntaxes, by measure
(trec_eval's ``meas_init.c``):

``long cut-offs`` (``P.5,10``)
    Comma-separated integers (``strtol``, so ``23.4`` is 23), sorted, positive, no duplicates; one printed
    value per cut-off, ``P_5``, ``P_10``.
``double cut-offs`` (``iprec_at_recall..1,.5``, ``Rprec_mult.0.5,2``)
    Comma-separated reals (``atof``), sorted, no duplicates; printed ``%3.2f``: ``iprec_at_recall_0.10``.
``double params`` (``utility.2,-1,0,0``, ``11pt_avg..25,.5``, ``relstring.20``, ``set_F.0.5``)
    Reals kept in the given order; the printed name is ``name_<params as typed>``.
``pairs`` (``ndcg.1=3,2=9``, ``rbp.p=0.8``)
    ``key=value`` pairs; printed ``name_<params as typed>``.

Nicknames: ``official`` (the default set), ``set``, ``all_trec``; ``all_ext`` names every measure this
workbench adds to trec_eval (see :mod:`evaluation.engine.kernels_ext`). When one measure is requested
several times, the first request that carries parameters wins (trec_eval's rule) and it is computed once.
Output order is trec_eval's table order, then the workbench's own measures, whatever the order of ``-m``.

>>> [m.names for m in parse_measures(["P.10,5", "map"])]
[('map',), ('P_5', 'P_10')]
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from evaluation.engine.declaration import (  # noqa: F401  (the names the engine's modules import from here)
    CUT_BASE,
    CUT_DOUBLE,
    CUT_LONG,
    FLOAT,
    LONG,
    PAIRS,
    PARAMS_DOUBLE,
    SINGLE,
    STRING,
    MeasureSpec,
)
from evaluation.engine.families import trec_eval, workbench

#: trec_eval 9.0.8's measure table (``measures.c``) in its order, the qrels/trec_results ones
TREC_SPECS: tuple[MeasureSpec, ...] = trec_eval.MEASURES
#: Measures the workbench adds (own names, never clashing with trec_eval's); see kernels_ext.
EXT_SPECS: tuple[MeasureSpec, ...] = workbench.MEASURES

SPECS = {s.name: s for s in TREC_SPECS + EXT_SPECS}
ORDER = {s.name: i for i, s in enumerate(TREC_SPECS + EXT_SPECS)}

#: trec_eval's nicknames, from what each family declares: ``official`` (the default), ``set``, ``all_trec``
#: (every trec_eval measure), and ``all_ext`` (every measure the workbench adds)
NICKNAMES = {
    "official": tuple(s.name for s in TREC_SPECS if "official" in s.nicknames),
    "set": tuple(s.name for s in TREC_SPECS if "set" in s.nicknames),
    "all_trec": tuple(s.name for s in TREC_SPECS),
    "all_ext": tuple(s.name for s in EXT_SPECS),
}


#: ir_measures' names (``nDCG@10``, ``P@5``, ``AP``, ``R@1000``) -> trec_eval requests; @k becomes ``.k``.
#: Each gives ir_measures' (0.4.3) value (``tests/engine/test_ir_measures_names.py`` compares every one):
#: ``Judged@k`` divides by min(k, retrieved) (the workbench's ``judged_min``); ``ERR@k`` is gdeval's, whose
#: highest grade is fixed at 4 (``err_gdeval_cut``; the workbench's own ``err_cut`` takes the qrels' highest).
#: Names ir_measures does not compute here (nERR, RBP without its cwl_eval provider) are not accepted.
IR_MEASURES = {"AP": "map", "nDCG": "ndcg", "P": "P", "R": "recall", "RR": "recip_rank", "Rprec": "Rprec",
               "Bpref": "bpref", "BPref": "bpref", "Judged": "judged_min", "Success": "success", "SetP": "set_P",
               "SetR": "set_recall", "SetF": "set_F", "NumRet": "num_ret", "NumRel": "num_rel",
               "NumRelRet": "num_rel_ret", "NumQ": "num_q", "ERR": "err_gdeval_cut", "infAP": "infAP",
               "IPrec": "iprec_at_recall"}
#: the ones whose @k is another measure's cut-off (AP@10 is map_cut.10, nDCG@10 ndcg_cut.10, RR@10 rr_cut.10)
_AT_K = {"AP": "map_cut", "nDCG": "ndcg_cut", "RR": "rr_cut"}
#: the names ir_measures only computes with a cut-off (``IPrec@0.5``: the recall level)
_NEED_AT = {"Success", "ERR", "Judged", "IPrec"}
#: the names that take one (the others refuse ``@``, as ir_measures does)
_TAKE_AT = {"AP", "nDCG", "P", "R", "RR", *_NEED_AT}


def from_ir_measures(request: str) -> str:
    """An ir_measures-style name as the trec_eval request it means; anything else unchanged.

    >>> [from_ir_measures(r) for r in ["nDCG@10", "P@5", "AP", "R@1000", "RR@10", "map", "ERR@20"]]
    ['ndcg_cut.10', 'P.5', 'map', 'recall.1000', 'rr_cut.10', 'map', 'err_gdeval_cut.20']
    """
    name, at, k = request.partition("@")
    if name not in IR_MEASURES or (not at and name in ("P", "R")):
        return request
    if not at:
        if name in _NEED_AT:
            raise UnknownMeasure(f"illegal measure '{request}': ir_measures' {name} needs a cut-off ({name}@10)")
        return IR_MEASURES[name]
    if name not in _TAKE_AT:
        raise UnknownMeasure(f"illegal measure '{request}': ir_measures' {name} takes no cut-off")
    return f"{_AT_K.get(name, IR_MEASURES[name])}.{k}"


class MeasureError(ValueError):
    """A measure request trec_eval would refuse: malformed parameters (trec_eval exits 2)."""

    exit_code = 2


class UnknownMeasure(MeasureError):
    """A measure or nickname trec_eval does not know (trec_eval exits 1)."""

    exit_code = 1


@dataclass(frozen=True)
class Measure:
    """A requested measure with its parsed parameters and the names it prints (one per value)."""

    spec: MeasureSpec
    params: tuple
    names: tuple[str, ...]
    raw: str | None = None

    @property
    def name(self) -> str:
        return self.spec.name


_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def _strtol(text: str) -> int:
    """C ``strtol(text, NULL, 10)``: leading blanks, sign, ASCII digits; anything after is ignored, and a
    value out of range is clamped to LONG_MIN / LONG_MAX, as C does."""
    s = text.lstrip()
    i = 1 if s[:1] in "+-" else 0
    j = i
    while j < len(s) and s[j] in "0123456789":
        j += 1
    return max(_LONG_MIN, min(_LONG_MAX, int(s[:j]))) if j > i else 0


def _atof(text: str) -> float:
    """C ``atof``: the longest prefix that is a number, 0.0 when there is none."""
    s = text.lstrip()
    for end in range(len(s), 0, -1):
        if "_" in s[:end]:
            continue
        try:
            value = float(s[:end])
        except ValueError:
            continue
        if s[:end].strip() == s[:end]:
            return value
    return 0.0


def _fmt_double(value: float) -> str:
    return f"{value:3.2f}"


def _single(spec: MeasureSpec, raw: str | None) -> Measure:
    return Measure(spec, (), (spec.name,), raw)


def _cut_long(spec: MeasureSpec, raw: str | None) -> Measure:
    cuts = tuple(sorted(_strtol(p) for p in raw.split(","))) if raw is not None else spec.default
    if cuts[0] <= 0:
        raise MeasureError(f"{spec.name}: negative cutoff detected")
    if len(set(cuts)) != len(cuts):
        raise MeasureError(f"{spec.name}: duplicate cutoffs detected")
    return Measure(spec, cuts, tuple(f"{spec.name}_{c}" for c in cuts), raw)


def _cut_double(spec: MeasureSpec, raw: str | None) -> Measure:
    cuts = tuple(sorted(_atof(p) for p in raw.split(","))) if raw is not None else spec.default
    if len(set(cuts)) != len(cuts):
        raise MeasureError(f"{spec.name}: duplicate cutoffs detected")
    return Measure(spec, cuts, tuple(f"{spec.name}_{_fmt_double(c)}" for c in cuts), raw)


def _params_double(spec: MeasureSpec, raw: str | None) -> Measure:
    values = tuple(_atof(p) for p in raw.split(",")) if raw is not None else spec.default
    if spec.name == "utility" and len(values) != 4:
        raise MeasureError("utility: improper number of coefficients (4 needed)")
    name = spec.name if raw is None else f"{spec.name}_{raw}"
    return Measure(spec, values, (name,), raw)


def _well_formed_pairs(raw: str) -> bool:
    """trec_eval's get_param_pairs check: separators alternate, never doubled, and the last one is '='."""
    last = ","
    for ch in raw:
        if ch in ",=":
            if ch == last:
                return False
            last = ch
    return last == "="


def _pairs(spec: MeasureSpec, raw: str | None) -> Measure:
    """name=value pairs: trec_eval's get_param_pairs validation, then name=atof(value)."""
    if raw is None:
        return Measure(spec, (), (spec.name,), raw)
    if not _well_formed_pairs(raw):
        raise MeasureError(f"malformed pair parameters in '{raw}'")
    pairs = []
    for item in raw.split(","):
        key, _, value = item.partition("=")
        pairs.append((key, _atof(value)))
    return Measure(spec, tuple(pairs), (f"{spec.name}_{raw}",), raw)


def _cut_base(spec: MeasureSpec, raw: str | None) -> Measure:
    """Cut-offs as for ``P`` plus an optional ``b=B`` (the log base, > 1; default 2). Params: (base, *cuts);
    names ``dcg_jk_cut_10`` (base 2) or ``dcg_jk_cut_b3_10``."""
    base, parts = 2.0, []
    for part in (raw.split(",") if raw is not None else []):
        if part.strip().startswith("b="):
            base = _atof(part.strip()[2:])
        else:
            parts.append(part)
    if not base > 1.0:
        raise MeasureError(f"{spec.name}: the log base b must be greater than 1")
    cut = _cut_long(spec, ",".join(parts) if parts else None)
    tag = "" if base == 2.0 else f"b{base:g}_"
    return Measure(spec, (base, *cut.params), tuple(f"{spec.name}_{tag}{c}" for c in cut.params), raw)


_BUILDERS = {SINGLE: _single, CUT_LONG: _cut_long, CUT_DOUBLE: _cut_double, PARAMS_DOUBLE: _params_double,
             PAIRS: _pairs, CUT_BASE: _cut_base}


def _build(spec: MeasureSpec, raw: str | None) -> Measure:
    if raw is not None and raw == "":
        raise MeasureError(f"improper measure in parameter '{spec.name}'")
    measure = _BUILDERS[spec.kind](spec, raw)
    if spec.params and spec.kind in (CUT_LONG, CUT_DOUBLE, PARAMS_DOUBLE):  # a declared family's bounds
        problems = [problem for v in measure.params if (problem := spec.params[0].problem(v))]
        if problems:
            raise MeasureError(f"measure '{spec.name}{'.' + raw if raw else ''}': {problems[0]}")
    return measure


def parse_measures(requests: list[str] | tuple[str, ...] | str | None) -> list[Measure]:
    """Parse trec_eval ``-m`` requests into measures in output order; ``None`` means ``official``.

    Raises :class:`MeasureError` naming the request trec_eval would reject.
    """
    if requests is None:
        requests = ["official"]
    elif isinstance(requests, str):
        requests = [requests]
    marked: set[str] = set()
    params: dict[str, str] = {}
    for request in (from_ir_measures(r) for r in requests):
        name, dot, raw = request.partition(".")
        if dot:
            if raw == "":
                raise UnknownMeasure(f"improper measure in parameter '{name}'")
            params.setdefault(name, raw)
        if name in NICKNAMES:
            marked.update(NICKNAMES[name])
        elif name in SPECS:
            marked.add(name)
        else:
            raise UnknownMeasure(f"illegal measure '{request}'")
    return [_build(SPECS[n], params.get(n)) for n in sorted(marked, key=ORDER.__getitem__)]


def iprec_cutoff(frac: float, num_rel: int) -> int:
    """trec_eval 9.0.8's recall cut-off in documents: ``(long) (frac * R + 0.9)`` (truncation)."""
    return math.trunc(frac * num_rel + 0.9)


"""The leaderboard's measure choice, generated from the measure families' declarations
(:mod:`evaluation.engine.families`): one row per chosen measure, a select of the families that rank runs (grouped
as trec_eval's and the workbench's own, each with its label) and, for a family that takes parameters
(``ndcg_cut.10``, ``rbp.p=0.8``), a typed input for them with the family's syntax as placeholder.

The query string carries rows as ``family`` and ``param`` pairs (``family=ndcg_cut&param=10``); the older
``m``/``measures`` requests (``ndcg_cut.10``) are still read. Whatever comes in is checked by the engine's parser,
from the same declarations (an unknown family or a malformed parameter is one line on the error page).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from evaluation.engine.declaration import SYNTAX
from evaluation.engine.spec import SPECS, from_ir_measures

__all__ = ["groups", "options", "requested", "rows", "syntax"]

#: blank rows under the chosen ones: a measure can be added without JavaScript
BLANK_ROWS = 1


def requested(query) -> list[str]:
    """The measures a query string asks for (``query``: a QueryDict), as trec_eval requests, in the given order:
    the ``family``/``param`` rows (a blank family is skipped), then ``m`` and ``measures``."""
    families, params = query.getlist("family"), query.getlist("param")
    found = []
    for i, family in enumerate(families):
        family = family.strip()
        given = params[i].strip() if i < len(params) else ""
        if family:
            found.append(f"{family}.{given}" if given else family)
    found += [m for m in query.getlist("m") if m.strip()]
    found += query.get("measures", "").replace(",", " ").split()
    return found


def groups(chosen: Sequence[str] = ()) -> list[dict]:
    """The select's option groups: each family a leaderboard can rank runs by (plus any other chosen one), with
    its label."""
    chosen_names = {_split(r)[0] for r in chosen}
    offered = [s for s in SPECS.values() if s.ranks_runs or s.name in chosen_names]

    def option(spec) -> dict:
        return {"name": spec.name, "label": spec.label or spec.name}

    typed = [{"name": n, "label": n} for n in sorted(chosen_names - set(SPECS))]  # a nickname or a typo: kept, the parser says what it is
    found = [{"label": "trec_eval's measures", "families": [option(s) for s in offered if s.trec]},
             {"label": "the workbench's own", "families": [option(s) for s in offered if not s.trec]}]
    return found + ([{"label": "as typed", "families": typed}] if typed else [])


def options(groups_: list[dict], selected: str) -> SafeString:
    """One row's ``<optgroup>``s with ``selected`` chosen, joined in Python: some fifty options in each of six
    rows cost a template loop about 9 ms per page, this well under one."""
    parts = []
    for group in groups_:
        parts.append(f'<optgroup label="{escape(group["label"])}">')
        parts += [f'<option value="{escape(f["name"])}"{" selected" if f["name"] == selected else ""}>'
                  f'{escape(f["label"])} ({escape(f["name"])})</option>' for f in group["families"]]
        parts.append("</optgroup>")
    return mark_safe("".join(parts))  # every value escaped above


@lru_cache(maxsize=256)
def _options(selected: str, typed: tuple[str, ...], known: tuple[str, ...]) -> SafeString:
    """:func:`options` of the offered families with ``selected`` chosen, kept per process (``typed``: chosen names
    that are no family; ``known``: the registered families, so a family registered later gives a new entry)."""
    return options(groups([*typed, selected] if selected else list(typed)), selected)


def syntax() -> dict[str, str]:
    """Each family's parameter syntax ("" for one that takes none), once per page for the rows' script: the
    options themselves stay bare (six rows of some fifty families each)."""
    return {s.name: SYNTAX.get(s.kind, "") if s.takes_params else "" for s in SPECS.values()}


def _split(request: str) -> tuple[str, str]:
    """``ndcg_cut.10`` -> (``ndcg_cut``, ``10``); an ir_measures name as its trec_eval request first."""
    try:
        request = from_ir_measures(request)
    except ValueError:
        pass  # refused by the parser, with its line, when the page evaluates it
    name, _, params = request.partition(".")
    return name, params


def rows(chosen: Sequence[str]) -> list[dict]:
    """One row per chosen measure (family and parameters as typed, the select's options) and ``BLANK_ROWS``
    empty ones."""
    found, offered = [], tuple(sorted({_split(r)[0] for r in chosen} - set(SPECS)))
    for request in chosen:
        name, params = _split(request)
        spec = SPECS.get(name)
        found.append({"family": name, "param": params, "takes_params": spec is None or spec.takes_params,
                      "syntax": SYNTAX.get(spec.kind, "") if spec else "",
                      "options": _options(name, offered, tuple(SPECS))})
    blank = {"family": "", "param": "", "takes_params": True, "syntax": "",
             "options": _options("", offered, tuple(SPECS))}
    return found + [blank] * BLANK_ROWS

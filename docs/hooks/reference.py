"""MkDocs hook: the reference pages generated from the code's declarations at build time.

The strategies table reads ``pooling.strategies.registry.STRATEGIES``, the judges table
``judging.machine.JUDGES`` and the measures table ``evaluation.engine.spec`` with the page lists of
``evaluation.measures``: all Django-free, so the build needs no database and no settings. The pages are
made in memory (``on_files``) and never written to ``docs/``. Each declaration is read defensively
(``getattr`` with a default), so a registry that gains an attribute (typed parameters, capabilities)
shows it without a change here, and one that lacks it shows a dash.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: the pages this hook adds to the site (docs path -> renderer name); tests/test_docs.py reads it
GENERATED = {
    "reference/strategies.md": "strategies_page",
    "reference/judges.md": "judges_page",
    "reference/measures.md": "measures_page",
}

#: the attributes of a parameter read, in order of preference, for each column of a parameter table
_PARAM_ATTRS = {
    "type": ("type", "kind", "annotation"),
    "default": ("default",),
    "help": ("help", "description", "label"),
    "low": ("min", "minimum", "ge", "gt", "low"),
    "high": ("max", "maximum", "le", "lt", "high"),
    "choices": ("choices", "allowed", "values"),
    "unit": ("unit", "units"),
}
_MISSING = object()


def _cell(value) -> str:
    """One table cell: a dash for nothing, pipes escaped, on one line."""
    if value is None or value == "" or value is _MISSING:
        return "–"
    text = value if isinstance(value, str) else str(value)
    return " ".join(text.replace("|", "\\|").split())


def _code(value) -> str:
    return "–" if value in (None, "", _MISSING) else f"`{_cell(value)}`"


def _yes(value) -> str:
    return "yes" if value else "–"


def _first(obj, names: Iterable[str], default=_MISSING):
    for name in names:
        value = obj.get(name, _MISSING) if isinstance(obj, Mapping) else getattr(obj, name, _MISSING)
        if value is not _MISSING:
            return value
    return default


def _type_name(value) -> str:
    if value is _MISSING or value is None:
        return ""
    return value if isinstance(value, str) else getattr(value, "__name__", str(value))


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _dataclass_params(declared) -> list[dict]:
    params = []
    for f in dataclasses.fields(declared):
        default = f.default if f.default is not dataclasses.MISSING else _MISSING
        if default is _MISSING and f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        meta = dict(f.metadata)
        params.append({"name": f.name, "type": _type_name(meta.get("type", f.type)), "default": default,
                       **{k: _first(meta, names) for k, names in _PARAM_ATTRS.items() if k not in ("type", "default")}})
    return params


def _pydantic_params(declared) -> list[dict]:
    params = []
    for name, info in declared.model_fields.items():
        bounds = {type(m).__name__.lower(): next(iter(vars(m).values()), None) for m in info.metadata
                  if hasattr(m, "__dict__") and vars(m)}
        default = info.default if not info.is_required() else _MISSING
        params.append({"name": name, "type": _type_name(info.annotation), "default": default,
                       "help": info.description or "", "low": _first(bounds, ("ge", "gt")),
                       "high": _first(bounds, ("le", "lt")), "choices": _MISSING, "unit": _MISSING})
    return params


def parameters_of(declared) -> list[dict]:
    """The parameters a declaration offers, as dicts of name, type, default, help, low, high, choices, unit.

    ``declared`` may be a dataclass (class or instance), a pydantic model class, a mapping of name to a
    parameter object (or to its default), or an iterable of parameter objects that have a ``name``.
    """
    if declared is None or declared is _MISSING:
        return []
    if dataclasses.is_dataclass(declared):
        return _dataclass_params(declared)
    if hasattr(declared, "model_fields"):
        return _pydantic_params(declared)
    items = declared.items() if isinstance(declared, Mapping) else ((getattr(p, "name", None), p) for p in declared)
    params = []
    for name, param in items:
        if param is None or isinstance(param, (str, int, float, bool)):
            params.append({"name": name, "type": type(param).__name__ if param is not None else "",
                           "default": param, **{k: _MISSING for k in ("help", "low", "high", "choices", "unit")}})
            continue
        row = {key: _first(param, names) for key, names in _PARAM_ATTRS.items()}
        row["name"], row["type"] = name, _type_name(row["type"])
        bounds = getattr(param, "bounds", None)
        row["words"] = bounds() if callable(bounds) else ""  # the declaration's own words ("above 0")
        params.append(row)
    return params


def _bounds(param: dict) -> str:
    if param.get("words"):
        return _cell(param["words"])
    choices = param["choices"]
    if choices not in (None, _MISSING) and len(choices):
        names = [getattr(c, "name", c[0] if isinstance(c, tuple) else c) for c in choices]
        return "one of " + ", ".join(f"`{n}`" for n in names)
    low, high = param["low"], param["high"]
    if low in (None, _MISSING) and high in (None, _MISSING):
        return "–"
    return f"{'' if low in (None, _MISSING) else low} … {'' if high in (None, _MISSING) else high}".strip()


def parameter_table(params: list[dict]) -> str:
    rows = [[f"`{p['name']}`", _cell(p["type"]), _code(p["default"]), _bounds(p), _cell(p["unit"]), _cell(p["help"])]
            for p in params]
    return _table(["parameter", "type", "default", "allowed", "unit", "meaning"], rows)


def _declared_params(obj):
    return _first(obj, ("params", "parameters", "Params", "param_class", "params_class"), None)


#: capabilities a strategy may declare as boolean attributes, with the words the table uses
_CAPABILITIES = {"adaptive": "adaptive", "needs_corpus": "needs the corpus", "samples": "samples",
                 "stops": "stops topics", "splits_by_topic": "splits by topic"}


def _capabilities(strategy) -> str:
    """The capabilities a strategy declares: its ``capabilities()`` if it has one, else its boolean flags."""
    declared = getattr(strategy, "capabilities", None)
    names = declared() if callable(declared) else [c for c in _CAPABILITIES if getattr(strategy, c, False)]
    return ", ".join(_CAPABILITIES.get(n, n.replace("_", " ")) for n in names) or "–"


def strategies_page() -> str:
    from pooling.strategies import registry

    strategies = list(registry.STRATEGIES.values())
    rows = []
    for s in strategies:
        params = parameters_of(_declared_params(s))
        rows.append([f"`{s.name}`", _cell(getattr(s, "label", "")), _capabilities(s),
                     ", ".join(f"`{p['name']}`" for p in params) or "–", _cell(getattr(s, "help", ""))])
    parts = [
        "# Pooling strategies\n\n",
        "Generated when the site is built, from `pooling.strategies.registry.STRATEGIES`: every strategy a pool ",
        "can be built with, in the order the pool form and `build_pool --strategy` offer them. *Adaptive* pools ",
        "grow one judged document at a time (the judging queue asks the pool for its next document); ",
        "*samples*: the pool may draw a random sample (recall estimates); *stops topics*: stopping rules end a ",
        "topic's judging; *splits by topic*: a build may be split into parts any worker runs; ",
        "*needs the corpus* means the strategy reads the documents' text, so the documents must be imported ",
        "(or used by reference) first.\n\n",
        _table(["name", "label", "capabilities", "parameters", "what it does"], rows),
        "\nBesides a strategy's own parameters, every build takes the common options of `build_pool` ",
        "(`--depth`, `--budget` or `--total-budget`, `--runs`, `--runs-per-team`, `--seed`, `--order`, `--name`); ",
        "see the [organizer's guide](../organizer.md#build-a-pool).\n",
    ]
    for s in strategies:
        params = parameters_of(_declared_params(s))
        if params:
            parts += [f"\n## `{s.name}`: {_cell(getattr(s, 'label', ''))}\n\n", parameter_table(params)]
    return "".join(parts)


def _judge_items() -> list:
    from judging import machine

    judges = machine.JUDGES
    items = list(judges.values()) if isinstance(judges, Mapping) else list(judges)
    default = getattr(judges, "default", None)
    return [(item, item.name == default) for item in items]


def _judge_class(name: str):
    from judging import machine

    try:
        return machine.judge_class(name)
    except Exception:  # a registry without classes (or a renamed helper): the table says less, nothing breaks
        return None


#: what a judge may declare it needs, with the words the table uses
_JUDGE_NEEDS = {"needs_network": "an endpoint (network)", "needs_text": "the documents' text"}


def _judge_capabilities(judge) -> str:
    return ", ".join(words for name, words in _JUDGE_NEEDS.items() if getattr(judge, name, False)) or "–"


def judges_page() -> str:
    rows, sections = [], []
    for judge, is_default in _judge_items():
        cls = _judge_class(judge.name)
        declared = _declared_params(judge)
        params = parameters_of(declared if declared is not None else _declared_params(cls))
        rows.append([f"`{judge.name}`" + (" (default)" if is_default else ""), _cell(getattr(judge, "label", "")),
                     ", ".join(f"`{p['name']}`" for p in params) or "–", _judge_capabilities(judge),
                     _cell(getattr(judge, "help", ""))])
        if params:
            sections += [f"\n## `{judge.name}`\n\n", parameter_table(params)]
    return "".join([
        "# Machine judges\n\n",
        "Generated when the site is built, from `judging.machine.JUDGES`: the judges a machine assessor can be ",
        "made of (`manage.py machine_judge SLUG --judge NAME --kind KIND`, or *Judging → Machine assessors*). ",
        "A machine assessor's verdicts are ordinary judgment records with their provenance; they count only ",
        "under the machine qrels policies.\n\n",
        _table(["kind", "label", "parameters", "needs", "what it does"], rows),
        *sections,
        "\nWhich endpoints an `openai` judge may call is the deployment's choice (`JUDGE_ENDPOINTS`, see ",
        "[Deployment](../deployment.md#machine-judge-endpoints)).\n",
        *_answer_machines(),
    ])


def _answer_machines() -> list[str]:
    """The answers' nugget drafters, assigners and support judges (``answers.machine``, Django-free), declared like
    the judges."""
    from answers.machine import ROLES

    rows, sections = [], []
    for role, _, registry in ROLES:
        for kind in registry:
            params = parameters_of(kind.options)
            rows.append([role, f"`{kind.name}`", _cell(kind.label), _judge_capabilities(kind), _cell(kind.help)])
            if params:
                sections += [f"\n### {role} `{kind.name}`\n\n", parameter_table(params)]
    return ["\n## Answers: nugget drafters and assigners\n\n",
            "Generated from `answers.machine.DRAFTERS`, `ASSIGNERS` and `SUPPORT_JUDGES`. A drafter proposes a topic's ",
            "nuggets from its judged relevant segments (*Draft with machine* on a nugget bank); an assigner labels each ",
            "nugget of a bank support, partial_support or not_support for an answer, as a machine assessor; a support ",
            "judge labels each citation of a support pool (the sentence against the segment it cites) full_support, ",
            "partial_support or no_support, as a machine assessor.\n\n",
            _table(["role", "kind", "label", "needs", "what it does"], rows), *sections]


_KIND_SYNTAX = {
    "single": "none",
    "cut_long": "cut-offs (integers)",
    "cut_double": "levels (reals)",
    "params_double": "reals, in order",
    "pairs": "`key=value` pairs",
    "cut_base": "cut-offs, optional log base `b=B`",
}


def _default_params(spec) -> str:
    default = getattr(spec, "default", ())
    if not default:
        return "–"
    return "`" + ",".join(f"{d:g}" if isinstance(d, float) else str(d) for d in default) + "`"


def _on_pages(name: str, lists: dict[str, list[str]]) -> str:
    where = [label for label, measures in lists.items() if any(m.split(".")[0] == name for m in measures)]
    return ", ".join(where) or "–"


def _syntax(spec) -> str:
    """How a measure's parameters are written, with the bounds its declaration gives them."""
    words = _KIND_SYNTAX.get(getattr(spec, "kind", ""), _cell(getattr(spec, "kind", "")))
    bounds = [f"`{p.name}` {p.bounds()}" for p in getattr(spec, "params", ()) or () if callable(getattr(p, "bounds", None))]
    return words + (" (" + "; ".join(_cell(b) for b in bounds) + ")" if bounds else "")


def _measure_table(specs: list, lists: dict[str, list[str]]) -> str:
    """One row per declared family: its name, syntax, defaults, summary, the pages that use it, its meaning (the
    declaration's help, else its label)."""
    rows = [[f"`{s.name}`", _syntax(s),
             _default_params(s), _cell(getattr(s, "summary", "")), _on_pages(s.name, lists),
             _cell(_first(s, ("help", "description", "label"), "") or "–")] for s in specs]
    return _table(["measure", "parameters", "default", "summary", "on the pages", "meaning"], rows)


def measures_page() -> str:
    from evaluation import measures
    from evaluation.engine import spec

    lists = {"default columns": list(measures.DEFAULT_MEASURES), "robust columns": list(measures.ROBUST_MEASURES),
             "every page": list(measures.BASE_MEASURES)}
    specs = list(spec.SPECS.values())
    trec = [s for s in specs if getattr(s, "trec", True)]
    own = [s for s in specs if not getattr(s, "trec", True)]
    aliases = [[f"`{name}`", f"`{request}`"] for name, request in spec.IR_MEASURES.items()]
    nicknames = [[f"`{name}`", ", ".join(f"`{m}`" for m in members)] for name, members in spec.NICKNAMES.items()]
    return "".join([
        "# Measures\n\n",
        "Generated when the site is built, from the measure families' declarations (`evaluation/engine/families/`: ",
        "`trec_eval.py`, `workbench.py` and one module per family added since) and ",
        "`evaluation.measures` (what the pages compute). A measure is requested as trec_eval's `-m` does: ",
        "`name` or `name.params` (`P.5,10`, `ndcg_cut.10`, `rbp.p=0.8`), in `manage.py trec_eval`, ",
        "`manage.py evaluate`, `manage.py compare` and the results pages' *Measures* field. ",
        "*Summary* is how the per-topic values are aggregated (`mean`, `sum`, `gm`: geometric mean); ",
        "*on the pages* says where the results pages use the measure without being asked.\n\n",
        f"## trec_eval's measures ({len(trec)})\n\n",
        "Values equal trec_eval 9.0.8's, named and printed as it does.\n\n",
        _measure_table(trec, lists),
        f"\n## The workbench's own measures ({len(own)})\n\n",
        "Names of their own, never clashing with trec_eval's (`-m all_ext` requests them all). Formulas and ",
        "references in full are in the docstrings of `evaluation/engine/kernels_ext.py`, `kernels_textbook.py` ",
        "and `kernels_families.py`.\n\n",
        _measure_table(own, lists),
        "\n## Nicknames\n\n",
        _table(["nickname", "measures"], nicknames),
        "\n## ir_measures' names\n\n",
        "`nDCG@10`, `P@5`, `AP` and the like are accepted too and give ir_measures' (0.4.3) values; ",
        "`@k` becomes the cut-off (`AP@10` is `map_cut.10`, `nDCG@10` is `ndcg_cut.10`, `RR@10` is `rr_cut.10`).\n\n",
        _table(["ir_measures name", "request"], aliases),
    ])


def render(src_uri: str) -> str:
    return globals()[GENERATED[src_uri]]()


def on_files(files, config):
    from mkdocs.structure.files import File

    for src_uri in GENERATED:
        files.append(File.generated(config, src_uri, content=render(src_uri)))
    return files

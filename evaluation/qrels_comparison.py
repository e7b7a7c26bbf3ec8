"""Two qrels variants of a collection compared (``evaluation.engine.qrels_compare`` computes): each side is a
qrels policy (``human``, ``machine``, ...), one assessor's or machine judge's grades (``assessor:NAME``, or
the judge's name), or, from the command, a qrels file. The runs are the collection's."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from evaluation import scoring
from evaluation.engine.qrels_compare import QrelsComparison, compare_qrels
from evaluation.scoring import MAX_DEPTH, EvaluationError
from judging.models import MachineJudge
from judging.policies import POLICIES
from judging.qrels import assessor_names, qrels
from workbench.formats import FormatError, read_qrels
from workbench.models import Collection

__all__ = ["Side", "compare_sides", "comparison_text", "side_qrels"]


@dataclass(frozen=True)
class Side:
    name: str
    label: str
    qrels: pd.DataFrame
    #: one assessor's or judge's own grades: organizers only on the pages
    private: bool


def _assessor(collection: Collection, name: str) -> str | None:
    """The assessor ``name`` stands for: a machine judge's user, a human assessor's name, or None."""
    if name.startswith("assessor:"):
        return name.split(":", 1)[1]
    judge = MachineJudge.objects.filter(collection=collection, name=name).select_related("user").first()
    if judge is not None:
        return judge.user.username
    return name if name in assessor_names(collection) else None


def side_qrels(collection: Collection, name: str, *, files: bool = False) -> Side:
    """The qrels ``name`` stands for (a policy, an assessor or machine judge, or with ``files`` a qrels file);
    ``EvaluationError`` saying what it may be otherwise."""
    name = (name or "").strip()
    if any(ord(c) < 32 or ord(c) == 127 for c in name) or len(name) > 1000:
        raise EvaluationError("a qrels name holds no control character and at most 1000 characters")
    if name in POLICIES.names:
        return Side(name, f"{POLICIES.label(name)} qrels", qrels(collection, policy=name), False)
    assessor = _assessor(collection, name) if name else None
    if assessor is not None:
        return Side(name, f"{assessor}'s grades", qrels(collection, assessor=assessor), True)
    if files and name and Path(name).is_file():
        try:
            frame = read_qrels(name)
        except FormatError as exc:
            raise EvaluationError(str(exc)) from None
        return Side(name, Path(name).name, frame.astype({"qid": str}), False)
    what = "a qrels file, " if files else ""
    raise EvaluationError(f"{name!r} is not {what}a qrels policy ({', '.join(POLICIES.names)}), a machine judge or an "
                          f"assessor of collection {collection.slug!r}")


def compare_sides(collection: Collection, a: Side, b: Side, *, measure: str = "map") -> QrelsComparison:
    for side in (a, b):
        if side.qrels.empty:
            raise EvaluationError(f"{side.name}: no judgments to compare")
    runs = scoring.frames(collection)
    if len(runs) < 2:
        raise EvaluationError(f"collection {collection.slug!r} has fewer than two runs to rank")
    result = compare_qrels(a.qrels, b.qrels, runs, measure=measure, relevant_from=collection.relevant_from,
                           grades=collection.grades, max_depth=MAX_DEPTH)
    result.labels.update(a=a.name, b=b.name, a_label=a.label, b_label=b.label)
    return result


def _figure(value, digits: int = 3) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def comparison_text(result: QrelsComparison) -> str:
    """The comparison as lines of text (the command's ``--format text``)."""
    labels, rankings = result.labels, result.rankings
    lines = [f"A: {labels['a_label']} ({labels['pairs_a']} pairs); B: {labels['b_label']} ({labels['pairs_b']} "
             f"pairs); {labels['shared']} pairs judged by both on {labels['topics']} topics",
             f"kappa binary {_figure(labels['kappa_binary'])}, graded (linear) {_figure(labels['kappa_graded'])}; "
             f"share relevant A {_figure(labels['relevant_a'])}, B {_figure(labels['relevant_b'])}",
             f"{rankings.get('runs', 0)} runs by {rankings.get('measure', 'map')} on {rankings.get('topics', 0)} topics: "
             f"Kendall's tau {_figure(rankings['tau'])}, tau_AP {_figure(rankings['tau_ap'])}, top-"
             f"{rankings['top']} tau {_figure(rankings['tau_top'])}"]
    pairs = rankings.get("pairs", [])
    lines.append(f"{len(pairs)} pairs significant under one qrels and swapped or tied under the other"
                 + (":" if pairs else ""))
    lines += [f"  {p['better']} > {p['worse']} under {p['significant_under']}, {p['other']} under "
              f"{'B' if p['significant_under'] == 'A' else 'A'}" for p in pairs]
    return "\n".join(lines)

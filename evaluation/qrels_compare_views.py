"""The Compare qrels page (Results -> Compare qrels): two qrels variants' label agreement and the rankings of
the runs they give, drawn against each other as a slope chart (inline SVG, made here on the server).

Anyone who may see the collection's results may compare its qrels policies; one assessor's or machine judge's
own grades are for its organizers."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.html import escape
from django.utils.safestring import mark_safe

from evaluation import selectors
from evaluation.access import results_view
from evaluation.qrels_comparison import compare_sides, side_qrels
from evaluation.scoring import EvaluationError
from judging.models import MachineJudge
from judging.policies import HUMAN, MACHINE
from workbench.collections.selectors import may_organize

__all__ = ["compare_qrels_page", "slope_chart"]

#: most runs the chart draws (the first by A); the table lists them all
CHART_RUNS = 60
_ROW, _TOP, _LEFT, _RIGHT, _WIDTH = 20, 36, 134, 226, 360


def _name(text: str, length: int = 18) -> str:
    return escape(text if len(text) <= length else text[: length - 1] + "…")


def slope_chart(systems: list[dict], a: str, b: str) -> str:
    """The runs' ranks under A (left) and B (right), a line each: blue where B ranks the run higher, orange
    lower, grey the same. Scales to its box's width (390 px phones included)."""
    shown = systems[:CHART_RUNS]
    height = _TOP + _ROW * len(shown) + 8
    ranks_b = sorted(s["rank_b"] for s in shown)
    place_b = {rank: i for i, rank in enumerate(ranks_b)}  # the shown runs' order under B, from 0
    parts = [f'<svg class="slope" viewBox="0 0 {_WIDTH} {height}" width="100%" role="img" '
             f'aria-label="The runs ranked under {escape(a)} (left) and under {escape(b)} (right)" '
             f'style="max-width:480px;font:12px sans-serif">',
             f'<text x="{_LEFT}" y="14" text-anchor="end" font-weight="bold">{_name(a, 22)}</text>',
             f'<text x="{_RIGHT}" y="14" font-weight="bold">{_name(b, 22)}</text>']
    for i, s in enumerate(shown):
        y1, y2 = _TOP + _ROW * i, _TOP + _ROW * place_b[s["rank_b"]]
        colour = "#1f5fbf" if y2 < y1 else "#d9822b" if y2 > y1 else "#9aa3b2"
        title = escape(f"{s['run']}: {s['a']:.4f} (rank {s['rank_a']}) under A, {s['b']:.4f} (rank {s['rank_b']}) "
                       f"under B")
        parts.append(f'<g><title>{title}</title>'
                     f'<line x1="{_LEFT + 4}" y1="{y1 - 4}" x2="{_RIGHT - 4}" y2="{y2 - 4}" stroke="{colour}" '
                     f'stroke-width="1.6"/>'
                     f'<text x="{_LEFT}" y="{y1}" text-anchor="end">{s["rank_a"]}. {_name(s["run"])}</text>'
                     f'<text x="{_RIGHT}" y="{y2}">{s["rank_b"]}. {_name(s["run"])}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


def _choices(collection, organizer: bool) -> list[tuple[str, str]]:
    options = [(p.name, p.label) for p in selectors.offered_policies(collection)]
    if organizer:
        options += [(j, f"machine judge {j}") for j in
                    MachineJudge.objects.filter(collection=collection).values_list("name", flat=True)]
        options += [(f"assessor:{n}", f"assessor {n}") for n in selectors.assessor_names(collection)]
    return options


@results_view()
def compare_qrels_page(request: HttpRequest, collection) -> HttpResponse:
    organizer = may_organize(request.user, collection)
    a_name, b_name = request.GET.get("a", HUMAN), request.GET.get("b", MACHINE)
    measure = request.GET.get("measure", "map").strip() or "map"
    context = {"collection": collection, "organizer": organizer, "a": a_name, "b": b_name, "measure": measure,
               "choices": _choices(collection, organizer), "result": None, "error": ""}
    if "a" in request.GET and "b" in request.GET:
        try:
            a, b = side_qrels(collection, a_name), side_qrels(collection, b_name)
            if (a.private or b.private) and not organizer:
                raise PermissionDenied("One assessor's own grades are for the collection's organizers.")
            result = compare_sides(collection, a, b, measure=measure)
        except (EvaluationError, ValueError) as exc:
            context["error"] = str(exc).splitlines()[0] if str(exc) else "these qrels cannot be compared"
            return render(request, "evaluation/compare_qrels.html", context, status=400)
        context["result"] = result
        context["chart"] = mark_safe(slope_chart(result.rankings["systems"], a.label, b.label))  # noqa: S308
        context["more_runs"] = max(0, len(result.rankings["systems"]) - CHART_RUNS)
    return render(request, "evaluation/compare_qrels.html", context)

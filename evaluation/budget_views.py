"""The budget planner's page (organizers): the latest plan, computed by a background job, and the form that
starts one."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from evaluation.access import results_view
from evaluation.tasks import plan_budget
from workbench import jobs
from workbench.models import Collection, Job

KIND = "budget plan"
WIDTH, HEIGHT = 560, 220


class PlanForm(forms.Form):
    planned = forms.IntegerField(min_value=1, required=False,
                                 help_text="The final number of judgments (default: the size of the pools).")
    per_hour = forms.FloatField(min_value=0.1, required=False, label="Judgments per hour per assessor",
                                help_text="Default: the assessors' measured median.")
    cost_per_hour = forms.FloatField(min_value=0, required=False, label="Cost of an assessor hour")


def _fitted(plan: dict, top: int) -> list[dict]:
    """The fitted path, τ of the ranking after n judgments with the one at the planned budget (1 - c·(n^-b -
    N^-b)), from the first depth's judgments to the planned budget."""
    fit, planned = plan.get("fit"), plan["planned"]
    first = min((row["judgments"] for row in plan["curve"] if row["judgments"]), default=0)
    if not fit or not first or planned <= first:
        return []
    c, b = fit["c"], fit["b"]
    steps = [first + (planned - first) * k / 40 for k in range(41)]
    return [{"judgments": n, "fit": 1 - c * (n ** -b - planned ** -b)} for n in steps if n <= top]


def _plot(plan: dict) -> dict:
    """SVG coordinates of τ, τ of the top 10, the fitted path and the 0.9 line against judgments (x from 0 to the
    planned budget), with the planned budget and the judgments to τ ≥ 0.9 as vertical lines. Labels are anchored
    inside the frame; the SVG scales to the page's width (viewBox)."""
    curve, planned = plan["curve"], plan["planned"]
    top = max([planned] + [row["judgments"] for row in curve]) or 1

    def x(n: float) -> float:
        return round(40 + (WIDTH - 50) * n / top, 1)

    def points(rows: list[dict], key: str) -> str:
        return " ".join(f"{x(row['judgments'])},{10 + (HEIGHT - 40) * (1 - row[key]):.1f}"
                        for row in rows if row.get(key) is not None and row[key] >= 0)

    to_tau = plan.get("judgments_to_tau_0_9")
    return {"tau": points(curve, "tau"), "tau_top10": points(curve, "tau_top10"),
            "fit": points(_fitted(plan, top), "fit"), "width": WIDTH, "height": HEIGHT,
            "line_y": 10 + (HEIGHT - 40) * 0.1, "right": WIDTH - 10, "bottom": HEIGHT - 30, "top": top,
            "planned_x": x(planned), "to_tau_x": x(to_tau) if to_tau else None}


@results_view(organizers_only=True)
def budget(request: HttpRequest, collection: Collection) -> HttpResponse:
    form = PlanForm(request.POST or None)
    if request.method == "POST":
        if form.is_valid():
            params = {k: v for k, v in form.cleaned_data.items() if v is not None}
            job = jobs.job_start(plan_budget, kind=KIND, user=request.user, collection=collection, params=params)
            return redirect("job", job_id=job.pk)
        messages.error(request, "; ".join(f"{form.fields[f].label or f}: {' '.join(e)}" for f, e in form.errors.items()))
    latest = (Job.objects.filter(collection=collection, kind=KIND, status=Job.Status.DONE)
              .order_by("-finished_at", "-pk").first())
    plan = latest.result.get("plan") if latest else None
    return render(request, "evaluation/budget.html", {
        "collection": collection, "form": form, "job": latest, "plan": plan,
        "to_tau": plan.get("judgments_to_tau_0_9") if plan else None,
        "cost": latest.result.get("cost") if latest else None,
        "plot": _plot(plan) if plan and plan["curve"] else None},
        status=400 if form.errors else 200)

"""The budget planner's page (organizers): the latest plan, computed by a background job, and the form that
starts one."""

from __future__ import annotations

import math

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from evaluation.access import results_view
from evaluation.tasks import plan_budget
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection, Job

KIND = "budget plan"
WIDTH, HEIGHT = 440, 270


class PlanForm(forms.Form):
    planned = forms.IntegerField(min_value=1, required=False,
                                 help_text="The final number of judgments (default: the size of the pools).")
    per_hour = forms.FloatField(min_value=0.1, required=False, label="Judgments per hour per assessor",
                                help_text="Default: the assessors' measured median.")
    cost_per_hour = forms.FloatField(min_value=0, required=False, label="Cost of an assessor hour")


def _fitted(plan: dict, top: float) -> list[dict]:
    """The fitted path, τ of the ranking after n judgments with the one at the planned budget (1 - c·(n^-b -
    N^-b)), from the first depth's judgments to the right edge of the chart."""
    fit, planned = plan.get("fit"), plan["planned"]
    first = min((row["judgments"] for row in plan["curve"] if row["judgments"]), default=0)
    if not fit or not first or top <= first:
        return []
    c, b = fit["c"], fit["b"]
    return [{"judgments": n, "fit": 1 - c * (n ** -b - planned ** -b)}
            for n in (first + (top - first) * k / 60 for k in range(61))]


def _step(span: float, count: int = 4) -> float:
    """A round tick step (1, 2 or 5 times a power of ten) giving about ``count`` ticks over ``span``."""
    raw = max(span / count, 1e-9)
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


class _Frame:
    """The chart's scales: judgments 0..``top`` to x, τ ``low``..1 to y, inside the margins of the viewBox."""

    left, right, upper, bottom = 64, WIDTH - 14, 14, HEIGHT - 50

    def __init__(self, top: float, low: float) -> None:
        self.top, self.low = top, low

    def x(self, n: float) -> float:
        return round(self.left + (self.right - self.left) * min(n, self.top) / self.top, 1)

    def y(self, t: float) -> float:
        return round(self.upper + (self.bottom - self.upper) * (1 - t) / (1 - self.low), 1)

    def points(self, rows: list[dict], key: str) -> list[tuple[float, float]]:
        return [(self.x(row["judgments"]), self.y(row[key])) for row in rows
                if row.get(key) is not None and row[key] >= self.low]

    def ticks(self) -> tuple[list[dict], list[dict]]:
        """Round judgments along x (the last label anchored inside the frame) and τ in steps of 0.1 or 0.25."""
        step, tau_step = _step(self.top), 0.1 if 1 - self.low <= 0.6 else 0.25
        x_ticks = [{"x": self.x(n), "label": f"{n:,.0f}", "anchor": "end" if self.x(n) > self.right - 20 else "middle"}
                   for n in (k * step for k in range(int(self.top // step) + 1))]
        y_ticks = [{"y": self.y(1 - k * tau_step), "label": f"{1 - k * tau_step:.2f}".rstrip("0").rstrip(".")}
                   for k in range(int(round((1 - self.low) / tau_step)) + 1)]
        return x_ticks, y_ticks


def _plot(plan: dict) -> dict:
    """SVG coordinates (a viewBox the page scales to its width, labels kept inside it) of τ and τ of the top 10
    against judgments, the fitted path, its 5–95% interval of the judgments for τ ≥ 0.9 as a band, and the planned
    budget and the judgments to τ ≥ 0.9 as vertical lines; x from 0 to the largest of these, y from the lowest τ."""
    curve, planned, to_tau = plan["curve"], plan["planned"], plan.get("judgments_to_tau_0_9")
    interval = plan.get("interval") or []
    top = max([planned, to_tau or 0] + [row["judgments"] for row in curve]) or 1
    taus = [row[k] for row in curve for k in ("tau", "tau_top10") if row.get(k) is not None]
    f = _Frame(top, max(-1.0, min([0.5] + [math.floor(t * 10) / 10 for t in taus])))
    x_ticks, y_ticks = f.ticks()
    tau, top10 = f.points(curve, "tau"), f.points(curve, "tau_top10")
    return {"width": WIDTH, "height": HEIGHT, "left": f.left, "right": f.right, "upper": f.upper, "bottom": f.bottom,
            "middle": (f.left + f.right) / 2, "middle_y": (f.upper + f.bottom) / 2, "plot_height": f.bottom - f.upper,
            "x_ticks": x_ticks, "y_ticks": y_ticks, "line_y": f.y(0.9),
            "tau": " ".join(f"{a},{b}" for a, b in tau), "tau_dots": tau,
            "tau_top10": " ".join(f"{a},{b}" for a, b in top10), "top10_dots": top10,
            "fit": " ".join(f"{a},{b}" for a, b in f.points(_fitted(plan, top), "fit")),
            "planned_x": f.x(planned), "planned": planned, "to_tau_x": f.x(to_tau) if to_tau else None,
            "band": (f.x(interval[0]), f.x(interval[1]) - f.x(interval[0])) if len(interval) == 2 else None}


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

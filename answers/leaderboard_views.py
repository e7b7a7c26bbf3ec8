"""Results -> Answers: the answer runs' leaderboard (the four nugget scores, citation support and coverage,
flags), with CSV and JSON exports of every answer's line and every run's. Who may see a collection's results
may see it (``evaluation.access.results_view``); reads only."""

from __future__ import annotations

import math

import pandas as pd
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from answers.models import NuggetAssignment
from answers.scores import COLUMNS, SCORES, answer_scores, run_means
from answers.significance import ALPHA, versus_best
from evaluation.access import results_view
from workbench.collections.selectors import may_organize
from workbench.models import Collection

SORTS = (*SCORES, "support_precision", "support_recall", "citation_coverage")


def _records(frame: pd.DataFrame) -> list[dict]:
    def clean(value):
        if isinstance(value, float) and math.isnan(value):
            return None
        return value.item() if hasattr(value, "item") else value
    return [{k: clean(v) for k, v in row.items()} for row in frame.to_dict("records")]


def _csv(frame: pd.DataFrame, name: str) -> HttpResponse:
    response = HttpResponse(frame.to_csv(index=False), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


@results_view()
def answer_leaderboard(request: HttpRequest, collection: Collection) -> HttpResponse:
    assessors = sorted(set(NuggetAssignment.objects.filter(collection=collection).values_list("assessor", flat=True)))
    assessor = request.GET.get("assessor") or None
    if assessor is not None and assessor not in assessors:
        assessor = None
    sort = request.GET.get("sort") if request.GET.get("sort") in SORTS else "all_score"
    frame = answer_scores(collection, assessor=assessor)
    means = run_means(frame)
    teams = dict(collection.answer_runs.values_list("tag", "team"))
    means = means.assign(team=means["run"].map(teams)).sort_values([sort, "run"], ascending=[False, True],
                                                                     na_position="last")
    export = request.GET.get("_export")
    if export == "json":
        return JsonResponse({"collection": collection.slug, "assessor": assessor, "runs": _records(means),
                             "answers": _records(frame)})
    if export == "csv":
        lines = pd.concat([frame, means[[*COLUMNS, "topics"]]], ignore_index=True)
        return _csv(lines, f"answers.{collection.slug}.csv")
    unjudged = frame[frame["unjudged_citations"] > 0][["run", "qid", "unjudged_citations"]]
    versus, shared = versus_best(frame, sort)  # each run against the best on the order's measure
    runs = [{**r, "versus": versus.get(r["run"])} for r in _records(means)]
    changed = sorted(set(frame.loc[frame["bank_changed"].astype(bool), "qid"]))
    return render(request, "answers/leaderboard.html", {
        "collection": collection, "runs": runs, "versus": bool(versus), "shared": shared, "alpha": ALPHA,
        "assessors": assessors, "assessor": assessor,
        "sort": sort, "sorts": SORTS, "unjudged": _records(unjudged), "changed": changed,
        "unscored": collection.answer_runs.count() - len(means), "organizer": may_organize(request.user, collection),
        "query": request.GET.urlencode()})

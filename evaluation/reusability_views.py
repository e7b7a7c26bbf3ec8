"""The reusability page: leave-one-run-out (or team-out) and recall estimates, read from what the board job
stores (:mod:`evaluation.board_extras`). Leave-one-out re-scores every contributing run: it is never
computed in the request; until a job has stored it the page says it is being computed, with the job's
progress, and reloads itself."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from evaluation import board, board_extras, cache, scoring, selectors, tables
from evaluation.access import results_view
from evaluation.reusability import stored_leave_one_out
from evaluation.scoring import EvaluationError
from evaluation.tasks import build_leave_one_out
from judging.policies import DEFAULT_POLICY
from workbench.collections.selectors import may_organize
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection, Job


def request_leave_one_out(collection: Collection, measure: str, by: str, policy: str) -> Job:
    """The job that stores this leave-one-out at the collection's current version: one queued or running
    already, the one that failed at this version (its error is the answer), or a new one."""
    pending = board_extras.pending(collection, measure, by, policy)
    if pending is not None:
        return pending
    params = {"measure": measure, "by": by, "policy": policy,
              "version": board.version_key(cache.version(collection))}
    failed = Job.objects.filter(collection=collection, kind=board_extras.LOO_KIND, status=Job.Status.FAILED,
                                params=params).order_by("-id").first()
    if failed is not None:
        return failed
    return jobs.job_start(build_leave_one_out, kind=board_extras.LOO_KIND, collection=collection, params=params)


@results_view()
def reusability(request: HttpRequest, collection: Collection) -> HttpResponse:
    """Leave-one-run-out (or team-out) and recall estimates: is the collection fair to new runs?"""
    measure = request.GET.get("measure", "map")
    by = "team" if request.GET.get("by") == "team" else "run"
    policy = scoring.normalise_policy(DEFAULT_POLICY)
    updating = None
    try:
        loo = stored_leave_one_out(collection, measure=measure, by=by, qrels_policy=policy)
        if loo is None:
            job = request_leave_one_out(collection, measure, by, policy)
            loo = stored_leave_one_out(collection, measure=measure, by=by, qrels_policy=policy)  # ran at once?
            if loo is None:
                job.refresh_from_db()
                if job.status == Job.Status.FAILED:
                    raise EvaluationError(job.error or "leave-one-out could not be computed")
                loo, updating = stored_leave_one_out(collection, measure=measure, by=by, qrels_policy=policy,
                                                     previous=True), job
                if loo is None:
                    return render(request, "evaluation/reusability_computing.html",
                                  {"collection": collection, "job": job, "measure": measure, "by": by})
        estimates, per_run = _recall(collection, policy, previous=updating is not None)
    except (EvaluationError, ValueError) as exc:
        return render(request, "evaluation/error.html", {"collection": collection, "message": str(exc)}, status=400)
    loo_table = tables.leave_one_out_table(loo.table.to_dict("records"), collection, request)
    estimate_table = tables.recall_estimates_table(estimates.to_dict("records"), collection, request)
    recall_table = tables.run_recall_table(per_run.to_dict("records"), collection, request)
    exported = tables.table_export(request, [loo_table, estimate_table, recall_table], f"{collection.slug}.reusability")
    if exported:
        return exported
    return render(request, "evaluation/reusability.html", {
        "collection": collection, "loo": loo, "loo_table": loo_table, "measure": measure, "by": by,
        "estimate_table": estimate_table, "recall_table": recall_table, "organizer": may_organize(request.user, collection),
        "updating": updating})


def _recall(collection: Collection, policy: str, *, previous: bool):
    """Recall estimates and each run's recall: of the current version, or while a job computes it (the page
    shows an older leave-one-out) the newest stored, so that the page's tables are of one version."""
    if previous:
        estimates, per_run = (board_extras.latest(collection, policy, n) for n in ("recall", "run_recall"))
        if estimates is not None and per_run is not None:
            return estimates[0], per_run[0]
    return selectors.recall_estimates(collection), selectors.run_recall(collection)

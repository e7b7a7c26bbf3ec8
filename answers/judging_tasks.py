"""The background job of machine nugget assignment: a declared assigner over an answer pool, as a machine
assessor (``answers.judging_machine``). Listed in ``answers.tasks.JOB_KINDS``."""

from __future__ import annotations

from django_tasks import task

from answers.judging_machine import assigner_for, machine_assign_run
from answers.models import AnswerPool
from workbench.jobs import lifecycle as jobs
from workbench.jobs.kinds import JobKind

__all__ = ["JOB_KINDS", "KIND", "assign_nuggets"]

KIND = "nugget machine assignment"


@task()
def assign_nuggets(job_id: int) -> None:
    with jobs.running(job_id) as progress:
        params = progress.job.params
        pool = AnswerPool.objects.get(pk=params["pool"], collection=progress.job.collection)
        row, assigner = assigner_for(pool, params["kind"], params.get("endpoint", ""), params.get("model", ""),
                                     params.get("options") or {})
        progress.step(f"{row.name} on answer pool {pool.name}: labelling")
        tally = machine_assign_run(pool=pool, row=row, assigner=assigner, report=lambda t: progress.step(
            f"{row.name} on answer pool {pool.name}: {t.recorded} labelled, {t.failed} failed"))
        lines = [f"{row.name} on answer pool {pool.name}: {tally.recorded} nugget assignments recorded as "
                 f"{row.user.username}, {tally.skipped} already made"]
        if tally.failed:
            lines.append(f"{tally.failed} pairs not labelled (run again to retry them); the first: {tally.first_error}")
        progress.finish(lines=lines, recorded=tally.recorded, failed=tally.failed)


JOB_KINDS = (
    JobKind(KIND, "Nugget machine assignment", assign_nuggets, params=("pool", "kind", "endpoint", "model", "options"),
            retry=True, help="A declared nugget assigner labels an answer pool's answers against the current banks, "
                             "as a machine assessor; pairs already labelled are skipped."),
)

"""The background jobs of machine nugget assignment and machine support judging: a declared assigner over an answer
pool, or a declared support judge over a support pool, as a machine assessor (``answers.judging_machine``). Listed
in ``answers.tasks.JOB_KINDS``."""

from __future__ import annotations

from django_tasks import task

from answers.judging_machine import assigner_for, machine_assign_run, machine_support_run, support_judge_for
from answers.models import AnswerPool
from workbench.jobs import lifecycle as jobs
from workbench.jobs.kinds import JobKind

__all__ = ["JOB_KINDS", "KIND", "SUPPORT_KIND", "assign_nuggets", "judge_support"]

KIND = "nugget machine assignment"
SUPPORT_KIND = "support machine judging"


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


@task()
def judge_support(job_id: int) -> None:
    with jobs.running(job_id) as progress:
        params = progress.job.params
        pool = AnswerPool.objects.get(pk=params["pool"], collection=progress.job.collection)
        row, judge = support_judge_for(pool, params["kind"], params.get("endpoint", ""), params.get("model", ""),
                                       params.get("options") or {})
        where = f"{row.name} on support pool {pool.name}"
        tally = machine_support_run(pool=pool, row=row, judge=judge, report=lambda t, done, total: progress.step(
            f"{where}: {t.recorded} of {total} citations labelled, {t.failed} failed", done=done, total=total))
        lines = [f"{where}: {tally.recorded} support judgments recorded as {row.user.username}, "
                 f"{tally.skipped} already made"]
        if tally.failed:
            lines.append(f"{tally.failed} citations not labelled (run again to retry them); the first: "
                         f"{tally.first_error}")
        if tally.flagged:
            lines.append(f"{tally.flagged} citations left to people, never sent: their text reads as instructions "
                         f"to a judge ({'; '.join(tally.flags)}{' …' if tally.flagged > len(tally.flags) else ''})")
        progress.finish(lines=lines, recorded=tally.recorded, failed=tally.failed, flagged=tally.flagged)


JOB_KINDS = (
    JobKind(KIND, "Nugget machine assignment", assign_nuggets, params=("pool", "kind", "endpoint", "model", "options"),
            retry=True, help="A declared nugget assigner labels an answer pool's answers against the current banks, "
                             "as a machine assessor; pairs already labelled are skipped."),
    JobKind(SUPPORT_KIND, "Support machine judging", judge_support,
            params=("pool", "kind", "endpoint", "model", "options"), retry=True,
            help="A declared support judge labels a support pool's citations (each sentence against the segment it "
                 "cites) as a machine assessor; citations already labelled are skipped, those whose text reads as "
                 "instructions are left to people."),
)

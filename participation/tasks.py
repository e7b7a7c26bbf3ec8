"""Participation's background jobs: checking a submitted run (run by ``manage.py db_worker``)."""

from __future__ import annotations

from django.urls import reverse
from django_tasks import task

from participation.answer_submissions import answer_submission_check
from participation.models import Submission
from participation.services import refuse, submission_check
from workbench.jobs import lifecycle as jobs
from workbench.jobs.kinds import JobKind


@task()
def check_submission(job_id: int) -> None:
    with jobs.running(job_id) as progress:
        submission = Submission.objects.select_related("team__track__collection").get(
            pk=progress.job.params["submission"])
        progress.step(f"checking {submission.file_name}")
        if progress.job.params.get("kind") == "answers":  # an answer run: the answers checker and store
            submission = answer_submission_check(submission)
        else:
            submission = submission_check(submission)
        slug = submission.team.track.collection.slug
        verdict = (f"accepted as run {submission.tag}" if submission.status == Submission.Status.ACCEPTED
                   else f"refused: {len(submission.problems)} problem(s)")
        progress.finish(lines=[f"{submission.file_name}: {verdict}"],
                        url=reverse("participation:receipt", args=[slug, submission.pk]), label="Your receipt")


def _check_died(job) -> None:
    """A check whose worker died twice: the submission is refused saying so (it never stays "checking")."""
    submission = Submission.objects.filter(pk=(job.params or {}).get("submission"),
                                           status=Submission.Status.CHECKING).first()
    if submission is not None:
        refuse(submission, [f"{submission.file_name}: the check could not finish: {job.error}"])


#: this app's jobs (registered by workbench.jobs.kinds.autodiscover): the check writes in one transaction (the run
#: and the submission's verdict together), so it is retried once
JOB_KINDS = (
    JobKind("submission check", "Submission check", check_submission, retry=True, on_failed=_check_died,
            params=("submission",), help="Checks a team's submitted run and accepts or refuses it.",
            back=("participation:team", "your team's page")),
)

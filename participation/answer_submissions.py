"""A team's answer run submitted through the portal: received like a ranked run (the window, the limit, the storage
quota, the receipt; :func:`participation.services.submission_receive`), then checked by the same checker as
``import_answers`` (``workbench.formats.answers``, every problem as ``file:LINE: message``) and the track's rules
(the run id is the team's, the team's limit counts ranked and answer runs together) before anything is stored.
An accepted file is the team's answer run (a later one with the same run id replaces it); a refused one stores
nothing but its report.
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath

from django.db import transaction

from answers.imports import answers_check, answers_store
from answers.models import AnswerRun
from participation.models import Submission, Team
from participation.services import _folder, _sha256, refuse
from workbench.collections import files as store
from workbench.collections.refusals import ImportRefused
from workbench.jobs import lifecycle as jobs
from workbench.models import Run

__all__ = ["KINDS", "answer_submission_check"]

#: what a participant may submit: the job's ``kind`` parameter, and the form's choices
KINDS = (("ranked", "Ranked run (TREC run file: qid Q0 docno rank score tag)"),
         ("answers", "Answer run (JSON lines, one generated answer per topic with its citations)"))


def _track_rules(submission: Submission, tag: str) -> None:
    """The track's rules on the checked answer run, inside the transaction that stores it (the team locked)."""
    team, track, name = submission.team, submission.team.track, submission.file_name
    Team.objects.select_for_update().filter(pk=team.pk).values_list("pk", flat=True).first()
    if submission.replaces and tag != submission.replaces:
        raise ImportRefused([f"{name}: the run id in the file is {tag!r}, not {submission.replaces!r}, the run you "
                             "chose to replace"])
    taken = (AnswerRun.objects.filter(collection=track.collection, tag=tag).exclude(team=team.name).exists()
             or Run.objects.filter(collection=track.collection, tag=tag).exclude(team=team.name).exists())
    if taken:
        raise ImportRefused([f"{name}: run id {tag!r} is taken by another run of the track; give your run another id"])
    current = set(Submission.objects.filter(team=team, status=Submission.Status.ACCEPTED).values_list("tag", flat=True))
    if tag not in current and len(current) >= track.max_runs_per_team:
        raise ImportRefused([f"{name}: team {team.name!r} has {len(current)} runs, the track's limit; resubmit one "
                             f"of its run ids ({', '.join(sorted(current))}) to replace it"])


def _warnings(submission: Submission, answered: set[str]) -> list[str]:
    topics = set(submission.team.track.collection.topics.values_list("qid", flat=True))
    missing = sorted(topics - answered)
    if not missing:
        return []
    return [f"{submission.file_name}: no answer for {len(missing)} of {len(topics)} topics "
            f"({', '.join(missing[:10])}{' …' if len(missing) > 10 else ''})"]


def _store(submission: Submission, checked) -> None:
    run = checked[0][0]
    collection, team = submission.team.track.collection, submission.team
    with transaction.atomic():
        _track_rules(submission, run.run_id)
        answers_store(collection, checked, description=submission.description)
        AnswerRun.objects.filter(collection=collection, tag=run.run_id).update(team=team.name)
        Submission.objects.filter(team=team, tag=run.run_id, status=Submission.Status.ACCEPTED).update(
            status=Submission.Status.REPLACED, run=None)
        submission.status, submission.tag = Submission.Status.ACCEPTED, run.run_id
        submission.warnings = _warnings(submission, {a.topic_id for a in run.answers})
        submission.save()


def answer_submission_check(submission: Submission) -> Submission:
    """Check the kept answer file and the track's rules; accept it as the team's answer run or record every
    problem (nothing stored). Returns the updated submission."""
    if not _folder(submission):
        return refuse(submission, [f"{submission.file_name}: the check could not finish: the file is no longer kept"])
    with store.local_copy(_folder(submission)) as directory:
        path = Path(directory) / PurePosixPath(store.key(submission.stored)).name
        if not submission.sha256:
            submission.sha256 = _sha256(path)
            submission.save(update_fields=["sha256"])
        try:
            checked = answers_check(submission.team.track.collection, [path], names=[submission.file_name],
                                    replace=True, max_problems=1000)
            _store(submission, checked)
        except ImportRefused as exc:
            return refuse(submission, list(exc.problems))
        except Exception as exc:  # noqa: BLE001 - whatever stops the check, the submission is refused saying why
            return refuse(submission, [f"{submission.file_name}: the check could not finish: {jobs.one_line(exc)}"])
    return submission

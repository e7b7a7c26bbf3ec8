"""Receiving and checking submissions, and releasing results to teams.

A submission is received (the window and the team checked, the file streamed to disk and kept, with its
checksum), then a background job checks it with the same checker as ``import_runs`` and the console, plus
the track's own rules (the run tag belongs to the team; at most ``max_runs_per_team`` runs) before anything
is written. An accepted submission is the team's run (a later one with the same tag replaces it; the
earlier file stays in the history); a refused one stores nothing but its report.
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from participation.models import Submission, Team, Track
from workbench import jobs, uploads
from workbench.models import Run
from workbench.selectors import run_frames
from workbench.services import ImportRefused, RunSpec, runs_import

__all__ = ["SubmissionRefused", "results_release", "submission_check", "submission_receive"]


class SubmissionRefused(Exception):
    """Refused before anything is stored (the window, the team, the form); one line for the participant."""


def _store(upload, directory: Path) -> tuple[Path, str, int]:
    """The upload copied into ``directory`` under its own (safe) name; its path, SHA-256 and size."""
    directory.mkdir(parents=True)
    target = directory / uploads.safe_name(upload.name)
    digest, size = hashlib.sha256(), 0
    with open(target, "wb") as handle:
        for chunk in upload.chunks(1 << 20):
            digest.update(chunk)
            size += len(chunk)
            handle.write(chunk)
    return target, digest.hexdigest(), size


def submission_receive(*, team: Team, user, upload, run_type: str = Submission.RunType.AUTOMATIC,
                       fields_used=(), description: str = "", priority: int = 1, task=None) -> Submission:
    """Take a team's upload if the window is open: keep the file, record the submission and start the job
    that checks it (``task``, the check's django-tasks task)."""
    track = team.track
    may, why = track.window()
    if not may:
        raise SubmissionRefused(f"submission refused: {why}")
    if track.require_description and not description.strip():
        raise SubmissionRefused("describe how the run was made (the track asks for it)")
    directory = Path(settings.VAR_DIR) / "submissions" / track.collection.slug / team.name / uuid.uuid4().hex
    path, sha256, size = _store(upload, directory)
    submission = Submission.objects.create(
        team=team, submitted_by=user, file_name=upload.name[:255], stored=str(path), sha256=sha256, size=size,
        run_type=run_type, fields_used=list(fields_used), description=description, priority=priority)
    if task is not None:
        job = jobs.job_start(task, kind="submission check", user=user, collection=track.collection,
                             params={"submission": submission.pk, "file": upload.name})
        Submission.objects.filter(pk=submission.pk).update(job=job)
        submission.refresh_from_db()
    return submission


def _owner_rules(submission: Submission):
    """The track's rules on the checked run file, applied before anything is written."""
    team, track = submission.team, submission.team.track

    def accept(run_files) -> None:
        tag = run_files[0].tag
        taken = Run.objects.filter(collection=track.collection, tag=tag).exclude(team=team.name).exists()
        if taken:
            raise ImportRefused([f"{submission.file_name}: run tag {tag!r} is taken by another run of the "
                                 "track; give your run another tag"])
        current = set(Submission.objects.filter(team=team, status=Submission.Status.ACCEPTED)
                      .values_list("tag", flat=True))
        if tag not in current and len(current) >= track.max_runs_per_team:
            raise ImportRefused([f"{submission.file_name}: team {team.name!r} has {len(current)} runs, the "
                                 f"track's limit; resubmit one of its tags ({', '.join(sorted(current))}) to "
                                 "replace it"])

    return accept


def _track_warnings(submission: Submission, run: Run, frame) -> list[str]:
    """What the track's rules warn about: topics missing, fewer documents than asked, a duplicate file."""
    track, name = submission.team.track, submission.file_name
    found = []
    topics = set(track.collection.topics.values_list("qid", flat=True))
    missing = sorted(topics - set(frame["qid"].astype(str)))
    if missing:
        found.append(f"{name}: no results for {len(missing)} of {len(topics)} topics "
                     f"({', '.join(missing[:10])}{' …' if len(missing) > 10 else ''}); they score 0")
    sizes = frame.groupby("qid").size()
    short = int((sizes < track.depth).sum())
    if short:
        found.append(f"{name}: {short} of {len(sizes)} topics have fewer than the {track.depth} documents the "
                     f"track asks for (fewest: {int(sizes.min())})")
    same = (Submission.objects.filter(team__track=track, sha256=submission.sha256)
            .exclude(pk=submission.pk).exclude(status=Submission.Status.REFUSED).order_by("submitted_at").first())
    if same is not None:
        whose = "your team's" if same.team_id == submission.team_id else "another team's"
        found.append(f"{name}: the same file (SHA-256 {submission.sha256[:12]}…) as {whose} earlier submission")
    return found


def _take_metadata(submission: Submission, metadata: dict | None) -> None:
    """An ir_metadata header: kept with the submission; its ``method.automatic`` sets the run type and a
    ``tag`` other than the run's is a warning."""
    found = (metadata or {}).get("ir_metadata")
    if not isinstance(found, dict):
        return
    submission.metadata = found
    method = found.get("method")
    if isinstance(method, dict) and isinstance(method.get("automatic"), bool):
        submission.run_type = Submission.RunType.AUTOMATIC if method["automatic"] else Submission.RunType.MANUAL
    if found.get("tag") not in (None, submission.tag):
        submission.warnings.append(f"{submission.file_name}: the ir_metadata header names tag {found['tag']!r}, "
                                   f"the run lines {submission.tag!r}")


def submission_check(submission: Submission, *, progress=None) -> Submission:
    """Check the kept file like ``import_runs`` does, then the track's rules; accept it as the team's run
    (replacing a run of the same tag) or record every problem. Returns the updated submission."""
    directory = Path(submission.stored).parent
    try:
        imported = runs_import(collection=submission.team.track.collection, replace=True, max_problems=1000,
                               specs=[RunSpec(source=Path(submission.stored), team=submission.team.name,
                                              description=submission.description, contributes=True,
                                              pool_priority=submission.priority)],
                               progress=progress, accept=_owner_rules(submission))
    except ImportRefused as exc:
        submission.status = Submission.Status.REFUSED
        submission.problems = uploads.relative_problems(exc, directory).problems
        submission.save(update_fields=["status", "problems"])
        return submission
    run = imported[0].run
    relative = uploads.relative_problems(ImportRefused(list(imported[0].warnings) or [""]), directory).problems
    frame = run_frames(run.collection, tags=[run.tag])[run.tag]
    with transaction.atomic():
        Submission.objects.filter(team=submission.team, tag=run.tag, status=Submission.Status.ACCEPTED).update(
            status=Submission.Status.REPLACED, run=None)
        submission.status, submission.tag, submission.run = Submission.Status.ACCEPTED, run.tag, run
        submission.warnings = [w for w in relative if w] + _track_warnings(submission, run, frame)
        _take_metadata(submission, imported[0].metadata)
        submission.save()
    return submission


@transaction.atomic
def results_release(*, track: Track, released: bool = True) -> Track:
    track.results_released = released
    track.released_at = timezone.now() if released else None
    track.save(update_fields=["results_released", "released_at"])
    return track

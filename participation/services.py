"""Receiving and checking submissions, and releasing results to teams.

A submission is received (the window, the team and its run limit checked; the file, which Django already
spooled to disk, moved into place and kept), then a background job hashes it and checks it with the same checker as ``import_runs`` and the console, plus
the track's own rules (the run tag belongs to the team; at most ``max_runs_per_team`` runs) before anything
is written. An accepted submission is the team's run (a later one with the same tag replaces it; the
earlier file stays in the history); a refused one stores nothing but its report (its file is removed).
A form refused for a missing field keeps the chosen file staged for the team (``upload_stage``), so the
participant need not choose it again.
"""

from __future__ import annotations

import hashlib
import re
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from participation.models import Submission, Team, Track
from workbench.access.audit import audit_record
from workbench.collections import files as store
from workbench.collections import uploads
from workbench.collections.selectors import run_frames
from workbench.collections.services import ImportRefused, RunSpec, runs_import
from workbench.jobs import lifecycle as jobs
from workbench.models import Run

__all__ = ["StagedFile", "SubmissionRefused", "refuse", "results_release", "staged_discard", "staged_find",
           "submission_check", "submission_receive", "upload_keep", "upload_stage"]

#: how long a file kept for a refused form waits for the participant to send the form again
STAGED_FOR = timedelta(days=1)


class SubmissionRefused(Exception):
    """Refused before anything is stored (the window, the team, the limit); one line for the participant."""


@dataclass(frozen=True)
class StagedFile:
    """A file a participant chose in a form that was refused (a field missing): kept for the team, so that
    sending the form again need not upload it again. ``record`` goes into the participant's session."""

    team_id: int
    token: str
    name: str
    size: int

    @property
    def stored(self) -> str:
        """Its name in the file store (``workbench.collections.files``)."""
        return f"{_STAGING}/{self.team_id}/{self.token}/{uploads.safe_name(self.name)}"

    def record(self) -> dict:
        return {"token": self.token, "name": self.name, "size": self.size}


_STAGING = "uploads/participation"


def _move(upload, name: str) -> int:
    """Keep the upload under ``name`` of the file store without reading it into memory: on the local disk
    Django's temporary file is moved (no copy), to S3 it is streamed. Its size."""
    store.put(name, upload)
    upload.close()  # a TemporaryUploadedFile removes its file on close (already moved: nothing to do)
    return store.size(name)


def _sweep(now: float | None = None) -> None:
    """Staged files nobody came back for (older than ``STAGED_FOR``) are removed."""
    now = time.time() if now is None else now
    storage = store.storage()
    for name in store.list_tree(_STAGING):
        try:
            if now - storage.get_modified_time(name).timestamp() > STAGED_FOR.total_seconds():
                store.delete_tree(name.rsplit("/", 1)[0])
        except OSError:
            continue


def upload_stage(*, team: Team, upload) -> StagedFile:
    """Keep the file of a refused form for ``team`` (moved, not copied) until the form is sent again."""
    _sweep()
    token = uuid.uuid4().hex
    staged = StagedFile(team_id=team.pk, token=token, name=Path(upload.name or "upload").name[:255], size=0)
    size = _move(upload, staged.stored)
    return StagedFile(team_id=team.pk, token=token, name=staged.name, size=size)


def upload_keep(*, team: Team, upload, replaces: str = "") -> StagedFile | None:
    """The file of a form refused for a field (a description missing): kept for ``team`` if the form could
    be sent again (the window open, the team within its limit or replacing one of its runs), else None
    (the file goes with the request)."""
    try:
        if not team.track.window()[0]:
            return None
        _refuse_over_limit(team, replaces if isinstance(replaces, str) else "")
    except SubmissionRefused:
        return None
    return upload_stage(team=team, upload=upload)


def staged_find(team: Team, record) -> StagedFile | None:
    """The staged file a session's ``record`` names for ``team``, if it is still there."""
    if not isinstance(record, dict) or not isinstance(record.get("token"), str) \
            or not re.fullmatch(r"[0-9a-f]{32}", record["token"]) or not isinstance(record.get("name"), str):
        return None
    staged = StagedFile(team_id=team.pk, token=record["token"], name=record["name"], size=0)
    if not store.exists(staged.stored):
        return None
    return StagedFile(team_id=team.pk, token=staged.token, name=staged.name, size=store.size(staged.stored))


def staged_discard(staged: StagedFile | None) -> None:
    if staged is not None:
        store.delete_tree(staged.stored.rsplit("/", 1)[0])


def _refuse_over_limit(team: Team, replaces: str) -> None:
    """The track's run limit as the form knows it, before the file is kept: a new run at the limit, or a
    replacement of a run the team does not have, is refused. (The check job applies it again on the file.)"""
    track = team.track
    tags = sorted(Submission.objects.filter(team=team, status=Submission.Status.ACCEPTED)
                  .values_list("tag", flat=True))
    if replaces and replaces not in tags:
        raise SubmissionRefused(f"submission refused: your team has no run {replaces!r} to replace")
    if not replaces and len(tags) >= track.max_runs_per_team:
        raise SubmissionRefused(
            f"submission refused: your team has submitted {len(tags)} of {track.max_runs_per_team} runs, the "
            f"track's limit; to send a run again, choose which of your runs it replaces ({', '.join(tags)})")


def _upload_size(upload, staged: StagedFile | None) -> int:
    if upload is None:
        return staged.size if staged is not None else 0
    size = getattr(upload, "size", None)
    if size is None and hasattr(upload, "temporary_file_path"):
        size = Path(upload.temporary_file_path()).stat().st_size
    return int(size or 0)


def _refuse_over_storage(team: Team, size: int) -> None:
    """The portal's largest upload (``PORTAL_MAX_UPLOAD_MB``) and the team's storage quota
    (``TEAM_STORAGE_QUOTA_MB``: the files it has kept, accepted and replaced ones, plus this one)."""
    largest = settings.PORTAL_MAX_UPLOAD_MB << 20
    if size > largest:
        raise SubmissionRefused(f"submission refused: the file holds {_mb(size)}, more than {_mb(largest)}, the "
                                "largest run file the portal takes (compress it with gzip: .gz files are read)")
    quota = settings.TEAM_STORAGE_QUOTA_MB << 20
    kept = (Submission.objects.filter(team=team).exclude(status=Submission.Status.REFUSED)
            .aggregate(total=Sum("size"))["total"] or 0)
    if kept + size > quota:
        raise SubmissionRefused(f"submission refused: your team's kept files hold {_mb(kept)} of its {_mb(quota)} "
                                f"quota, too little for this {_mb(size)} file; ask the organizers")


def _mb(size: int) -> str:
    return f"{size / (1 << 20):,.1f} MB"


def submission_receive(*, team: Team, user, upload=None, staged: StagedFile | None = None,
                       run_type: str = Submission.RunType.AUTOMATIC, fields_used=(), description: str = "",
                       priority: int = 1, replaces: str = "", task=None, kind: str = "ranked") -> Submission:
    """Take a team's file (``upload``, or a ``staged`` one kept from a refused form) if the window is open
    and the team within its limit: keep it (moved, never read into memory), record the submission and start
    the job that hashes and checks it (``task``, the check's django-tasks task; ``kind``: a ranked run or an
    answer run, :mod:`participation.answer_submissions`). A refused file is not kept
    (a staged one is removed; Django removes its own temporary file when the request ends)."""
    track = team.track
    try:
        may, why = track.window()
        if not may:
            raise SubmissionRefused(f"submission refused: {why}")
        if track.require_description and not description.strip():
            raise SubmissionRefused("describe how the run was made (the track asks for it)")
        _refuse_over_limit(team, replaces)
        if upload is None and staged is None:
            raise SubmissionRefused("choose a run file")
        _refuse_over_storage(team, _upload_size(upload, staged))
        jobs.check_start_rate(user)
    except (SubmissionRefused, jobs.TooManyJobStarts):
        staged_discard(staged)
        if upload is not None:
            upload.close()  # a TemporaryUploadedFile removes its file on close
        raise
    directory = f"submissions/{track.collection.slug}/{uploads.safe_name(team.name)}/{uuid.uuid4().hex}"
    if upload is not None:
        name = Path(upload.name or "upload").name
        path = f"{directory}/{uploads.safe_name(name)}"
        size = _move(upload, path)
    else:
        name, path = staged.name, f"{directory}/{uploads.safe_name(staged.name)}"
        with store.open_file(staged.stored) as kept:
            size = _move(kept, path)
    staged_discard(staged)
    with transaction.atomic():  # the deadline again, with the team locked, in the transaction that records it
        Team.objects.select_for_update().filter(pk=team.pk).values_list("pk", flat=True).first()
        may, why = Track.objects.get(pk=track.pk).window()
        if may:
            submission = Submission.objects.create(
                team=team, submitted_by=user, file_name=name[:255], stored=path, sha256="", size=size,
                run_type=run_type, fields_used=list(fields_used), description=description, priority=priority,
                replaces=replaces)
    if not may:
        store.delete_tree(directory)
        raise SubmissionRefused(f"submission refused: {why}")
    if task is not None:
        job = jobs.job_start(task, kind="submission check", user=user, collection=track.collection,
                             params={"submission": submission.pk, "file": name, "kind": kind})
        Submission.objects.filter(pk=submission.pk).update(job=job)
        submission.refresh_from_db()
    return submission


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _owner_rules(submission: Submission):
    """The track's rules on the checked run file, applied before anything is written."""
    team, track = submission.team, submission.team.track

    def accept(run_files) -> None:
        # inside the transaction that stores the run: the team's row is locked first (PostgreSQL; SQLite's
        # transactions take the write lock at BEGIN IMMEDIATE), so checks of the same team run one at a time
        # and count every run accepted before
        Team.objects.select_for_update().filter(pk=team.pk).values_list("pk", flat=True).first()
        tag = run_files[0].tag
        if submission.replaces and tag != submission.replaces:
            raise ImportRefused([f"{submission.file_name}: the run tag in the file is {tag!r}, not "
                                 f"{submission.replaces!r}, the run you chose to replace"])
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


def refuse(submission: Submission, problems: list[str]) -> Submission:
    """Record the refusal and remove the file: a refused file is not kept, its report says why."""
    submission.status = Submission.Status.REFUSED
    submission.problems = problems
    submission.save(update_fields=["status", "problems"])
    store.delete_tree(_folder(submission))
    return submission


def _folder(submission: Submission) -> str:
    """The folder of the file store holding the submission's file (its name, or the path earlier versions kept)."""
    name = store.key(submission.stored)
    return name.rsplit("/", 1)[0] if "/" in name else ""


def submission_check(submission: Submission, *, progress=None) -> Submission:
    """Check the kept file like ``import_runs`` does, then the track's rules; accept it as the team's run
    (replacing a run of the same tag) or record every problem. Returns the updated submission."""
    if not _folder(submission):
        return refuse(submission, [f"{submission.file_name}: the check could not finish: the file is no longer kept"])
    with store.local_copy(_folder(submission)) as directory:  # on S3: a download to this worker's disk
        return _check(submission, directory, directory / PurePosixPath(store.key(submission.stored)).name,
                      progress)


def _check(submission: Submission, directory: Path, path: Path, progress) -> Submission:
    if not submission.sha256:
        submission.sha256 = _sha256(path)
        submission.save(update_fields=["sha256"])
    try:
        runs_import(collection=submission.team.track.collection, replace=True, max_problems=1000,
                    specs=[RunSpec(source=path, team=submission.team.name,
                                   description=submission.description, contributes=True,
                                   pool_priority=submission.priority)],
                    progress=progress, accept=_owner_rules(submission), stored=_accepted(submission, directory))
    except ImportRefused as exc:
        return refuse(submission, uploads.relative_problems(exc, directory).problems)
    except Exception as exc:  # noqa: BLE001 - whatever stops the check, the submission is refused saying why
        return refuse(submission, [f"{submission.file_name}: the check could not finish: {jobs.one_line(exc)}"])
    return submission


def _accepted(submission: Submission, directory: Path):
    """The submission becomes the team's run, in the transaction that stores the run (the limit it was
    checked against counts it at once)."""

    def stored(imported) -> None:
        run = imported[0].run
        relative = uploads.relative_problems(ImportRefused(list(imported[0].warnings) or [""]), directory).problems
        frame = run_frames(run.collection, tags=[run.tag])[run.tag]
        Submission.objects.filter(team=submission.team, tag=run.tag, status=Submission.Status.ACCEPTED).update(
            status=Submission.Status.REPLACED, run=None)
        submission.status, submission.tag, submission.run = Submission.Status.ACCEPTED, run.tag, run
        submission.warnings = [w for w in relative if w] + _track_warnings(submission, run, frame)
        _take_metadata(submission, imported[0].metadata)
        submission.save()

    return stored


@transaction.atomic
def results_release(*, track: Track, released: bool = True, actor=None) -> Track:
    track.results_released = released
    track.released_at = timezone.now() if released else None
    track.save(update_fields=["results_released", "released_at"])
    audit_record(collection=track.collection, actor=actor, action="results released" if released else "results withdrawn")
    return track

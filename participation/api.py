"""Participants' endpoints: their tracks, the submission rules, the topics, submitting a run (the portal's form,
checker and receipt: ``participation.services``), their runs and submissions, their released results."""

from __future__ import annotations

import math
from datetime import datetime

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404, QueryDict
from ninja import File, Form, Router, Schema, Status
from ninja.files import UploadedFile

from evaluation.measures import DEFAULT_MEASURES
from evaluation.scoring import EvaluationError
from participation import selectors, services
from participation.forms import SubmissionForm
from participation.models import Submission, Team, Track
from participation.services import SubmissionRefused
from participation.tasks import check_submission
from workbench.api.core import ApiRefused, ObjectId, organized_collection, register, replies

router = Router()


class TrackOut(Schema):
    collection: str
    name: str
    team: str
    may_submit: bool
    window: str
    closes_at: datetime | None
    max_runs_per_team: int
    runs_used: int
    runs_left: int
    runs: list[str]
    depth: int
    require_description: bool
    topics_available: bool
    results_released: bool
    max_upload_mb: int


class TopicOut(Schema):
    qid: str
    title: str
    description: str
    narrative: str


class ReceiptOut(Schema):
    id: int
    track: str
    team: str
    file_name: str
    status: str
    tag: str
    sha256: str
    size: int
    problems: list[str]
    warnings: list[str]
    run_type: str
    fields_used: list[str]
    description: str
    priority: int
    replaces: str
    submitted_at: datetime
    submitted_by: str | None
    job: int | None


class RunResult(Schema):
    tag: str
    topics: list[dict]
    contribution: dict | None


class ResultsOut(Schema):
    track: str
    measure: str
    released: bool
    runs: list[RunResult]
    leave_one_out: list[dict]


def _team(user, slug: str) -> tuple[Track, Team]:
    """The user's team on the track of ``slug``: 404 without such a track, 403 when they are not on a team of it."""
    track = Track.objects.select_related("collection").filter(collection__slug=slug).first()
    if track is None:
        raise Http404(f"no track {slug!r}")
    team = Team.objects.filter(track=track, members=user).first()
    if team is None:
        raise PermissionDenied(f"you are not on a team of track {slug!r}: only its teams' members may submit or "
                               "read its submissions")
    return track, team


def _track_out(track: Track, team: Team) -> dict:
    may, why = track.window()
    limit = selectors.run_limit(team)
    return {"collection": track.collection.slug, "name": track.collection.name, "team": team.name, "may_submit": may,
            "window": why, "closes_at": track.closes_at, "max_runs_per_team": limit["limit"],
            "runs_used": limit["used"], "runs_left": limit["left"], "runs": limit["tags"], "depth": track.depth,
            "require_description": track.require_description, "topics_available": track.topics_available()[0],
            "results_released": track.results_released, "max_upload_mb": settings.PORTAL_MAX_UPLOAD_MB}


def receipt_out(submission: Submission) -> dict:
    """A submission's receipt as the portal's receipt page shows it."""
    return {"id": submission.pk, "track": submission.team.track.collection.slug, "team": submission.team.name,
            "file_name": submission.file_name, "status": submission.status, "tag": submission.tag,
            "sha256": submission.sha256, "size": submission.size, "problems": list(submission.problems),
            "warnings": list(submission.warnings), "run_type": submission.run_type,
            "fields_used": list(submission.fields_used), "description": submission.description,
            "priority": submission.priority, "replaces": submission.replaces, "submitted_at": submission.submitted_at,
            "submitted_by": submission.submitted_by.username if submission.submitted_by_id else None,
            "job": submission.job_id}


@router.get("/tracks", response=replies(200, list[TrackOut]), summary="The tracks you are in, with their rules")
def tracks(request):
    teams = Team.objects.filter(members=request.auth).select_related("track__collection").order_by("track__collection__slug")
    return [_track_out(team.track, team) for team in teams]


@router.get("/tracks/{slug}", response=replies(200, TrackOut), summary="A track's submission rules and your team's runs")
def track(request, slug: str):
    return _track_out(*_team(request.auth, slug))


@router.get("/tracks/{slug}/topics", response=replies(200, list[TopicOut]),
            summary="The track's topics (once the organizers publish them)")
def track_topics(request, slug: str):
    track, _ = _team(request.auth, slug)
    available, why = track.topics_available()
    if not available:
        raise PermissionDenied(f"the topics are not available yet: {why}")
    return list(track.collection.topics.order_by("qid").values("qid", "title", "description", "narrative"))


class TeamRunOut(Schema):
    tag: str
    submission: int
    priority: int
    description: str
    run_type: str
    pooled: bool
    lines: int
    topics: int
    judged_at_10: float | None
    submitted_at: datetime


@router.get("/tracks/{slug}/runs", response=replies(200, list[TeamRunOut]),
            summary="Your team's current runs (as the team page lists them); send a file again to replace one")
def team_runs(request, slug: str):
    """The accepted run of each tag, in the team's priority order, with whether it is pooled and (once judging
    has started) its judged@10. To replace a run, submit a file with the same run tag and ``replaces`` set to
    it (at the run limit the portal asks the same): the earlier submission is kept in the history as
    ``replaced``."""
    _, team = _team(request.auth, slug)
    return [{"tag": row["tag"], "submission": row["submission"].pk, "priority": row["submission"].priority,
             "description": row["submission"].description, "run_type": row["submission"].run_type,
             "pooled": row["pooled"], "lines": row["lines"], "topics": row["topics"],
             "judged_at_10": None if row["judged_at_10"] is None or not math.isfinite(row["judged_at_10"])
             else float(row["judged_at_10"]), "submitted_at": row["submission"].submitted_at}
            for row in selectors.team_runs(team)]


def _form_problems(form: SubmissionForm) -> list[str]:
    return [f"{field}: {message}" if field != "__all__" else message
            for field, messages in form.errors.items() for message in messages]


@router.post("/tracks/{slug}/submissions", response=replies(201, ReceiptOut),
             summary="Submit a run (multipart): checked as the portal checks it; the receipt")
def submit(request, slug: str, file: File[UploadedFile], description: Form[str] = "",
           run_type: Form[str] = Submission.RunType.AUTOMATIC, fields_used: Form[list[str]] = None,
           priority: Form[int] = 1, replaces: Form[str] = "", kind: Form[str] = "ranked"):
    """The same form as the portal's team page (a run file, how it was made, its priority, the run it
    replaces), the same limits (the window, the team's runs, the upload's size, the team's quota, the job
    start limit) and the same check: the receipt says whether the run was accepted, with the checker's
    ``file:line`` problems or its warnings. ``status`` is ``checking`` while a worker has not checked it yet:
    follow ``GET /tracks/{slug}/submissions/{id}``."""
    track, team = _team(request.auth, slug)
    limit = selectors.run_limit(team)
    data = QueryDict(mutable=True)
    data.update({"run_type": run_type, "description": description, "priority": str(priority), "replaces": replaces,
                 "kind": kind})  # kind: "ranked" (a TREC run) or "answers" (an answer run, JSON lines)
    data.setlist("fields_used", list(fields_used or []))
    form = SubmissionForm(data, request.FILES, track=track, tags=limit["tags"], at_limit=False)
    if not form.is_valid():
        problems = _form_problems(form)
        raise ApiRefused(400, "the submission is not valid: " + "; ".join(problems), problems)
    data = form.cleaned_data
    try:
        submission = services.submission_receive(
            team=team, user=request.auth, upload=data["file"], run_type=data["run_type"],
            fields_used=data["fields_used"], description=data["description"], priority=data["priority"],
            replaces=data.get("replaces") or "", task=check_submission, kind=data.get("kind") or "ranked")
    except SubmissionRefused as exc:
        status = 413 if "the largest run file the portal takes" in str(exc) or "quota" in str(exc) else 409
        raise ApiRefused(status, str(exc)) from None
    submission.refresh_from_db()
    return Status(201, receipt_out(submission))


@router.get("/tracks/{slug}/submissions", response=replies(200, list[ReceiptOut]),
            summary="Your team's submissions, newest first (at most 500)")
def submissions(request, slug: str):
    _, team = _team(request.auth, slug)
    found = Submission.objects.filter(team=team).select_related("team__track__collection", "submitted_by")[:500]
    return [receipt_out(s) for s in found]


@router.get("/tracks/{slug}/submissions/{submission_id}", response=replies(200, ReceiptOut),
            summary="One of your team's submissions: its receipt")
def submission(request, slug: str, submission_id: ObjectId):
    _, team = _team(request.auth, slug)
    found = (Submission.objects.filter(pk=submission_id, team=team)
             .select_related("team__track__collection", "submitted_by").first())
    if found is None:
        raise Http404(f"no submission {submission_id} of your team")
    return receipt_out(found)


def _plain(rows: list[dict]) -> list[dict]:
    return [{str(k): (None if isinstance(v, float) and not math.isfinite(v) else
                      v.item() if hasattr(v, "item") else v) for k, v in row.items()} for row in rows]


@router.get("/tracks/{slug}/results", response=replies(200, ResultsOut),
            summary="Your team's results, once the organizers release them")
def results(request, slug: str, measure: str = "map"):
    track, team = _team(request.auth, slug)
    if measure not in DEFAULT_MEASURES:
        raise ApiRefused(400, f"measure {measure!r} is not one of {', '.join(DEFAULT_MEASURES)}")
    if not track.results_released:
        return {"track": slug, "measure": measure, "released": False, "runs": [], "leave_one_out": []}
    try:
        found = selectors.team_results(team, measure=measure)
    except (EvaluationError, ValueError) as exc:
        raise ApiRefused(409, f"the results cannot be computed now: {exc}") from None
    runs = [{"tag": tag, "topics": _plain(report.to_dict("records")),
             "contribution": _plain([found["contributions"].get(tag) or {}])[0] or None}
            for tag, report in found["reports"].items()]
    return {"track": slug, "measure": measure, "released": True, "runs": runs,
            "leave_one_out": _plain(found["leave_one_out"])}


class ReleaseIn(Schema):
    released: bool


class ReleasedOut(Schema):
    track: str
    released: bool
    released_at: datetime | None


@router.put("/tracks/{slug}/release", response=replies(200, ReleasedOut), tags=["organizers"],
            summary="Release the track's results to its teams, or withdraw them (organizers)")
def release(request, slug: str, body: ReleaseIn):
    """As the track's page: ``{"released": true}`` shows each team its own results, ``false`` takes them back;
    either goes to the collection's audit log."""
    collection = organized_collection(request.auth, slug)
    track = Track.objects.filter(collection=collection).first()
    if track is None:
        raise Http404(f"collection {slug!r} has no track")
    services.results_release(track=track, released=body.released, actor=request.auth)
    return {"track": slug, "released": track.results_released, "released_at": track.released_at}


register("", router, tags=["participants"])

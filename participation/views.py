"""Participants' pages: their tracks, their team's submissions and receipts, and (once the organizer has
released them) their results. A participant sees only their own team: every other team's submission,
file and result answers 404."""

from __future__ import annotations

from functools import wraps

import yaml
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from evaluation import plots
from evaluation.measures import DEFAULT_MEASURES
from evaluation.scoring import EvaluationError
from participation import selectors, services
from participation.forms import SubmissionForm
from participation.models import Submission, Team, Track
from participation.services import StagedFile, SubmissionRefused
from participation.tasks import check_submission
from participation.topic_files import TOPIC_FILES, write_topics
from workbench.collections import files as store
from workbench.collections.selectors import may_organize


def team_view(view):
    """The signed-in user's team on the track of ``slug``, or 404 (not on a team, or no such track)."""

    @wraps(view)
    @login_required
    def wrapped(request: HttpRequest, slug: str, *args, **kwargs):
        track = get_object_or_404(Track.objects.select_related("collection"), collection__slug=slug)
        team = Team.objects.filter(track=track, members=request.user).first()
        if team is None:
            return _not_in_a_team(request, track)
        return view(request, track, team, *args, **kwargs)

    return wrapped


def _not_in_a_team(request: HttpRequest, track: Track) -> HttpResponse:
    """The refusal of a team page to someone on no team of the track (404 as for a track they cannot see), with
    the reason, and for the track's organizers the way to its console."""
    console = (reverse("participation_console:manage", args=[track.collection.slug])
               if may_organize(request.user, track.collection) else None)
    return render(request, "404.html", {
        "exception": "You are not in a team of this track.", "request_path": request.path,
        "elsewhere": {"url": console, "label": "The track's console (you organize it)"} if console else
        {"url": reverse("participation:portal"), "label": "Your tracks"}}, status=404)


@login_required
def portal(request: HttpRequest) -> HttpResponse:
    teams = Team.objects.filter(members=request.user).select_related("track__collection")
    rows = [{"team": t, "track": t.track, "window": t.track.window()[1],
             "deadline": selectors.relative_time(t.track.closes_at) if t.track.closes_at else ""} for t in teams]
    return render(request, "participation/portal.html", {"rows": rows})


#: the session's files kept from refused forms, per team: {team id: StagedFile.record()}
STAGED_KEY = "participation_staged"


def _staged(request: HttpRequest, team: Team) -> StagedFile | None:
    return services.staged_find(team, request.session.get(STAGED_KEY, {}).get(str(team.pk)))


def _remember(request: HttpRequest, team: Team, staged: StagedFile | None) -> None:
    kept = dict(request.session.get(STAGED_KEY, {}))
    if staged is None:
        kept.pop(str(team.pk), None)
    else:
        kept[str(team.pk)] = staged.record()
    request.session[STAGED_KEY] = kept


def _form(track: Track, limit: dict, staged: StagedFile | None, data=None, files=None) -> SubmissionForm:
    return SubmissionForm(data, files, track=track, tags=limit["tags"], at_limit=limit["at_limit"], staged=staged)


def _team_context(track: Track, team: Team, form: SubmissionForm, limit: dict) -> dict:
    may, why = track.window()
    topics_ok, topics_why = track.topics_available()
    return {"track": track, "collection": track.collection, "team": team, "form": form, "may_submit": may,
            "window": why, "runs": selectors.team_runs(team), "limit": limit,
            "dates": selectors.track_dates(track), "topics_available": topics_ok, "topics_why": topics_why,
            "topic_files": [(name, label) for name, (label, *_) in TOPIC_FILES.items()],
            "topic_count": track.collection.topics.count(),
            "history": Submission.objects.filter(team=team).select_related("submitted_by")[:100]}


@team_view
def team_page(request: HttpRequest, track: Track, team: Team) -> HttpResponse:
    limit = selectors.run_limit(team)
    staged = _staged(request, team)
    if request.method != "POST":
        return render(request, "participation/team.html", _team_context(track, team, _form(track, limit, staged),
                                                                          limit))
    form = _form(track, limit, staged, request.POST, request.FILES)
    if form.is_valid():
        data = form.cleaned_data
        upload = data["file"] or None
        chosen = staged if upload is None else None
        try:
            submission = services.submission_receive(
                team=team, user=request.user, upload=upload, staged=chosen, run_type=data["run_type"],
                fields_used=data["fields_used"], description=data["description"], priority=data["priority"],
                replaces=data.get("replaces") or "", task=check_submission, kind=data.get("kind") or "ranked")
        except SubmissionRefused as exc:
            # refused whole (the window, the limit): neither file is kept, the form says why
            services.staged_discard(staged)
            _remember(request, team, None)
            form.drop_staged()
            form.add_error(None, str(exc))
        else:
            if upload is not None:
                services.staged_discard(staged)  # a new file was chosen: the kept one is no longer wanted
            _remember(request, team, None)
            return redirect("participation:receipt", slug=track.collection.slug, submission_id=submission.pk)
    else:
        upload = request.FILES.get("file")
        kept = None if upload is None else services.upload_keep(team=team, upload=upload,
                                                                replaces=request.POST.get("replaces", ""))
        if kept is not None:
            # a field is missing or wrong: the chosen file is kept so the form need not send it again
            services.staged_discard(staged)
            staged = kept
            _remember(request, team, staged)
            data = request.POST.copy()
            data["keep_file"] = "on"
            form = _form(track, limit, staged, data)
            form.is_valid()
    return render(request, "participation/team.html", _team_context(track, team, form, limit), status=400)


@team_view
def topics_download(request: HttpRequest, track: Track, team: Team, format: str) -> HttpResponse:
    """The track's topics for its teams, once they are published (see ``Track.topics_available``)."""
    if format not in TOPIC_FILES:
        raise Http404("No such topics format.")
    available, why = track.topics_available()
    if not available:
        return render(request, "participation/not_yet.html", {"track": track, "collection": track.collection,
                                                              "team": team, "why": why}, status=403)
    _, file_name, content_type, _ = TOPIC_FILES[format]
    text = write_topics(track.collection.topics.order_by("qid"), format)
    response = HttpResponse(text.encode("utf-8"), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{track.collection.slug}-{file_name}"'
    return response


def _own_submission(team: Team, submission_id: int) -> Submission:
    found = Submission.objects.filter(pk=submission_id, team=team).select_related("submitted_by", "job").first()
    if found is None:
        raise Http404("No such submission of your team.")
    return found


@team_view
def receipt(request: HttpRequest, track: Track, team: Team, submission_id: int) -> HttpResponse:
    submission = _own_submission(team, submission_id)
    metadata_text = yaml.safe_dump(submission.metadata, sort_keys=False, allow_unicode=True) if submission.metadata else ""
    return render(request, "participation/receipt.html", {"track": track, "collection": track.collection,
                                                          "team": team, "submission": submission,
                                                          "metadata_text": metadata_text,
                                                          "kept": store.exists(store.key(submission.stored))})


@team_view
def submission_file(request: HttpRequest, track: Track, team: Team, submission_id: int) -> HttpResponse:
    submission = _own_submission(team, submission_id)
    name = store.key(submission.stored)
    if not store.exists(name):
        raise Http404("The file is no longer kept.")
    return FileResponse(store.open_file(name), as_attachment=True, filename=submission.file_name)


@team_view
def results(request: HttpRequest, track: Track, team: Team) -> HttpResponse:
    if not track.results_released:
        return render(request, "participation/results.html", {"track": track, "collection": track.collection,
                                                              "team": team, "released": False})
    measure = request.GET.get("measure", "map")
    if measure not in DEFAULT_MEASURES:
        measure = "map"
    try:
        found = selectors.team_results(team, measure=measure)
    except (EvaluationError, ValueError) as exc:
        return render(request, "participation/results.html", {"track": track, "collection": track.collection,
                                                              "team": team, "released": True, "error": str(exc)})
    runs = [{"tag": tag, "rows": report.to_dict("records"),
             "plot": plots.participant_plot(report, tag, measure) if len(report) else "",
             "contribution": found["contributions"].get(tag)} for tag, report in found["reports"].items()]
    board = selectors.visible_leaderboard(track, team, measure=measure)
    return render(request, "participation/results.html", {
        "track": track, "collection": track.collection, "team": team, "released": True, "runs": runs,
        "measure": measure, "measures": DEFAULT_MEASURES, "loo": found["leave_one_out"], "board": board})

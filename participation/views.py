"""Participants' pages: their tracks, their team's submissions and receipts, and (once the organizer has
released them) their results. A participant sees only their own team: every other team's submission,
file and result answers 404."""

from __future__ import annotations

from functools import wraps
from pathlib import Path

import yaml
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render

from evaluation import plots
from evaluation.measures import DEFAULT_MEASURES
from evaluation.scoring import EvaluationError
from participation import selectors
from participation.forms import SubmissionForm
from participation.models import Submission, Team, Track
from participation.services import SubmissionRefused, submission_receive
from participation.tasks import check_submission


def team_view(view):
    """The signed-in user's team on the track of ``slug``, or 404 (not on a team, or no such track)."""

    @wraps(view)
    @login_required
    def wrapped(request: HttpRequest, slug: str, *args, **kwargs):
        track = get_object_or_404(Track.objects.select_related("collection"), collection__slug=slug)
        team = Team.objects.filter(track=track, members=request.user).first()
        if team is None:
            raise Http404("You are not on a team of this track.")
        return view(request, track, team, *args, **kwargs)

    return wrapped


@login_required
def portal(request: HttpRequest) -> HttpResponse:
    teams = Team.objects.filter(members=request.user).select_related("track__collection")
    rows = [{"team": t, "track": t.track, "window": t.track.window()[1]} for t in teams]
    return render(request, "participation/portal.html", {"rows": rows})


def _team_context(track: Track, team: Team, form: SubmissionForm) -> dict:
    may, why = track.window()
    return {"track": track, "collection": track.collection, "team": team, "form": form, "may_submit": may,
            "window": why, "runs": selectors.team_runs(team),
            "history": Submission.objects.filter(team=team).select_related("submitted_by")[:100]}


@team_view
def team_page(request: HttpRequest, track: Track, team: Team) -> HttpResponse:
    if request.method == "POST":
        form = SubmissionForm(request.POST, request.FILES)
        if form.is_valid():
            data = form.cleaned_data
            try:
                submission = submission_receive(team=team, user=request.user, upload=data["file"],
                                                run_type=data["run_type"], fields_used=data["fields_used"],
                                                description=data["description"], priority=data["priority"],
                                                task=check_submission)
            except SubmissionRefused as exc:
                form.add_error(None, str(exc))
            else:
                return redirect("participation:receipt", slug=track.collection.slug, submission_id=submission.pk)
        return render(request, "participation/team.html", _team_context(track, team, form), status=400)
    return render(request, "participation/team.html", _team_context(track, team, SubmissionForm()))


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
                                                          "metadata_text": metadata_text})


@team_view
def submission_file(request: HttpRequest, track: Track, team: Team, submission_id: int) -> HttpResponse:
    submission = _own_submission(team, submission_id)
    path = Path(submission.stored)
    if not path.is_file():
        raise Http404("The file is no longer kept.")
    return FileResponse(path.open("rb"), as_attachment=True, filename=submission.file_name)


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

"""The organizer's side of participation (in the console): open the collection as a track with its window
and rules, make teams, follow the submissions, pool from them, and release the results to teams."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import urlencode

from participation import selectors
from participation.forms import TeamForm, TrackForm
from participation.models import Team, Track
from participation.services import results_release
from pooling.selectors import free_pool_name
from workbench.access.audit import audit_record
from workbench.access.rules import organizer_required
from workbench.models import Collection


def _page(request, collection, track, form, team_form, status=200):
    overview = selectors.submissions_overview(track) if track.pk else []
    teams = Team.objects.filter(track=track).prefetch_related("members") if track.pk else []
    # a NEW pool (never the live one unless the organizer types its name) of each team's first N runs by
    # priority, at the track's depth, from the runs offered to the pool
    pool_url = reverse("pooling:pools", args=[collection.slug]) + "?" + urlencode({
        "name": free_pool_name(collection, "submissions"), "strategy": "depth", "depth": track.depth,
        "runs_per_team": track.pooled_runs_per_team})
    return render(request, "participation/manage.html", {
        "collection": collection, "track": track, "form": form, "team_form": team_form, "teams": teams,
        "overview": overview, "pool_url": pool_url}, status=status)


@organizer_required
def manage(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    track = Track.objects.filter(collection=collection).first() or Track(collection=collection,
                                                                         depth=collection.max_depth)
    form = TrackForm(request.POST or None, instance=track)
    if request.method == "POST":
        if form.is_valid():
            form.save()
            audit_record(collection=collection, actor=request.user, action="track settings changed",
                         detail=", ".join(form.changed_data))
            messages.success(request, "Track settings saved.")
            return redirect("participation_console:manage", slug=slug)
        return _page(request, collection, track, form, None, status=400)
    return _page(request, collection, track, form, TeamForm(track=track) if track.pk else None)


@organizer_required
def team_add(request: HttpRequest, slug: str) -> HttpResponse:
    track = get_object_or_404(Track, collection__slug=slug)
    form = TeamForm(request.POST or None, track=track)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        team = Team.objects.create(track=track, name=data["name"], display_name=data["display_name"])
        team.members.set(data["members"])
        audit_record(collection=track.collection, actor=request.user, action="team added",
                     detail=f"{team.name}: {', '.join(m.username for m in data['members'])}")
        messages.success(request, f"Team {team.name!r} added with {len(data['members'])} member(s).")
        return redirect("participation_console:manage", slug=slug)
    return _page(request, track.collection, track, TrackForm(instance=track), form,
                 status=400 if request.method == "POST" else 200)


@organizer_required
def release(request: HttpRequest, slug: str) -> HttpResponse:
    track = get_object_or_404(Track, collection__slug=slug)
    if request.method == "POST":
        released = request.POST.get("released") == "1"
        results_release(track=track, released=released, actor=request.user)
        messages.success(request, "Results released to the teams." if released else "Results withdrawn from the teams.")
    return redirect("participation_console:manage", slug=slug)

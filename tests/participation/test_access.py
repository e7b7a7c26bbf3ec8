"""Participants see their own team and nothing else: every refusal, proven."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from participation.models import Submission, Track
from participation.services import results_release
from tests.participation.conftest import run_upload, submit

pytestmark = pytest.mark.django_db


@pytest.fixture
def submitted(client, track, teams):
    client.force_login(teams["red"][1])
    submit(client, track, run_upload("red-a"))
    client.force_login(teams["blue"][1])
    submit(client, track, run_upload("blue-a", {"301": ["d3", "d1"], "302": ["d5"], "303": ["d9", "d8"]}))
    client.logout()
    return {t: Submission.objects.get(team__name=t) for t in ("red", "blue")}


def test_a_team_cannot_open_another_teams_receipt_file_or_page(client, track, teams, submitted):
    client.force_login(teams["blue"][1])
    slug = track.collection.slug
    red = submitted["red"]
    assert client.get(f"/participate/{slug}/submissions/{red.pk}/").status_code == 404
    assert client.get(f"/participate/{slug}/submissions/{red.pk}/file").status_code == 404
    page = client.get(f"/participate/{slug}/").content.decode()
    assert "blue-a" in page and "red-a" not in page and red.sha256[:16] not in page


def test_someone_on_no_team_and_anonymous_visitors_are_refused(client, track, submitted, assessor):
    slug = track.collection.slug
    urls = [f"/participate/{slug}/", f"/participate/{slug}/results/",
            f"/participate/{slug}/submissions/{submitted['red'].pk}/"]
    for url in urls:
        assert client.get(url).status_code == 302  # to the login page
    client.force_login(assessor)
    for url in urls:
        assert client.get(url).status_code == 404
    assert client.post(f"/participate/{slug}/", {"description": "x"}).status_code == 404
    assert Submission.objects.count() == 2


def test_participants_are_refused_organizer_assessor_and_results_pages(client, track, teams, submitted):
    client.force_login(teams["red"][1])
    slug = track.collection.slug
    for url in [f"/console/{slug}/", f"/console/{slug}/participation/", f"/console/{slug}/upload/",
                f"/console/{slug}/pools/", "/console/people/", f"/judge/organize/{slug}/",
                f"/collections/{slug}/leaderboard/", f"/collections/{slug}/runs/blue-a/",
                f"/collections/{slug}/downloads/qrels.txt", f"/collections/{slug}/downloads/pool.txt"]:
        assert client.get(url).status_code == 403, url
    assert client.post(f"/console/{slug}/participation/release/", {"released": "1"}).status_code == 403
    assert not Track.objects.get().results_released
    assert client.get("/").url == "/participate/"


def test_results_are_shown_only_once_released_and_only_the_teams_own(client, track, teams, submitted, tmp_path,
                                                                    settings, django_capture_on_commit_callbacks):
    from judging.services import qrels_import
    from pooling.services import pool_build

    pool_build(collection=track.collection, depth=2, runs_per_team=1)
    (tmp_path / "q.txt").write_text("301 0 d1 1\n301 0 d3 1\n302 0 d5 1\n303 0 d9 0\n")
    settings.BOARD_ON_CHANGE = True
    with django_capture_on_commit_callbacks(execute=True):  # the import asks for the board (the job runs at once)
        qrels_import(collection=track.collection, source=tmp_path / "q.txt")
    client.force_login(teams["red"][1])
    slug = track.collection.slug
    runs = client.get(f"/participate/{slug}/").context["runs"]
    # red-a's top 10 on 3 topics: d1 d2 d3 / d4 d5 d6 / d7 d8 d9; judged: d1 d3 d5 d9 -> 4 of 9 retrieved,
    # over 10 per topic: (2/10 + 1/10 + 1/10) / 3
    assert [(r["tag"], r["pooled"]) for r in runs] == [("red-a", True)]
    assert runs[0]["judged_at_10"] == pytest.approx((0.2 + 0.1 + 0.1) / 3)
    before = client.get(f"/participate/{slug}/results/").content.decode()
    assert "have not released the results yet" in before and "red-a" not in before
    results_release(track=track)
    page = client.get(f"/participate/{slug}/results/").content.decode()
    assert "Run red-a" in page and "Run blue-a" not in page
    # its contribution to the pool (depth 2, one run per team): d1 d2 / d4 d5 / d7 d8 from red-a; blue-a
    # brings d3 d1 / d5 / d9 d8; judged relevant: d1 d3 d5; so red-a: 6 documents, 2 relevant (d1, d5),
    # unique d2 d4 d7 (none relevant)
    assert "6 documents from this run (2 relevant), 3 found by no other run, 0 of them relevant" in page
    assert "All runs" not in page  # the leaderboard is hidden by default
    track.leaderboard = Track.Leaderboard.ANONYMOUS
    track.save()
    page = client.get(f"/participate/{slug}/results/").content.decode()
    assert "All runs" in page and "another team" in page and "blue-a" not in page


def test_only_organizers_manage_the_track(client, organizer, track, teams):
    slug = track.collection.slug
    client.force_login(organizer)
    assert client.get(f"/console/{slug}/participation/").status_code == 200
    response = client.post(f"/console/{slug}/participation/teams/", {"name": "green", "members": "rosa nobody"})
    assert response.status_code == 400 and "No active account &#x27;nobody&#x27;" in response.content.decode()
    assert client.post(f"/console/{slug}/participation/teams/", {"name": "red"}).status_code == 400
    assert client.post(f"/console/{slug}/participation/teams/",
                       {"name": "green", "members": "rosa"}).status_code == 302
    assert list(User.objects.get(username="rosa").teams.values_list("name", flat=True)) == ["red", "green"] or \
        sorted(User.objects.get(username="rosa").teams.values_list("name", flat=True)) == ["green", "red"]
    client.post(f"/console/{slug}/participation/release/", {"released": "1"})
    assert Track.objects.get().results_released

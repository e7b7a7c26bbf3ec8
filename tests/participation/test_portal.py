"""The team page serves participants like the portals they know: the topics to download, the guidelines
and the track's dates; the runs used of the limit; a refused form that keeps what was chosen (the file
too); anonymous labels that two tied runs never share."""

from __future__ import annotations

import html
import io
import json
import os
import re
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.core.files.uploadedfile import TemporaryUploadedFile
from django.test import Client
from django.utils import timezone

from participation import services
from participation.models import Submission, Team, Track
from participation.selectors import relative_time
from participation.services import results_release
from participation.topic_files import write_topics
from tests import factories
from tests.participation.conftest import _participant, run_upload, submit
from workbench.collections import files as store
from workbench.formats.topics import read_topics
from workbench.models import Run, Topic

pytestmark = pytest.mark.django_db


def track_var(track) -> Path:
    return Path(settings.VAR_DIR)


def _tag(page: str, element: str, name: str) -> str:
    found = re.search(rf'<{element}[^>]*name="{name}"[^>]*>', page)
    assert found, f"no {element} {name}"
    return found.group(0)


def _page(client, track) -> str:
    response = client.get(f"/participate/{track.collection.slug}/")
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def test_a_participant_downloads_the_topics_in_three_formats_that_read_back_as_the_collections(client, track,
                                                                                                 teams):
    Topic.objects.filter(qid="303").update(narrative="A relevant document names an achievement.",
                                           extra={"smry": "Hubble's results", "tags": ["space", "optics"]})
    client.force_login(teams["blue"][1])
    slug = track.collection.slug
    page = _page(client, track)
    assert "3 topics, to download:" in page and f"/participate/{slug}/topics/trec" in page
    expected = [(t.qid, t.title, t.description, t.narrative) for t in Topic.objects.order_by("qid")]
    for format, name in (("trec", "topics.txt"), ("tsv", "topics.tsv"), ("jsonl", "topics.jsonl")):
        response = client.get(f"/participate/{slug}/topics/{format}")
        assert response.status_code == 200, format
        assert response["Content-Disposition"] == f'attachment; filename="{slug}-{name}"'
        read = read_topics(io.BytesIO(response.content), name=name)
        if format == "tsv":  # titles only
            assert [(t.qid, t.title) for t in read] == [e[:2] for e in expected]
        else:
            assert [(t.qid, t.title, t.description, t.narrative) for t in read] == expected
    trec = client.get(f"/participate/{slug}/topics/trec").content.decode()
    assert "<num> Number: 301\n<title> International Organized Crime" in trec and "<smry> Hubble's results" in trec
    last = json.loads(client.get(f"/participate/{slug}/topics/jsonl").content.decode().splitlines()[-1])
    assert last["tags"] == ["space", "optics"]
    assert client.get(f"/participate/{slug}/topics/xml").status_code == 404


def test_topics_wait_for_the_track_to_open_unless_the_organizer_publishes_them(client, track, teams):
    slug = track.collection.slug
    client.force_login(teams["red"][1])
    track.opens_at = timezone.now() + timedelta(days=3)
    track.save()
    page = _page(client, track)
    assert "Not yet: the topics are published when submissions open, on" in page and "topics/trec" not in page
    response = client.get(f"/participate/{slug}/topics/trec")
    assert response.status_code == 403 and b"301" not in response.content
    assert "Not yet: the topics are published when submissions open, on" in response.content.decode()
    track.open, track.opens_at = False, None
    track.save()
    assert "Not yet: the topics are published when the track opens for submissions" in _page(client, track)
    assert client.get(f"/participate/{slug}/topics/tsv").status_code == 403
    track.topics_published = True
    track.save()
    assert client.get(f"/participate/{slug}/topics/tsv").content.decode().startswith("301\tInternational")


def test_outsiders_and_teams_of_other_tracks_are_refused_the_topics(client, track, teams, assessor, organizer):
    slug = track.collection.slug
    url = f"/participate/{slug}/topics/trec"
    assert client.get(url).status_code == 302  # to the login page
    client.force_login(assessor)
    assert client.get(url).status_code == 404
    other = Track.objects.create(collection=factories.collection_with_topics("other"), open=True)
    stranger = _participant("olga")
    Team.objects.create(track=other, name="green").members.add(stranger)
    client.force_login(stranger)
    assert client.get(url).status_code == 404
    assert client.get("/participate/other/topics/trec").status_code == 200
    client.force_login(organizer)  # organizers have the console; the portal is for teams
    assert client.get(url).status_code == 404


def test_the_team_page_shows_the_guidelines_and_the_dates_in_utc_and_from_now(client, track, teams):
    collection = track.collection
    collection.guidelines = "Judge the **whole** document.\n\n<script>alert(1)</script>"
    collection.save()
    track.opens_at = timezone.now() - timedelta(days=1, hours=2)
    track.closes_at = timezone.now() + timedelta(days=3, minutes=5)
    track.save()
    client.force_login(teams["red"][1])
    page = _page(client, track)
    assert "Judge the <strong>whole</strong> document." in page and "<script>alert(1)" not in page
    assert f"Submissions open</dt><dd><time datetime=\"{track.opens_at.isoformat()}" in page
    assert f"{track.opens_at:%Y-%m-%d %H:%M} UTC</time> (1 day ago)" in page
    assert f"Deadline</dt><dd><time datetime=\"{track.closes_at.isoformat()}" in page
    assert f"{track.closes_at:%Y-%m-%d %H:%M} UTC</time> (in 3 days)" in page


@pytest.mark.parametrize(("delta", "text"), [
    (timedelta(days=3), "in 3 days"), (timedelta(days=1, hours=23, minutes=59), "in 2 days"),
    (timedelta(hours=-5), "5 hours ago"), (timedelta(minutes=1), "in 1 minute"), (timedelta(seconds=20), "now"),
    (-timedelta(days=1), "1 day ago")])
def test_dates_read_as_a_person_says_them(delta, text):
    now = timezone.now()
    assert relative_time(now + delta, now) == text


def test_the_page_counts_the_runs_used_of_the_limit(client, track, teams):
    client.force_login(teams["red"][1])
    page = _page(client, track)
    assert "0 of 2 runs submitted" in page and "You may send 2 more runs." in page and ">Submit</button>" in page
    assert re.search(r'name="priority" value="1"', page)
    portal = client.get("/participate/").content.decode()
    assert f"open until {track.closes_at:%Y-%m-%d %H:%M} UTC (in 2 days)" in portal
    submit(client, track, run_upload("red-a"))
    page = _page(client, track)
    assert "1 of 2 runs submitted" in page and "You may send 1 more run, or replace one of your 1." in page
    assert '<option value="red-a">run red-a</option>' in page  # replacing a run is offered beside a new one
    assert re.search(r'name="priority" value="2"', page)  # a new run comes after the team's first


def test_a_refused_form_keeps_every_field_and_the_chosen_file(client, track, teams):
    client.force_login(teams["red"][1])
    slug = track.collection.slug
    page = _page(client, track)
    # the browser stops the form before the upload when the description is missing
    assert " required" in _tag(page, "textarea", "description") and " required" in _tag(page, "input", "file")
    upload = run_upload("red-a", name="my run.txt")
    response = submit(client, track, upload, description="", run_type="manual",
                      fields_used=["title", "narrative"], priority="3")
    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    assert "Describe how the run was made (the track asks for it)." in page
    assert '<option value="manual" selected>' in page and 'name="priority" value="3"' in page
    assert 'value="narrative" id="id_fields_used_2" checked' in page and 'value="description" id' in page
    size = len(run_upload("red-a").read())
    assert f"Keep the file you chose: my run.txt ({size}\xa0bytes)" in page
    assert " checked" in _tag(page, "input", "keep_file")
    assert " required" not in _tag(page, "input", "file")  # no longer required: the file is kept
    staged = list((track_var(track) / "uploads" / "participation").rglob("*"))
    assert [p.name for p in staged if p.is_file()] == ["my_run.txt"]
    # another session of the same participant, and the other team, are not offered the kept file
    other = Client()
    other.force_login(teams["red"][1])
    assert "Keep the file you chose" not in _page(other, track)
    client_blue = Client()
    client_blue.force_login(teams["blue"][1])
    assert "Keep the file you chose" not in _page(client_blue, track)
    # sent again with the description and without choosing the file again: accepted from the kept file
    response = client.post(f"/participate/{slug}/", {"keep_file": "on", "run_type": "manual",
                                                     "fields_used": ["title", "narrative"], "priority": "3",
                                                     "description": "BM25 with RM3"})
    assert response.status_code == 302, response.content.decode()[:3000]
    submission = Submission.objects.get()
    assert (submission.status, submission.tag, submission.file_name) == ("accepted", "red-a", "my run.txt")
    assert (submission.run_type, submission.fields_used, submission.priority) == ("manual", ["title", "narrative"], 3)
    assert not [p for p in (track_var(track) / "uploads" / "participation").rglob("*") if p.is_file()]
    assert "Keep the file you chose" not in _page(client, track)


def test_a_kept_file_is_dropped_when_another_is_chosen_or_the_submission_is_refused(client, track, teams):
    client.force_login(teams["red"][1])
    submit(client, track, run_upload("red-a", name="first.run"), description="")
    submit(client, track, run_upload("red-a", name="second.run"), description="")
    files = [p.name for p in (track_var(track) / "uploads" / "participation").rglob("*") if p.is_file()]
    assert files == ["second.run"]
    assert "Keep the file you chose: second.run" in _page(client, track)
    track.closes_at = timezone.now() - timedelta(seconds=1)
    track.save()
    response = client.post(f"/participate/{track.collection.slug}/", {"keep_file": "on", "run_type": "automatic",
                                                                      "priority": "1", "description": "late"})
    assert response.status_code == 400 and "the deadline passed on" in response.content.decode()
    assert not [p for p in (track_var(track) / "uploads" / "participation").rglob("*") if p.is_file()]
    assert not Submission.objects.exists()


def test_kept_files_nobody_came_back_for_are_removed_after_a_day(track, teams):
    team = teams["red"][0]
    old = services.upload_stage(team=team, upload=run_upload("red-a", name="old.run"))
    day_ago = time.time() - services.STAGED_FOR.total_seconds() - 60
    os.utime(store.local_path(old.stored), (day_ago, day_ago))
    fresh = services.upload_stage(team=team, upload=run_upload("red-a", name="fresh.run"))
    assert not store.exists(old.stored) and store.exists(fresh.stored)
    assert services.staged_find(team, old.record()) is None
    assert services.staged_find(team, fresh.record()) == fresh
    assert services.staged_find(teams["blue"][0], fresh.record()) is None  # tied to its team
    assert services.staged_find(team, {"token": "../../etc", "name": "passwd"}) is None


def test_the_upload_is_moved_into_place_not_copied_and_hashed_by_the_check_job(track, teams):
    team, user = teams["red"]
    upload = TemporaryUploadedFile("big.run", "text/plain", 0, "utf-8")
    upload.write(run_upload("red-a").read())
    upload.flush()
    spooled = Path(upload.temporary_file_path())
    inode = spooled.stat().st_ino
    submission = services.submission_receive(team=team, user=user, upload=upload, description="x")
    kept = store.local_path(submission.stored)
    assert not spooled.exists() and kept.stat().st_ino == inode  # the same file, moved
    assert submission.sha256 == "" and submission.size == kept.stat().st_size
    checked = services.submission_check(submission)
    assert checked.status == "accepted" and len(checked.sha256) == 64


def test_anonymous_labels_are_unique_even_for_tied_runs(client, track, teams, tmp_path):
    from judging.services import qrels_import

    tied = {"301": ["d3", "d1"], "302": ["d5"], "303": ["d9", "d8"]}
    client.force_login(teams["red"][1])
    submit(client, track, run_upload("red-a"))
    client.force_login(teams["blue"][1])
    submit(client, track, run_upload("blue-a", tied))
    submit(client, track, run_upload("blue-b", tied))
    green = Team.objects.create(track=track, name="green")
    gina = _participant("gina")
    green.members.add(gina)
    client.force_login(gina)
    submit(client, track, run_upload("green-a", tied))
    assert Run.objects.count() == 4
    (tmp_path / "q.txt").write_text("301 0 d1 1\n301 0 d3 1\n302 0 d5 1\n303 0 d9 0\n")
    qrels_import(collection=track.collection, source=tmp_path / "q.txt")
    track.leaderboard = Track.Leaderboard.ANONYMOUS
    track.save()
    results_release(track=track)
    client.force_login(teams["red"][1])
    board = client.get(f"/participate/{track.collection.slug}/results/").context["board"]
    others = [row for row in board if not row["own"]]
    assert len({row["rank"] for row in others}) == 1  # the three other runs tie...
    labels = [row["tag"] for row in others]
    assert len(set(labels)) == 3 and all(label.startswith("run ") for label in labels)  # ...under three labels
    assert [row["tag"] for row in board] == [row["tag"] if row["own"] else f"run {i}"
                                             for i, row in enumerate(board, start=1)]
    assert not {"blue-a", "blue-b", "green-a", "blue", "green"} & {v for row in board for v in row.values()
                                                                  if isinstance(v, str)}
    again = client.get(f"/participate/{track.collection.slug}/results/").context["board"]
    assert [row["tag"] for row in again] == [row["tag"] for row in board]  # stable from one visit to the next


def test_the_topics_writer_refuses_an_unknown_format():
    with pytest.raises(ValueError, match="unknown topics format 'xml'"):
        write_topics([], "xml")



def test_the_organizer_publishes_the_topics_from_the_console_before_the_track_opens(client, track, teams,
                                                                                    organizer):
    slug = track.collection.slug
    track.open = False
    track.save()
    client.force_login(organizer)
    page = client.get(f"/console/{slug}/participation/").content.decode()
    assert "Topics published" in page and "from the moment submissions open" in page
    response = client.post(f"/console/{slug}/participation/", {
        "max_runs_per_team": "2", "pooled_runs_per_team": "1", "depth": "3", "require_description": "on",
        "topics_published": "on", "leaderboard": "hidden"})
    assert response.status_code == 302
    client.force_login(teams["red"][1])
    page = _page(client, track)
    assert "Submissions are closed" in page and "3 topics, to download:" in page
    assert client.get(f"/participate/{slug}/topics/tsv").status_code == 200


@pytest.mark.parametrize("form", [
    {"keep_file": "on", "description": "x", "priority": "1", "run_type": "automatic"},  # nothing kept
    {"priority": "many", "run_type": "robotic", "fields_used": ["smell"], "description": "x"},
    {"replaces": "someone-elses", "description": "x", "priority": "1", "run_type": "automatic"},
    {"description": "x" * 6000, "priority": "0", "run_type": "automatic"},
])
def test_odd_forms_are_refused_field_by_field_never_with_an_error_page(client, track, teams, form):
    client.force_login(teams["red"][1])
    response = client.post(f"/participate/{track.collection.slug}/", form)
    assert response.status_code == 400
    assert 'class="errorlist' in response.content.decode() and not Submission.objects.exists()


def test_a_session_naming_a_kept_file_that_is_gone_offers_nothing(client, track, teams):
    client.force_login(teams["red"][1])
    submit(client, track, run_upload("red-a"), description="")
    for path in (track_var(track) / "uploads" / "participation").rglob("*.run"):
        path.unlink()
    page = _page(client, track)
    assert "Keep the file you chose" not in page
    response = client.post(f"/participate/{track.collection.slug}/", {"keep_file": "on", "description": "x",
                                                                      "priority": "1", "run_type": "automatic"})
    assert response.status_code == 400 and "Choose a run file." in response.content.decode()


def test_at_the_limit_a_new_run_with_a_field_missing_is_not_kept_but_a_replacement_is(client, track, teams):
    client.force_login(teams["red"][1])
    submit(client, track, run_upload("red-a"))
    submit(client, track, run_upload("red-b"))
    staging = track_var(track) / "uploads" / "participation"
    response = submit(client, track, run_upload("red-c"), description="")
    assert response.status_code == 400 and "Keep the file you chose" not in response.content.decode()
    assert not [p for p in staging.rglob("*") if p.is_file()]
    response = submit(client, track, run_upload("red-b"), description="", replaces="red-b")
    assert "Keep the file you chose: red-b.run" in html.unescape(response.content.decode())
    assert [p.name for p in staging.rglob("*") if p.is_file()] == ["red-b.run"]

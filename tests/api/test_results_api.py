"""Per-topic results, release bundles and a team's runs over HTTP, through the services and access of the pages:
the per-topic values are the stored leaderboard's (the numbers the run pages show), a bundle is built by the
downloads page's job and downloaded as its zip, a run is replaced as the portal replaces it."""

from __future__ import annotations

import io
import zipfile

import pytest

from evaluation import board, cache, selectors, tasks
from judging.models import Judgment
from participation.models import Submission
from tests.api.conftest import bearer
from tests.api.test_api import api_submit
from tests.participation.conftest import run_upload, submit
from workbench.access.people import collection_organizer_add
from workbench.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(client, track, teams, organizer):
    """The track with two accepted runs and a few judgments; its organizer."""
    _, red = teams["red"]
    _, blue = teams["blue"]
    collection_organizer_add(collection=track.collection, user=organizer)
    assert api_submit(client, track, red, run_upload("red-a")).json()["status"] == "accepted"
    ranking = {"301": ["d3", "d1", "d2"], "302": ["d5", "d4", "d6"], "303": ["d9", "d8", "d7"]}
    assert api_submit(client, track, blue, run_upload("blue-a", ranking)).json()["status"] == "accepted"
    for qid, docno, grade in (("301", "d1", 1), ("301", "d2", 0), ("302", "d4", 1), ("303", "d8", 1)):
        Judgment.objects.create(collection=track.collection, topic=track.collection.topics.get(qid=qid), docno=docno,
                                grade=grade, assessor="nist", source=Judgment.Source.IMPORT)
    return track.collection


def test_per_topic_results_are_the_stored_leaderboard_s_and_the_run_pages_numbers(client, judged, organizer,
                                                                                  researcher):
    url = f"/api/v1/collections/{judged.slug}/results"
    answer = client.get(url, {"measures": "map,P.10"}, **bearer(organizer))
    assert answer.status_code == 200, answer.content
    data = answer.json()
    assert data["measures"] == ["map", "P_10"] and data["topics"] == ["301", "302", "303"]
    runs = {row["run"]: row for row in data["runs"]}
    assert set(runs) == {"red-a", "blue-a"}
    for tag, row in runs.items():
        page = selectors.run_report(judged, tag, measure="map")  # the run page's table
        assert {qid: values["map"] for qid, values in row["per_topic"].items()} == pytest.approx(
            dict(zip(page["qid"], page["score"], strict=True)))
        assert row["measures"]["map"] == pytest.approx(sum(page["score"]) / 3)
    assert runs["blue-a"]["per_topic"]["301"] == {"map": pytest.approx(0.5), "P_10": pytest.approx(0.1),
                                                  "judged_10": pytest.approx(0.2)}  # 2 of the top 10 judged
    # the same means as the leaderboard endpoint
    board = client.get(f"/api/v1/collections/{judged.slug}/leaderboard", {"measures": "map,P.10"},
                       **bearer(organizer)).json()
    assert {r["run"]: r["measures"] for r in board["runs"]} == {t: r["measures"] for t, r in runs.items()}
    # one run; an unknown one named; a researcher only where the organizers allow it
    one = client.get(url, {"runs": "blue-a", "measures": "map,P.10"}, **bearer(organizer)).json()
    assert one["runs"] == [runs["blue-a"]] and one["topics"] == data["topics"]  # the same numbers as among all
    unknown = client.get(url, {"runs": "blue-a,nope"}, **bearer(organizer))
    assert unknown.status_code == 400 and "'nope'" in unknown.json()["detail"]
    assert client.get(url, **bearer(researcher)).status_code == 403
    judged.researchers_may_download = True
    judged.save(update_fields=["researchers_may_download"])
    assert client.get(url, **bearer(researcher)).json()["runs"] == client.get(url, **bearer(organizer)).json()["runs"]


def test_a_bundle_is_built_by_a_job_listed_and_downloaded_as_the_downloads_page_s(client, judged, organizer,
                                                                                  researcher, teams):
    url = f"/api/v1/collections/{judged.slug}/bundles"
    assert client.get(url, **bearer(researcher)).status_code == 403
    assert client.post(url, {"policy": "majority"}, content_type="application/json",
                       **bearer(researcher)).status_code == 403
    assert client.get(url, **bearer(teams["red"][1])).status_code == 403
    bad = client.post(url, {"policy": "nonsense"}, content_type="application/json", **bearer(organizer))
    assert bad.status_code == 400 and "nonsense" in bad.json()["detail"]
    started = client.post(url, {"policy": "majority"}, content_type="application/json", **bearer(organizer))
    assert started.status_code == 202, started.content
    job = client.get(started.json()["url"], **bearer(organizer)).json()
    assert job["kind"] == "release bundle" and job["status"] == "done"
    listed = client.get(url, **bearer(organizer)).json()
    assert [(b["job"], b["status"], b["policy"]) for b in listed] == [(job["id"], "done", "majority")]
    zipped = client.get(listed[0]["download"], **bearer(organizer))
    assert zipped.status_code == 200 and zipped["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(b"".join(zipped.streaming_content))) as archive:
        names = archive.namelist()
        assert "robust/qrels.txt" in names and len(names) == listed[0]["files"] + 1  # and its README
        assert archive.read("robust/qrels.txt").decode().split("\n")[0] == "301 0 d1 1"
        assert "majority" in archive.read("robust/README.md").decode()
    # the page's own download link gives the same file
    client.force_login(organizer)
    page = client.get(f"/collections/{judged.slug}/downloads/release/{job['id']}/")
    assert b"".join(page.streaming_content) == b"".join(client.get(listed[0]["download"], **bearer(organizer))
                                                        .streaming_content)
    # a researcher the organizers allow lists, builds and downloads as the page lets them
    judged.researchers_may_download = True
    judged.save(update_fields=["researchers_may_download"])
    assert client.get(listed[0]["download"], **bearer(researcher)).status_code == 200
    theirs = client.post(url, {}, content_type="application/json", **bearer(researcher))
    assert theirs.status_code == 202 and client.get(theirs.json()["url"], **bearer(researcher)).status_code == 200
    # a bundle still being built: 409 saying to follow its job; one of no such bundle: 404
    waiting = Job.objects.create(kind="release bundle", collection=judged, params={"policy": "adjudicated"})
    answer = client.get(f"{url}/{waiting.pk}", **bearer(organizer))
    assert answer.status_code == 409 and f"/api/v1/jobs/{waiting.pk}" in answer.json()["detail"]
    other = Job.objects.create(kind="pool build", collection=judged, status=Job.Status.DONE)
    assert client.get(f"{url}/{other.pk}", **bearer(organizer)).status_code == 404


def test_a_team_lists_its_runs_and_replaces_one_over_http_as_the_portal_does(client, track, teams):
    (_, red), (_, blue) = teams["red"], teams["blue"]
    slug = track.collection.slug
    for tag in ("red-a", "red-b"):
        assert api_submit(client, track, red, run_upload(tag)).json()["status"] == "accepted"
    runs = client.get(f"/api/v1/tracks/{slug}/runs", **bearer(red)).json()
    assert [(r["tag"], r["priority"], r["lines"], r["topics"]) for r in runs] == [("red-a", 1, 9, 3), ("red-b", 1, 9, 3)]
    first = runs[0]["submission"]
    # at the limit: a new tag is refused naming the limit, a file whose tag is not the chosen run is refused
    assert api_submit(client, track, red, run_upload("red-c")).status_code == 409
    wrong = api_submit(client, track, red, run_upload("red-c"), replaces="red-b").json()
    assert wrong["status"] == "refused"
    assert wrong["problems"] == ["red-c.run: the run tag in the file is 'red-c', not 'red-b', the run you chose to "
                                 "replace"]
    missing = api_submit(client, track, red, run_upload("red-z"), replaces="red-z")
    assert missing.status_code == 400 and "replaces" in missing.json()["detail"]
    answer = api_submit(client, track, red, run_upload("red-a", {"301": ["d3", "d2", "d1"]}), priority="2",
                        replaces="red-a")
    assert answer.status_code == 201
    receipt = answer.json()
    assert (receipt["status"], receipt["tag"], receipt["replaces"], receipt["priority"]) == ("accepted", "red-a",
                                                                                           "red-a", 2)
    assert Submission.objects.get(pk=first).status == "replaced"
    runs = client.get(f"/api/v1/tracks/{slug}/runs", **bearer(red)).json()
    assert [(r["tag"], r["priority"], r["lines"]) for r in runs] == [("red-b", 1, 9), ("red-a", 2, 3)]
    assert runs[1]["submission"] == receipt["id"]
    # the same replacement through the portal gives blue the same receipt
    client.force_login(blue)
    for tag in ("blue-a", "blue-b"):
        submit(client, track, run_upload(tag))
    submit(client, track, run_upload("blue-a", {"301": ["d3", "d2", "d1"]}), priority="2", replaces="blue-a")
    portal = Submission.objects.filter(team__name="blue").order_by("-pk").first()
    shown = client.get(f"/api/v1/tracks/{slug}/submissions/{portal.pk}", **bearer(blue)).json()
    same = ("status", "replaces", "priority", "warnings", "problems", "run_type", "fields_used", "description")
    assert {k: str(shown[k]).replace("blue", "red") for k in same} == {k: str(receipt[k]) for k in same}
    # another team's runs are not listed to red, nor red's to a stranger
    assert [r["tag"] for r in client.get(f"/api/v1/tracks/{slug}/runs", **bearer(blue)).json()] == ["blue-b",
                                                                                                   "blue-a"]


def test_while_the_scores_are_computed_per_topic_results_and_leaderboard_answer_202_with_the_job(
        client, judged, organizer, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}  # no worker comes
    Judgment.objects.filter(collection=judged, docno="d8").delete()
    Judgment.objects.create(collection=judged, topic=judged.topics.get(qid="303"), docno="d7", grade=1,
                            assessor="nist", source=Judgment.Source.IMPORT)
    tasks.request_board(judged)  # what the import's service asks once committed
    cache.clear_caches()
    job = Job.objects.filter(collection=judged, kind=board.KIND, status=Job.Status.QUEUED).get()
    for path in ("results", "leaderboard"):  # recall.5: a measure the previous board has not, so none to show
        answer = client.get(f"/api/v1/collections/{judged.slug}/{path}", {"measures": "map,P.10,recall.5"},
                            **bearer(organizer))
        assert answer.status_code == 202 and answer["Retry-After"] == "5"
        assert answer.json() == {"detail": "the scores are being computed; try again in a moment", "job": job.pk}


def test_a_team_reads_its_own_released_per_topic_results_with_the_organizer_s_numbers(client, judged, organizer,
                                                                                      teams):
    _, red = teams["red"]
    url = f"/api/v1/tracks/{judged.slug}/results"
    assert client.get(url, **bearer(red)).json()["released"] is False
    assert client.put(f"/api/v1/tracks/{judged.slug}/release", {"released": True}, content_type="application/json",
                      **bearer(organizer)).status_code == 200
    mine = client.get(url, **bearer(red)).json()
    assert mine["released"] is True and [run["tag"] for run in mine["runs"]] == ["red-a"]  # not blue's
    organizers = client.get(f"/api/v1/collections/{judged.slug}/results", {"runs": "red-a"},
                            **bearer(organizer)).json()["runs"][0]["per_topic"]
    assert {row["qid"]: row["score"] for row in mine["runs"][0]["topics"]} == pytest.approx(
        {qid: values["map"] for qid, values in organizers.items()})
    assert client.get(f"/api/v1/collections/{judged.slug}/results", **bearer(red)).status_code == 403

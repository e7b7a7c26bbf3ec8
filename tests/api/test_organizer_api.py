"""The organizers' half of the API: create a collection, upload its files (the console's upload job), assign
topics to assessors and release a track's results, each through the console's own form and service; the
participants, researchers and organizers of other collections are refused, a bad file names its lines."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile

from judging.selectors import assessor_queue
from tests.api.conftest import bearer
from tests.participation.conftest import run_upload
from workbench.access.audit import AuditEntry
from workbench.access.people import collection_organizer_add
from workbench.models import Collection, Run

pytestmark = pytest.mark.django_db


@pytest.fixture
def organizing(track, organizer):
    collection_organizer_add(collection=track.collection, user=organizer)
    return track.collection


@pytest.fixture
def other_organizer(db) -> User:
    user = User.objects.create_user("otto", password="pw-organizer-2")
    user.groups.add(Group.objects.get_or_create(name="organizers")[0])
    return user


def upload(client, slug, user, kind, *files, **options):
    return client.post(f"/api/v1/collections/{slug}/uploads", {"kind": kind, "files": list(files), **options},
                       **bearer(user))


def test_an_organizer_creates_a_collection_and_becomes_its_organizer(client, organizer, teams, researcher):
    grades = [{"grade": 0, "label": "No"}, {"grade": 1, "label": "Partly"}, {"grade": 2, "label": "Highly"}]
    made = client.post("/api/v1/collections", {"slug": "news24", "name": "News 2024", "grades": grades,
                       "relevant_from": 1}, content_type="application/json", **bearer(organizer))
    assert made.status_code == 201, made.content
    assert made.json()["organizer"] is True and made.json()["grades"] == [0, 1, 2]
    collection = Collection.objects.get(slug="news24")
    assert list(collection.organizers.all()) == [organizer] and collection.name == "News 2024"
    assert AuditEntry.objects.filter(collection=collection, action="collection created").exists()
    again = client.post("/api/v1/collections", {"slug": "news24"}, content_type="application/json",
                        **bearer(organizer))
    assert again.status_code == 400 and again.json()["problems"] == ["slug: Collection with this Slug already exists."]
    for user in (teams["red"][1], researcher):
        refused = client.post("/api/v1/collections", {"slug": "mine"}, content_type="application/json", **bearer(user))
        assert refused.status_code == 403 and refused.json()["detail"] == "only organizers may create a collection"
    assert not Collection.objects.filter(slug="mine").exists()


def test_an_uploaded_run_file_is_imported_by_the_job(client, organizing, organizer):
    answer = upload(client, organizing.slug, organizer, "runs", run_upload("bm25"), team="lab", description="BM25")
    assert answer.status_code == 202, answer.content
    job = client.get(answer.json()["url"], **bearer(organizer)).json()
    assert job["status"] == "done" and job["kind"] == "runs import"
    run = Run.objects.get(collection=organizing, tag="bm25")
    assert (run.team, run.description, run.contributes) == ("lab", "BM25", True)


def test_a_bad_file_or_too_many_answer_400_or_413_and_import_nothing(client, settings, organizing, organizer):
    bad = upload(client, organizing.slug, organizer, "runs",
                 run_upload("bm25", name="bm25.run", extra="302 Q0 d9 seven 1.0 bm25\n"))
    assert bad.status_code == 400
    assert bad.json()["problems"] == ["bm25.run:10: rank 'seven' is not an integer"]
    assert not Run.objects.filter(collection=organizing).exists()
    unknown = upload(client, organizing.slug, organizer, "pictures", run_upload("x"))
    assert unknown.status_code == 400 and "'pictures' is not one of topics, documents, runs, qrels" in unknown.json()["detail"]
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 2
    many = upload(client, organizing.slug, organizer, "runs", *(run_upload(f"r{i}") for i in range(3)))
    assert many.status_code == 413 and many.json()["detail"].startswith("This upload holds more than 2 files")
    two = upload(client, organizing.slug, organizer, "topics", SimpleUploadedFile("a.txt", b"x"),
                 SimpleUploadedFile("b.txt", b"y"))
    assert two.status_code == 400 and two.json()["problems"] == ["files: Topics: one file at a time."]


def test_others_may_not_upload(client, organizing, teams, researcher, other_organizer):
    for user in (teams["red"][1], researcher, other_organizer):
        refused = upload(client, organizing.slug, user, "runs", run_upload("theirs"))
        assert refused.status_code == 403
        assert refused.json()["detail"] == f"you are not an organizer of collection {organizing.slug!r}"
    assert upload(client, "nowhere", other_organizer, "runs", run_upload("x")).status_code == 404
    assert not Run.objects.exists()


def test_assigned_topics_show_in_the_assessor_s_queue(client, organizing, organizer, assessor, other_organizer):
    assert upload(client, organizing.slug, organizer, "runs", run_upload("bm25")).status_code == 202
    built = client.post(f"/api/v1/collections/{organizing.slug}/pools", {"name": "main", "strategy": "depth",
                        "parameters": {"depth": 2}}, content_type="application/json", **bearer(organizer))
    assert built.status_code == 202
    body = {"pool": "main", "assessors": [assessor.username], "topics": ["301", "302"]}
    refused = client.post(f"/api/v1/collections/{organizing.slug}/assignments", body, content_type="application/json",
                          **bearer(other_organizer))
    assert refused.status_code == 403 and not assessor_queue(assessor)
    answer = client.post(f"/api/v1/collections/{organizing.slug}/assignments", body, content_type="application/json",
                         **bearer(organizer))
    assert answer.status_code == 201, answer.content
    assert answer.json()["documents"] == 4 and answer.json()["per_assessor"][assessor.username]["items"] == 4
    assert [(row["topic"].qid, row["total"]) for row in assessor_queue(assessor)] == [("301", 2), ("302", 2)]
    unknown = client.post(f"/api/v1/collections/{organizing.slug}/assignments",
                          {**body, "assessors": ["nobody"], "topics": ["999"]}, content_type="application/json",
                          **bearer(organizer))
    assert unknown.status_code == 400 and unknown.json()["problems"] == [
        "assessors: 'nobody' is not an active account with the assessor role",
        f"topics: '999' is not a topic of collection {organizing.slug!r}"]
    again = client.post(f"/api/v1/collections/{organizing.slug}/assignments", body, content_type="application/json",
                        **bearer(organizer))
    assert again.status_code == 409 and again.json()["detail"].startswith("nothing to assign")


def test_released_results_are_visible_to_the_team_and_withdrawn_again(client, organizing, organizer, teams,
                                                                    other_organizer):
    _, red = teams["red"]
    sent = client.post(f"/api/v1/tracks/{organizing.slug}/submissions",
                       {"file": run_upload("red-bm25"), "description": "BM25", "run_type": "automatic"}, **bearer(red))
    assert sent.status_code == 201 and sent.json()["status"] == "accepted"
    qrels = SimpleUploadedFile("round1.qrels", b"301 0 d1 1\n301 0 d2 0\n302 0 d4 1\n")
    assert upload(client, organizing.slug, organizer, "qrels", qrels, assessor="nist").status_code == 202
    release = f"/api/v1/tracks/{organizing.slug}/release"
    for user in (red, other_organizer):
        refused = client.put(release, {"released": True}, content_type="application/json", **bearer(user))
        assert refused.status_code == 403
    assert client.get(f"/api/v1/tracks/{organizing.slug}/results", **bearer(red)).json()["released"] is False
    answer = client.put(release, {"released": True}, content_type="application/json", **bearer(organizer))
    assert answer.status_code == 200 and answer.json()["released"] is True
    results = client.get(f"/api/v1/tracks/{organizing.slug}/results", **bearer(red)).json()
    assert results["released"] is True and [run["tag"] for run in results["runs"]] == ["red-bm25"]
    entry = AuditEntry.objects.filter(collection=organizing, action="results released").get()
    assert entry.actor == organizer
    withdrawn = client.put(release, {"released": False}, content_type="application/json", **bearer(organizer))
    assert withdrawn.json()["released"] is False
    assert client.get(f"/api/v1/tracks/{organizing.slug}/results", **bearer(red)).json()["runs"] == []

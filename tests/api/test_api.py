"""The HTTP API acts through the same services, rules and access as the pages: a run submitted with a token
gets the portal's receipt, a team over its limit gets 409 naming it, roles and per-collection organizers hold,
machine labels become a machine assessor's judgments with their provenance."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.contrib.auth.models import User

from judging.models import Judgment, MachineJudge, MachineVerdict
from participation.models import Submission
from tests import factories
from tests.api.conftest import bearer
from tests.participation.conftest import run_upload, submit
from workbench.access.people import collection_organizer_add

pytestmark = pytest.mark.django_db
RANKING = {"301": ["d1", "d2", "d3"], "302": ["d4"]}


def api_submit(client, track, user, upload, **fields):
    data = {"file": upload, "run_type": "automatic", "fields_used": ["title"], "description": "BM25, k1=0.9",
            "priority": "1", **fields}
    return client.post(f"/api/v1/tracks/{track.collection.slug}/submissions", data, **bearer(user))


def test_a_run_submitted_with_a_token_gets_the_same_receipt_as_the_portal(client, track, teams):
    (_, red), (_, blue) = teams["red"], teams["blue"]
    answer = api_submit(client, track, red, run_upload("red-bm25", RANKING, name="mine.run"))
    assert answer.status_code == 201, answer.content
    receipt = answer.json()
    client.force_login(blue)  # the same file, with blue's tag, through the portal's form
    submit(client, track, run_upload("blue-bm25", RANKING, name="mine.run"))
    portal = Submission.objects.get(team__name="blue")
    assert receipt["status"] == portal.status == "accepted" and receipt["tag"] == "red-bm25"
    assert receipt["warnings"] == portal.warnings and len(portal.warnings) == 2
    red_file = factories.run_lines("red-bm25", RANKING).encode()
    assert receipt["size"] == len(red_file) and receipt["sha256"] == hashlib.sha256(red_file).hexdigest()
    # a bad line: the checker's file:line, as the portal gives it
    bad = api_submit(client, track, red, run_upload("red-x", extra="302 Q0 d9 seven 1.0 red-x\n", name="mine.run"))
    assert bad.status_code == 201 and bad.json()["status"] == "refused"
    assert bad.json()["problems"] == ["mine.run:10: rank 'seven' is not an integer"]
    listed = client.get(f"/api/v1/tracks/{track.collection.slug}/submissions", **bearer(red)).json()
    assert [s["status"] for s in listed] == ["refused", "accepted"]


def test_a_team_over_its_limit_gets_409_naming_the_limit(client, track, teams):
    _, red = teams["red"]
    for tag in ("red-a", "red-b"):
        assert api_submit(client, track, red, run_upload(tag)).json()["status"] == "accepted"
    over = api_submit(client, track, red, run_upload("red-c"))
    assert over.status_code == 409
    assert "your team has submitted 2 of 2 runs, the track's limit" in over.json()["detail"]
    missing = api_submit(client, track, red, run_upload("red-d"), description="")
    assert missing.status_code == 400 and "Describe how the run was made" in missing.json()["detail"]


def test_a_researcher_s_token_cannot_submit_nor_read_a_track(client, track, teams, researcher):
    answer = api_submit(client, track, researcher, run_upload("rhea-1"))
    assert answer.status_code == 403 and "not on a team" in answer.json()["detail"]
    assert not Submission.objects.exists()
    assert client.get(f"/api/v1/tracks/{track.collection.slug}/topics", **bearer(researcher)).status_code == 403


def _machine_judge(collection, name="umbrela") -> MachineJudge:
    user = User.objects.create_user(f"machine:{collection.slug}:{name}", password=None)
    return MachineJudge.objects.create(collection=collection, name=name, kind="openai", user=user, config={})


def _lines(*rows) -> str:
    return "\n".join(json.dumps(r) for r in rows) + "\n"


PROVENANCE = {"model": "llama-3.1-70b", "model_version": "2024-07", "prompt_hash": "ab" * 32}


def test_machine_labels_pushed_over_http_are_a_machine_assessor_s_judgments_with_provenance(client, organizer):
    collection = factories.collection_with_topics()
    factories.add_documents(collection, ["d1", "d2"])
    judge = _machine_judge(collection)
    url = f"/api/v1/collections/{collection.slug}/machine-judges/umbrela/labels"
    body = _lines({"qid": "301", "docno": "d1", "grade": 1, "provenance": PROVENANCE},
                  {"qid": "301", "docno": "d2", "probability": 0.2, "score": 0.31, "provenance": PROVENANCE})
    answer = client.post(url, body, content_type="text/plain", **bearer(organizer))
    assert answer.status_code == 200, answer.content
    assert answer.json() == {"judge": "umbrela", "lines": 2, "recorded": 2, "already": 0, "flagged": 0}
    judged = {j.docno: j for j in Judgment.objects.filter(source=Judgment.Source.MACHINE)}
    assert {d: j.grade for d, j in judged.items()} == {"d1": 1, "d2": 0}
    assert {j.assessor for j in judged.values()} == {"machine:robust:umbrela"}
    verdict = MachineVerdict.objects.get(judge=judge, docno="d2")
    assert (verdict.model, verdict.model_version, verdict.prompt_hash, verdict.probability, verdict.score) == (
        "llama-3.1-70b", "2024-07", "ab" * 32, 0.2, 0.31)
    assert verdict.judgment == judged["d2"]
    again = client.post(url, body, content_type="text/plain", **bearer(organizer)).json()
    assert (again["recorded"], again["already"]) == (0, 2)
    # one bad line refuses the push, naming each bad line; nothing is recorded
    bad = client.post(url, _lines({"qid": "301", "docno": "d1", "grade": 1, "provenance": PROVENANCE},
                                  {"qid": "999", "docno": "d1", "grade": 1, "provenance": PROVENANCE},
                                  {"qid": "302", "docno": "d1", "grade": 7, "provenance": {}}),
                      content_type="text/plain", **bearer(organizer))
    assert bad.status_code == 400
    assert bad.json()["problems"] == ["labels:2: topic '999' is not a topic of collection 'robust'",
                                      "labels:3: grade 7 is not one of the collection's grades (0, 1)"]
    assert Judgment.objects.count() == 2
    # the machine judge's own account may push for itself, and for no other judge
    assert client.post(url, body, content_type="text/plain", **bearer(judge.user)).status_code == 200
    other = _machine_judge(collection, "other")
    assert client.post(url, body, content_type="text/plain", **bearer(other.user)).status_code == 403


def test_an_organizer_of_another_collection_cannot_read_its_qrels(client, organizer):
    collection = factories.collection_with_topics()
    factories.add_documents(collection, ["d1"])
    other = User.objects.create_user("otto", password="pw-otto-1")
    other.groups.add(*organizer.groups.all())
    collection_organizer_add(collection=collection, user=organizer)
    mine = factories.collection_with_topics("trec-covid")
    collection_organizer_add(collection=mine, user=other)
    _machine_judge(collection)
    client.post(f"/api/v1/collections/{collection.slug}/machine-judges/umbrela/labels",
                _lines({"qid": "301", "docno": "d1", "grade": 1, "provenance": PROVENANCE}),
                content_type="text/plain", **bearer(organizer))
    url = f"/api/v1/collections/{collection.slug}/qrels?policy=machine"
    refused = client.get(url, **bearer(other))
    assert refused.status_code == 403 and "robust" in refused.json()["detail"]
    answer = client.get(url, **bearer(organizer))
    assert answer.json()["qrels"] == [{"qid": "301", "docno": "d1", "rel": 1}]
    text = client.get(f"/api/v1/collections/{collection.slug}/qrels.txt?policy=machine", **bearer(organizer))
    assert text["Content-Type"].startswith("text/plain") and text.content.decode().split() == ["301", "0", "d1", "1"]
    assert client.get(f"/api/v1/collections/{collection.slug}/machine-judges/umbrela/labels",
                      **bearer(other)).status_code in (403, 405)
    assert client.get(url.replace("machine", "nonsense"), **bearer(organizer)).status_code == 400


def test_an_organizer_starts_a_pool_build_and_follows_its_job(client, track, teams, organizer):
    _, red = teams["red"]
    assert api_submit(client, track, red, run_upload("red-a")).json()["status"] == "accepted"
    url = f"/api/v1/collections/{track.collection.slug}/pools"
    bad = client.post(url, {"name": "main", "strategy": "depth", "parameters": {"depth": 0}},
                      content_type="application/json", **bearer(organizer))
    assert bad.status_code == 400 and "depth" in bad.json()["detail"]
    started = client.post(url, {"name": "main", "strategy": "depth", "parameters": {"depth": 2}},
                          content_type="application/json", **bearer(organizer))
    assert started.status_code == 202, started.content
    job = client.get(started.json()["url"], **bearer(organizer)).json()
    assert job["status"] == "done" and job["kind"] == "pool build"
    assert client.get(url, **bearer(organizer)).json()[0]["entries"] == 6
    # a participant may neither build nor follow the organizer's job
    assert client.post(url, {"name": "x", "strategy": "depth"}, content_type="application/json",
                       **bearer(red)).status_code == 403
    assert client.get(started.json()["url"], **bearer(red)).status_code == 404


def test_a_researcher_reads_the_leaderboard_where_the_organizers_allow_it(client, track, teams, researcher):
    _, red = teams["red"]
    assert api_submit(client, track, red, run_upload("red-a")).json()["status"] == "accepted"
    url = f"/api/v1/collections/{track.collection.slug}/leaderboard?measures=map,P.10"
    assert client.get(url, **bearer(researcher)).status_code == 403
    track.collection.researchers_may_download = True
    track.collection.save(update_fields=["researchers_may_download"])
    Judgment.objects.create(collection=track.collection, topic=track.collection.topics.get(qid="301"), docno="d1",
                            grade=1, assessor="nist", source=Judgment.Source.IMPORT)
    board = client.get(url, **bearer(researcher))
    assert board.status_code == 200, board.content
    assert board.json()["measures"][:2] == ["map", "P_10"] and [r["run"] for r in board.json()["runs"]] == ["red-a"]
    assert client.get(url.replace("map,P.10", "nonsense"), **bearer(researcher)).status_code == 400


def test_the_schema_and_its_browsable_docs_are_served(client):
    schema = client.get("/api/v1/openapi.json").json()
    assert "/api/v1/tracks/{slug}/submissions" in schema["paths"]
    assert schema["components"]["securitySchemes"]["TokenAuth"]["scheme"] == "bearer"
    docs = client.get("/api/v1/docs")
    assert docs.status_code == 200 and b"/static/ninja/swagger-ui-bundle.js" in docs.content
    assert "script-src 'self'" in docs["Content-Security-Policy"]


def test_the_job_start_limit_and_the_upload_limit_hold_over_the_api(client, track, teams, organizer, settings):
    _, red = teams["red"]
    settings.PORTAL_MAX_UPLOAD_MB = 0
    too_big = api_submit(client, track, red, run_upload("red-a"))
    assert too_big.status_code == 413 and "the largest run file the portal takes" in too_big.json()["detail"]
    settings.PORTAL_MAX_UPLOAD_MB, settings.JOB_STARTS_PER_MINUTE = 1, 1
    assert api_submit(client, track, red, run_upload("red-a")).status_code == 201
    again = api_submit(client, track, red, run_upload("red-b"))
    assert again.status_code == 429 and int(again["Retry-After"]) >= 1
    assert "the most one person may start is 1 a minute" in again.json()["detail"]
    url = f"/api/v1/collections/{track.collection.slug}/pools"
    body = {"name": "main", "strategy": "depth", "parameters": {"depth": 2}}
    assert client.post(url, body, content_type="application/json", **bearer(organizer)).status_code == 202
    assert client.post(url, body, content_type="application/json", **bearer(organizer)).status_code == 429


def test_a_request_the_database_refused_answers_503_json_even_in_debug(client, track, organizer, monkeypatch,
                                                                     settings):
    from django.db import OperationalError

    from workbench.jobs import lifecycle as jobs

    def locked(*args, **kwargs):
        raise OperationalError("database is locked")

    settings.DEBUG = True  # ninja answers a traceback in DEBUG for what no handler takes
    monkeypatch.setattr(jobs, "job_start", locked)
    answer = client.post(f"/api/v1/collections/{track.collection.slug}/pools", {"name": "main", "strategy": "depth"},
                         content_type="application/json", **bearer(organizer))
    assert answer.status_code == 503 and answer["Retry-After"] == "5"
    assert answer.json()["detail"] == "The database is busy; try again in a moment."

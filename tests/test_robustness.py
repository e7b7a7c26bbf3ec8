"""No request answers 500, whatever a user puts in the query string or a form, whoever they are.

Property-based (hypothesis): every URL of the workbench, as every role (anonymous, assessor, researcher, participant,
organizer), with random and hostile values for every parameter the pages read. The number of requests
tried is written to ``test-artifacts/robustness.requests.*.json`` (README.md quotes it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judging.assignments import assignments_create
from judging.models import AssignmentItem
from participation.models import Team, Track
from pooling.models import Pool
from tests.evaluation.tracks import build_track

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"

#: every query parameter a page reads (and a few it does not)
PARAMETERS = ["m", "measures", "measure", "qrels", "test", "correction", "by", "run", "name", "policy",
              "assessor", "binary", "_export", "_table", "sort", "page", "per_page", "t-page", "r-page",
              "t-sort", "r-sort", "p-sort", "assignment", "next", "q", "format", "kind", "topic", "all", "download"]

HOSTILE = st.sampled_from([
    "", " ", "0", "-1", "1e309", "nan", "9999999999999999999999999", "-99999999999999999999", "ndcg_cut.99999999999999999999",
    "P.0", "P.-5", "map.x", "bogus", "assessor:", "assessor:nobody", "assessor:nist", "xlsx", "json", "csv",
    "../../etc/passwd", "<script>alert(1)</script>", "' OR 1=1 --", "%00", "\x00", "a/b", "$\\foo$", "#", "?",
    "日本語", "\udcff".encode("utf-8", "surrogatepass").decode("utf-8", "replace"), "x" * 5000, "t", "wilcoxon",
    "randomization", "holm", "none", "team", "majority", "adjudicated", "alpha", "301", "1",
    "[[0, 5]]", "[[5, 0]]", "[[0, 99999999999999999999]]", "[[true, 1]]", "{}", "preview", "build", "depth", "sampled", "rrf", "mtf", "topics", "runs", "qrels", "documents", "organizer",
    "deactivate", "link", "roles", "1-10:1 11-x", "301=0", "roc", "pr", "interpolated", "png", "svg",
])
VALUES = st.one_of(HOSTILE, st.text(max_size=30), st.integers().map(str))
QUERIES = st.dictionaries(st.sampled_from(PARAMETERS), st.lists(VALUES, min_size=1, max_size=3), max_size=4)

_tried = {"requests": 0, "server errors": 0}


@pytest.fixture
def site(db, tmp_path):
    """A judged track with a pool and assignments, and one user of each role."""
    collection = build_track(tmp_path)
    collection.researchers_may_download = True
    collection.save()
    organizer = User.objects.create_user("olivia", password="pw-organizer-1")
    organizer.groups.add(Group.objects.get_or_create(name="organizers")[0])
    assessor = User.objects.create_user("arthur", password="pw-assessor-1")
    researcher = User.objects.create_user("rita", password="pw-researcher-1")
    researcher.groups.add(Group.objects.get_or_create(name="researchers")[0])
    assignments_create(pool=Pool.objects.get(collection=collection), assessors=[assessor])
    participant = User.objects.create_user("pia", password="pw-participant-1")
    participant.groups.add(Group.objects.get_or_create(name="participants")[0])
    track = Track.objects.create(collection=collection, open=True)
    Team.objects.create(track=track, name="pias-team").members.add(participant)
    item = AssignmentItem.objects.filter(assignment__assessor=assessor).first()
    slug = collection.slug
    paths = ["/", "/judge/", "/judge/next/", f"/judge/item/{item.pk}/", f"/judge/organize/{slug}/",
             f"/judge/organize/{slug}/assign/", f"/judge/organize/{slug}/agreement/",
             f"/judge/topic/{item.assignment_id}/", f"/judge/finished/{item.assignment_id}/next/{item.assignment_id}/",
             "/judge/topic/0/",
             *[f"/collections/{slug}/{page}" for page in
               ["", "downloads/", "leaderboard/", "runs/alpha/", "runs/nope/", "topics/301/", "topics/999/",
                "significance/", "curves/", "reusability/", "pool/", "downloads/qrels.txt", "downloads/pool.txt",
                "downloads/release.zip", "downloads/evaluation/"]],
             "/collections/nope/leaderboard/", "/accounts/login/", "/jobs/1/", "/jobs/999999/",
             f"/collections/{slug}/downloads/release/1/",
             *[f"/console/{page}" for page in ["new/", "jobs/", "people/", f"people/{assessor.pk}/", "people/0/",
                                                f"{slug}/", f"{slug}/edit/", f"{slug}/upload/", f"{slug}/document/",
                                                f"{slug}/pools/", "nope/", "nope/pools/", f"{slug}/participation/",
                                                f"{slug}/participation/teams/", f"{slug}/participation/release/"]],
             "/participate/", f"/participate/{slug}/", f"/participate/{slug}/results/",
             f"/participate/{slug}/submissions/1/", f"/participate/{slug}/submissions/1/file"]
    clients = {"anonymous": Client(raise_request_exception=False)}
    for role, user in [("organizer", organizer), ("assessor", assessor), ("researcher", researcher),
                       ("participant", participant)]:
        clients[role] = Client(raise_request_exception=False)
        clients[role].force_login(user)
    return {"paths": paths, "clients": clients, "item": item}


def _record(response, role: str, path: str, data) -> None:
    _tried["requests"] += 1
    if response.status_code >= 500:
        _tried["server errors"] += 1
    assert response.status_code < 500, f"{role} {path} {data!r} -> {response.status_code}"


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(query=QUERIES, role=st.sampled_from(["anonymous", "assessor", "researcher", "organizer", "participant"]))
def test_no_query_string_makes_any_page_answer_500(site, query, role):
    client = site["clients"][role]
    for path in site["paths"]:
        _record(client.get(path, query), role, path, query)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(form=st.dictionaries(st.sampled_from(["grade", "cannot_judge", "client_token", "time_spent_ms", "shown_at",
                                             "comment", "rationale", "qid", "docno", "pool", "assessors",
                                             "topics", "overlap", "batch_size", "username", "password",
                                             # the console's forms
                                             "slug", "name", "relevant_from", "max_depth", "guidelines",
                                             "grade-TOTAL_FORMS", "grade-INITIAL_FORMS", "grade-0-grade",
                                             "grade-0-label", "kind", "runs-files", "action", "strategy", "depth",
                                             "topic_depth", "budget", "total_budget", "strata", "seed", "order",
                                             "runs", "runs_per_team", "roles", "email", "measures", "policy",
                                             "open", "opens_at", "closes_at", "max_runs_per_team",
                                             "pooled_runs_per_team", "leaderboard", "members", "display_name",
                                             "released", "run_type", "fields_used", "description", "priority",
                                             "skip", "passages"]),
                            VALUES, max_size=6),
       role=st.sampled_from(["anonymous", "assessor", "organizer", "participant"]))
def test_no_form_post_makes_any_page_answer_500(site, form, role):
    client = site["clients"][role]
    for path in site["paths"]:
        _record(client.post(path, form), role, path, form)


def teardown_module(module) -> None:
    """Counts per test process (pytest-xdist runs several): README.md adds them up."""
    ARTIFACTS.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (ARTIFACTS / f"robustness.requests.{worker}.json").write_text(json.dumps(_tried, indent=1))

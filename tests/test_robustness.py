"""No request answers 500, whatever a user puts in the query string or a form, whoever they are.

Property-based (hypothesis): every URL of the workbench, as every role (anonymous, assessor, researcher,
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
from pooling.models import Pool
from tests.evaluation.tracks import build_track

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"

#: every query parameter a page reads (and a few it does not)
PARAMETERS = ["m", "measures", "measure", "qrels", "test", "correction", "by", "run", "name", "policy",
              "assessor", "binary", "_export", "_table", "sort", "page", "per_page", "t-page", "r-page",
              "t-sort", "r-sort", "p-sort", "assignment", "next", "q", "format"]

HOSTILE = st.sampled_from([
    "", " ", "0", "-1", "1e309", "nan", "9999999999999999999999999", "-99999999999999999999", "ndcg_cut.99999999999999999999",
    "P.0", "P.-5", "map.x", "bogus", "assessor:", "assessor:nobody", "assessor:nist", "xlsx", "json", "csv",
    "../../etc/passwd", "<script>alert(1)</script>", "' OR 1=1 --", "%00", "\x00", "a/b", "$\\foo$", "#", "?",
    "日本語", "\udcff".encode("utf-8", "surrogatepass").decode("utf-8", "replace"), "x" * 5000, "t", "wilcoxon",
    "randomization", "holm", "none", "team", "majority", "adjudicated", "alpha", "301", "1",
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
    item = AssignmentItem.objects.filter(assignment__assessor=assessor).first()
    slug = collection.slug
    paths = ["/", "/judge/", "/judge/next/", f"/judge/item/{item.pk}/", f"/judge/organize/{slug}/",
             f"/judge/organize/{slug}/assign/", f"/judge/organize/{slug}/agreement/",
             *[f"/collections/{slug}/{page}" for page in
               ["", "downloads/", "leaderboard/", "runs/alpha/", "runs/nope/", "topics/301/", "topics/999/",
                "significance/", "curves/", "reusability/", "pool/", "downloads/qrels.txt", "downloads/pool.txt",
                "downloads/release.zip"]],
             "/collections/nope/leaderboard/", "/accounts/login/", "/jobs/1/", "/jobs/999999/",
             f"/collections/{slug}/downloads/release/1/"]
    clients = {"anonymous": Client(raise_request_exception=False)}
    for role, user in [("organizer", organizer), ("assessor", assessor), ("researcher", researcher)]:
        clients[role] = Client(raise_request_exception=False)
        clients[role].force_login(user)
    return {"paths": paths, "clients": clients, "item": item}


def _record(response, role: str, path: str, data) -> None:
    _tried["requests"] += 1
    if response.status_code >= 500:
        _tried["server errors"] += 1
    assert response.status_code < 500, f"{role} {path} {data!r} -> {response.status_code}"


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(query=QUERIES, role=st.sampled_from(["anonymous", "assessor", "researcher", "organizer"]))
def test_no_query_string_makes_any_page_answer_500(site, query, role):
    client = site["clients"][role]
    for path in site["paths"]:
        _record(client.get(path, query), role, path, query)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(form=st.dictionaries(st.sampled_from(["grade", "cannot_judge", "client_token", "time_spent_ms", "shown_at",
                                             "comment", "rationale", "qid", "docno", "pool", "assessors",
                                             "topics", "overlap", "batch_size", "username", "password"]),
                            VALUES, max_size=6),
       role=st.sampled_from(["anonymous", "assessor", "organizer"]))
def test_no_form_post_makes_any_page_answer_500(site, form, role):
    client = site["clients"][role]
    for path in site["paths"]:
        _record(client.post(path, form), role, path, form)


def teardown_module(module) -> None:
    """Counts per test process (pytest-xdist runs several): README.md adds them up."""
    ARTIFACTS.mkdir(exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    (ARTIFACTS / f"robustness.requests.{worker}.json").write_text(json.dumps(_tried, indent=1))

"""The API against its own OpenAPI schema (schemathesis): for an organizer's, a participant's and a researcher's
token on a small track, no answer is a server error and none contradicts the schema (its status, content type
or body). Bounded: a few examples per endpoint, no deadline per example (the first leaderboard computes)."""

from __future__ import annotations

import contextlib

import pytest
import schemathesis
from django.contrib.auth.models import User
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from judging.models import MachineJudge
from tests.api.conftest import bearer
from tests.participation.conftest import run_upload
from workbench.access.people import collection_organizer_add

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]


@pytest.fixture
def api_schema(db, settings, track, organizer):
    settings.ALLOWED_HOSTS = ["*"]
    collection = track.collection
    collection_organizer_add(collection=collection, user=organizer)
    collection.researchers_may_download = True
    collection.save(update_fields=["researchers_may_download"])
    with one_transaction():
        return schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())


@contextlib.contextmanager
def one_transaction():
    """The test's transaction stays open across the WSGI requests (PostgreSQL), as Django's test client keeps it
    across its own (which connects these receivers again after each of its requests)."""
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        signals.request_started.connect(close_old_connections)
        signals.request_finished.connect(close_old_connections)


def test_no_answer_is_a_server_error_or_contradicts_the_schema(api_schema, track, teams, organizer, researcher,
                                                             client):
    _, red = teams["red"]
    roles = {role: {"Authorization": bearer(user)["HTTP_AUTHORIZATION"]}
             for role, user in (("organizer", organizer), ("participant", red), ("researcher", researcher))}
    sent = client.post(f"/api/v1/tracks/{track.collection.slug}/submissions",
                       {"file": run_upload("red-bm25"), "description": "BM25", "run_type": "automatic"},
                       HTTP_AUTHORIZATION=roles["participant"]["Authorization"])
    assert sent.status_code == 201 and sent.json()["status"] == "accepted"
    built = client.post(f"/api/v1/collections/{track.collection.slug}/pools", {"name": "main", "strategy": "depth",
                        "parameters": {"depth": 2}}, content_type="application/json",
                        HTTP_AUTHORIZATION=roles["organizer"]["Authorization"])
    assert built.status_code == 202
    judge = User.objects.create_user(f"machine:{track.collection.slug}:umbrela", password=None)
    MachineJudge.objects.create(collection=track.collection, name="umbrela", kind="openai", user=judge, config={})
    bundle = client.post(f"/api/v1/collections/{track.collection.slug}/bundles", {"policy": "majority"},
                         content_type="application/json", HTTP_AUTHORIZATION=roles["organizer"]["Authorization"])
    assert bundle.status_code == 202
    # the path's names and ids of things that exist (random ones only meet 404); the job a built bundle's, so that
    # its download (a zip) is checked against the schema too
    known = {"slug": track.collection.slug, "name": "umbrela", "submission_id": sent.json()["id"],
             "job_id": bundle.json()["job"]}
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 15

    with one_transaction():
        for operation in operations:
            _answers_by_its_schema(operation, roles, known)


def _answers_by_its_schema(operation, roles: dict, known: dict) -> None:
    @given(case=operation.as_strategy())
    @settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
              database=None)
    def answers_by_its_schema(case):
        case.path_parameters = {k: known.get(k, v) for k, v in (case.path_parameters or {}).items()}
        for headers in roles.values():
            case.call_and_validate(headers=headers, checks=CHECKS)

    answers_by_its_schema()


def test_the_demo_answers_by_its_schema_for_its_organizer_participant_and_researcher(db, settings, client):
    """The same checks on `make demo`'s collection, with the demo's own organizer, participant and researcher."""
    from participation.models import Submission
    from workbench.demo.install import demo_build
    from workbench.models import Collection

    settings.ALLOWED_HOSTS = ["*"]
    demo_build()
    collection = Collection.objects.get(slug="demo")
    roles = {name: {"Authorization": bearer(User.objects.get(username=name))["HTTP_AUTHORIZATION"]}
             for name in ("organizer", "participant", "researcher")}
    built = client.post("/api/v1/collections/demo/pools", {"name": "deeper", "strategy": "depth",
                        "parameters": {"depth": 12}}, content_type="application/json",
                        HTTP_AUTHORIZATION=roles["organizer"]["Authorization"])
    assert built.status_code == 202
    judge = User.objects.create_user("machine:demo:umbrela", password=None)
    MachineJudge.objects.create(collection=collection, name="umbrela", kind="openai", user=judge, config={})
    submission = Submission.objects.filter(team__track__collection=collection).order_by("pk").first()
    assert submission is not None  # the demo's runs were submitted by their teams
    known = {"slug": "demo", "name": "umbrela", "submission_id": submission.pk, "job_id": built.json()["job"]}
    with one_transaction():
        schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", get_wsgi_application())
        operations = [result.ok() for result in schema.get_all_operations()]
        assert len(operations) >= 15
        for operation in operations:
            _answers_by_its_schema(operation, roles, known)

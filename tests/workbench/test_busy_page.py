"""A request the database cannot serve (locked past the busy timeout, or unreachable) answers the plain 503
"busy, try again" page of workbench.jobs.busy, never a 500; tests/workbench/test_locked_database.py holds a real
lock."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.db import OperationalError

from workbench.jobs import lifecycle as jobs


@pytest.fixture
def boss(db):
    return User.objects.create_superuser("boss", "boss@example.org", "pw-boss")


def test_a_job_start_the_database_refused_answers_busy_try_again(client, boss, collection, monkeypatch):
    def locked(*args, **kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(jobs, "job_start", locked)
    client.force_login(boss)
    response = client.post(f"/judge/organize/{collection.slug}/duplicates/find/", {"threshold": "0.7", "shingle": "3"})
    body = response.content.decode()
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert "The database is busy; try again in a moment." in body and "Nothing you sent was saved" in body
    assert "database is locked" not in body  # the server's words stay in its log



def test_a_client_asking_for_json_gets_the_same_answer_as_json(client, boss, collection, monkeypatch):
    def locked(*args, **kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(jobs, "job_start", locked)
    client.force_login(boss)
    response = client.post(f"/judge/organize/{collection.slug}/duplicates/find/", {"threshold": "0.7", "shingle": "3"},
                           HTTP_ACCEPT="application/json")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert response.json() == {"detail": "The database is busy; try again in a moment."}


def test_a_session_the_database_refused_to_save_answers_busy_not_500(db, monkeypatch):
    """The session middleware saves the session after the view has answered: a lock met there is outside any
    view (the project's handler500 answers it)."""
    from django.contrib.sessions.middleware import SessionMiddleware
    from django.test import Client

    def locked(self, request, response):
        raise OperationalError("database is locked")

    monkeypatch.setattr(SessionMiddleware, "process_response", locked)
    response = Client(raise_request_exception=False).get("/accounts/login/")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert "The database is busy; try again in a moment." in response.content.decode()

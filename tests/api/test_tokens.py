"""Personal API tokens: stored hashed, shown once, refused once revoked; the API takes no session."""

from __future__ import annotations

import hashlib
import io

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from workbench.access.tokens import ApiToken

pytestmark = pytest.mark.django_db


def _token_rows() -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {ApiToken._meta.db_table}")
        return cursor.fetchall()


def test_a_token_made_on_the_account_page_is_shown_once_stored_hashed_and_refused_once_revoked(client, organizer,
                                                                                                   caplog, settings):
    settings.DEBUG = True  # a library logs an unexpected Authorization header in DEBUG; the API's own check does not
    client.force_login(organizer)
    made = client.post("/account/", {"name": "notebook"}).content.decode()
    token = made.split('<code id="new-token">')[1].split("</code>")[0]
    assert token.startswith("wbt_") and len(token) > 40
    # the database holds its sha256 and its prefix, never the token
    rows = _token_rows()
    assert len(rows) == 1 and not any(token in str(value) for value in rows[0])
    assert hashlib.sha256(token.encode()).hexdigest() in rows[0]
    # the account page never shows it again (its prefix tells it apart)
    page = client.get("/account/").content.decode()
    assert token not in page and token[:12] in page and "notebook" in page and "never" in page
    client.logout()
    me = client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert me.status_code == 200 and me.json() == {"username": "olivia", "roles": ["organizer"]}
    assert ApiToken.objects.get().last_used is not None
    client.force_login(organizer)
    client.post("/account/", {"revoke": str(ApiToken.objects.get().pk)})
    client.logout()
    refused = client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert refused.status_code == 401 and "revoked" in refused.json()["detail"]
    assert refused["WWW-Authenticate"] == "Bearer"
    client.get("/api/v1/me", HTTP_AUTHORIZATION=f"Token {token}")
    assert "Unauthorized: /api/v1/me" in caplog.text and token not in caplog.text  # never in a log


def test_the_api_takes_no_session_and_no_made_up_token(client, organizer):
    client.force_login(organizer)
    assert client.get("/api/v1/collections").status_code == 401  # a signed-in browser: no token, no API
    client.logout()
    for header in ("Bearer wbt_00000000_nothing", "Bearer ", "Basic b2xpdmlhOnB3", "Bearer " + "x" * 5000):
        assert client.get("/api/v1/collections", HTTP_AUTHORIZATION=header).status_code == 401


def test_a_token_over_its_rate_gets_429_with_retry_after(client, organizer, settings):
    settings.API_REQUESTS_PER_MINUTE = 2
    from tests.api.conftest import bearer

    headers = bearer(organizer)
    assert [client.get("/api/v1/me", **headers).status_code for _ in range(3)] == [200, 200, 429]
    over = client.get("/api/v1/me", **headers)
    assert int(over["Retry-After"]) >= 1 and "2 requests in the last minute" in over.json()["detail"]


def test_create_token_prints_the_token_alone(outsider):
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match="no account 'nobody'"):
        call_command("create_token", "nobody", stdout=out, stderr=err)
    call_command("create_token", "oscar", "--name", "ci", stdout=out, stderr=err)
    lines = out.getvalue().splitlines()
    assert len(lines) == 1 and lines[0].startswith("wbt_") and err.getvalue() == ""
    row = ApiToken.objects.get(user=outsider)
    assert row.name == "ci" and row.digest == hashlib.sha256(lines[0].encode()).hexdigest()

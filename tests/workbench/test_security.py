"""Accounts and deployment: repeated wrong passwords lock a login out, weak passwords are refused, every page
carries a Content Security Policy that forbids inline scripts (tests/browser/test_security_browser.py shows the
pages working under it in Chromium), and the README's production settings pass
`check --deploy` without a warning."""

from __future__ import annotations

import re
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import authenticate
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management import call_command

from judging.assignments import assignments_create
from pooling.models import Pool, PoolEntry
from tests import factories

ROOT = Path(__file__).resolve().parents[2]
LOGIN = "/accounts/login/"
LOCKED = "Too many failed logins"


def log_in_with(client, username: str, password: str):
    return client.post(LOGIN, {"username": username, "password": password})


# ---- login throttling -------------------------------------------------------------------------------

def test_repeated_wrong_passwords_lock_the_login_out_until_an_organizer_resets_it(client, assessor):
    limit = settings.AXES_FAILURE_LIMIT
    for _ in range(limit - 1):
        response = log_in_with(client, "arthur", "guess")
        assert response.status_code == 200 and "did not match" in response.content.decode()

    last = log_in_with(client, "arthur", "guess")
    assert last.status_code == 429 and LOCKED in last.content.decode()

    refused = log_in_with(client, "arthur", "pw-assessor")  # the right password no longer gets in
    body = refused.content.decode()
    assert refused.status_code == 429 and "_auth_user_id" not in client.session
    assert f"After {limit} wrong passwords for “arthur” from this address" in body
    assert "ask an organizer to unlock the account" in body

    call_command("axes_reset_username", "arthur", stdout=StringIO())
    welcome = log_in_with(client, "arthur", "pw-assessor")
    assert welcome.status_code == 302 and client.session["_auth_user_id"] == str(assessor.pk)


def test_axes_reset_unlocks_everyone(client, assessor):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in_with(client, "arthur", "guess")
    assert log_in_with(client, "arthur", "pw-assessor").status_code == 429
    call_command("axes_reset", stdout=StringIO())
    assert log_in_with(client, "arthur", "pw-assessor").status_code == 302


def test_a_lock_out_holds_one_user_name_at_one_address_only(client, assessor, outsider):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in_with(client, "arthur", "guess")
    assert log_in_with(client, "oscar", "pw-outsider").status_code == 302  # same address, other user
    client.logout()
    elsewhere = log_in_with(client.__class__(REMOTE_ADDR="10.1.2.3"), "arthur", "pw-assessor")
    assert elsewhere.status_code == 302  # same user, other address


def test_one_right_password_clears_the_earlier_mistakes(client, assessor):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        log_in_with(client, "arthur", "guess")
    assert log_in_with(client, "arthur", "pw-assessor").status_code == 302
    client.logout()
    assert log_in_with(client, "arthur", "guess").status_code == 200  # counting starts again


def test_the_organizer_sees_failed_logins_in_the_admin(client, assessor):
    for _ in range(3):
        log_in_with(client, "arthur", "guess")
    root = User.objects.create_superuser("root", password="pw")
    client.force_login(root)
    response = client.get("/admin/axes/accessattempt/")
    assert response.status_code == 200 and "arthur" in response.content.decode()


def test_logging_in_without_a_request_still_works(assessor):
    # scripts and the shell call authenticate() without a request: there is no client to throttle
    assert authenticate(username="arthur", password="pw-assessor") == assessor


def test_a_reverse_proxys_client_address_header_is_used_when_configured(client, assessor, settings):
    settings.CLIENT_IP_HEADER = "X-Forwarded-For"
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post(LOGIN, {"username": "arthur", "password": "guess"}, HTTP_X_FORWARDED_FOR="198.51.100.7")
    locked = client.post(LOGIN, {"username": "arthur", "password": "pw-assessor"},
                         HTTP_X_FORWARDED_FOR="198.51.100.7")
    assert locked.status_code == 429
    # the proxy appends the address it saw; what the client wrote before it does not count
    other_client = client.post(LOGIN, {"username": "arthur", "password": "pw-assessor"},
                               HTTP_X_FORWARDED_FOR="198.51.100.7, 198.51.100.8")
    assert other_client.status_code == 302


# ---- password rules ---------------------------------------------------------------------------------

@pytest.mark.parametrize("weak", ["password", "12345678", "qwerty12"])
def test_weak_passwords_are_refused(weak, db):
    with pytest.raises(ValidationError):
        validate_password(weak, User(username="arthur"))


def test_a_strong_password_is_accepted(db):
    validate_password("pooled-judgments-7-wombats", User(username="arthur"))


# ---- content security policy ------------------------------------------------------------------------

def directives(response) -> dict[str, list[str]]:
    header = response.headers["Content-Security-Policy"]
    return {name: values for name, *values in (part.split() for part in header.split(";") if part.strip())}


INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)


@pytest.fixture
def judging_item(assessor):
    collection = factories.collection_with_topics()
    factories.add_documents(collection, ["d1", "d2"])
    pool = Pool.objects.create(collection=collection, name="main")
    topic = collection.topics.get(qid="301")
    for order, docno in enumerate(["d1", "d2"], start=1):
        PoolEntry.objects.create(pool=pool, topic=topic, docno=docno, judging_order=order, pool_rank=order)
    assignments_create(pool=pool, assessors=[assessor])
    return assessor


def test_the_login_page_forbids_inline_scripts(client, db):
    response = client.get(LOGIN)
    policy = directives(response)
    assert policy["default-src"] == ["'self'"]
    assert policy["script-src"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"] and policy["object-src"] == ["'none'"]


def test_the_judging_page_has_a_policy_and_no_inline_script(client, judging_item):
    client.force_login(judging_item)
    response = client.get("/judge/next/", follow=True)
    body = response.content.decode()
    assert 'id="judge-form"' in body and "judging/judge.js" in body
    assert "'unsafe-inline'" not in directives(response)["script-src"]
    assert not INLINE_SCRIPT.search(body)


def test_pages_with_figures_embed_no_inline_script(client, organizer, collection, run_files, tmp_path):
    for path in run_files:
        call_command("import_runs", "robust", str(path), stdout=StringIO())
    qrels = tmp_path / "qrels"
    qrels.write_text("301 0 d1 1\n301 0 d3 0\n302 0 d5 1\n")
    call_command("import_qrels", "robust", str(qrels), stdout=StringIO())
    client.force_login(organizer)
    for url in ["/collections/robust/runs/alpha/", "/collections/robust/curves/", "/collections/robust/"]:
        response = client.get(url)
        assert response.status_code == 200, url
        assert "Content-Security-Policy" in response.headers
        assert not INLINE_SCRIPT.search(response.content.decode()), url


# ---- check --deploy ---------------------------------------------------------------------------------

def documented_production_settings() -> dict[str, str]:
    """The variables of the README's "Production settings" snippet."""
    readme = (ROOT / "README.md").read_text()
    section = readme.split("**Production settings**", 1)[1]
    snippet = section.split("```", 2)[1]
    pairs = re.findall(r"^(?:export\s+)?([A-Z_]+)=(\S*)", snippet, re.MULTILINE)
    assert pairs, "the README's production snippet lists no variable"
    return dict(pairs)


def test_check_deploy_is_clean_with_the_documented_production_settings(tmp_path):
    env = {**documented_production_settings(), "DEBUG": "0", "WORKBENCH_VAR_DIR": str(tmp_path)}
    env["SECRET_KEY"] = "a-long-random-value-" + "x7Qp" * 12  # the snippet's placeholder, made concrete
    env.pop("DATABASE_URL", None)  # the check needs no database
    result = subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, capture_output=True,
                            text=True, env={"PATH": "/usr/bin:/bin", **env})
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "WARNINGS" not in output and "(security.W" not in output and "(axes.W" not in output, output


def test_the_local_defaults_keep_plain_http_working(client, db):
    # `make demo` serves http://127.0.0.1: no redirect to https, and cookies a plain-http browser keeps
    response = client.get(LOGIN)
    assert response.status_code == 200
    assert not settings.SESSION_COOKIE_SECURE and not settings.CSRF_COOKIE_SECURE
    assert "Strict-Transport-Security" not in response.headers

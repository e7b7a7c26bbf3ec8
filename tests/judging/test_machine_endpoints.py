"""Machine-judge endpoints belong to the deployment: an organizer (staff, not a superuser) chooses a declared
endpoint by name and never makes the server send a key anywhere else, whatever the web form is sent; a declared
endpoint that redirects gets no key (and no request at all) sent on; an endpoint's words reach the organizer short
and escaped. Real chat endpoints on 127.0.0.1 (tests/judging/endpoint_stub.py) record every request's key."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from judging.models import Judgment, MachineJudge, MachineVerdict
from tests.judging.endpoint_stub import Stub
from tests.judging.machine_fixtures import machine_collection
from workbench.models import Job

DECLARED_KEY, SERVER_KEY = "sk-declared-1", "sk-server-openai-2"


@pytest.fixture
def staff(db) -> User:
    return User.objects.create_user("steward", password="pw-staff-1", is_staff=True)


@pytest.fixture
def keys(monkeypatch):
    monkeypatch.setenv("LOCAL_JUDGE_KEY", DECLARED_KEY)
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)


def _declare(settings, url: str) -> None:
    settings.JUDGE_ENDPOINTS = {"local": {"base_url": url, "models": ["tiny"], "key_env": "LOCAL_JUDGE_KEY"}}


def test_an_organizer_reaches_only_declared_endpoints_whatever_the_form_is_sent(client, db, staff, keys, settings):
    collection, pool = machine_collection()
    with Stub() as declared, Stub() as elsewhere:
        _declare(settings, declared.url)
        client.force_login(staff)
        url = reverse("judging:machine", args=[collection.slug])
        page = client.get(url).content.decode()
        assert page.count('name="endpoint"') == 1 and "base_url" not in page and 'name="key' not in page
        tricks = [{"endpoint": "elsewhere"}, {"endpoint": elsewhere.url}, {"endpoint": f"local@{elsewhere.host}"},
                  {"endpoint": "local?x=1"}, {"endpoint": "local#"}, {"endpoint": "local/../x"},
                  {"endpoint": "local", "model": elsewhere.url}, {"endpoint": "local", "model": "tiny#"},
                  {"endpoint": "", "model": "tiny", "base_url": elsewhere.url}]
        for trick in tricks:
            answer = client.post(url, {"name": "gpt", "kind": "openai", "pool": pool.pk, "model": "tiny", **trick})
            assert answer.status_code == 400, trick
        assert not Job.objects.exists() and not MachineJudge.objects.exists()
        # fields the form does not have are ignored: the job runs on the declared endpoint with its own key
        answer = client.post(url, {"name": "gpt", "kind": "openai", "pool": pool.pk, "endpoint": "local",
                                   "model": "tiny", "base_url": elsewhere.url, "url": elsewhere.url,
                                   "config": f'{{"base_url": "{elsewhere.url}"}}', "key_env": "OPENAI_API_KEY"})
        assert answer.status_code == 302
        job = Job.objects.get()
        assert job.status == Job.Status.DONE and "10 pairs judged by gpt" in job.result["lines"][0]
        assert MachineJudge.objects.get().config == {"endpoint": "local", "model": "tiny"}
    assert elsewhere.seen == []  # not one request, with or without a key
    assert len(declared.seen) == 10 and set(declared.keys) == {f"Bearer {DECLARED_KEY}"}
    assert {s["path"] for s in declared.seen} == {"/v1/chat/completions"}


@pytest.mark.parametrize("status", [302, 303, 307])
def test_a_declared_endpoint_that_redirects_gets_nothing_sent_on(client, db, staff, keys, settings, status):
    collection, pool = machine_collection()
    with Stub() as elsewhere, Stub("redirect", status=status, location=f"{elsewhere.url}/chat/completions") as declared:
        _declare(settings, declared.url)
        client.force_login(staff)
        client.post(reverse("judging:machine", args=[collection.slug]),
                    {"name": "gpt", "kind": "openai", "pool": pool.pk, "endpoint": "local", "model": "tiny"})
    assert elsewhere.seen == []
    assert len(declared.seen) == 10  # one request a pair: a redirect is a failure, never retried
    verdict = MachineVerdict.objects.first()
    assert not verdict.ok and verdict.error == (f"the endpoint redirected to {elsewhere.host} (HTTP {status}); "
                                                f"redirects are not followed")
    assert not Judgment.objects.filter(source=Judgment.Source.MACHINE).exists()


def test_an_endpoint_s_words_reach_the_organizer_short_and_escaped(client, db, staff, keys, settings):
    collection, pool = machine_collection()
    body = b"<script>alert('key')</script>   metadata:\n\n" + b"SECRET " * 2000
    with Stub("refuse", body=body) as declared:
        _declare(settings, declared.url)
        client.force_login(staff)
        client.post(reverse("judging:machine", args=[collection.slug]),
                    {"name": "gpt", "kind": "openai", "pool": pool.pk, "endpoint": "local", "model": "tiny"})
    errors = list(MachineVerdict.objects.values_list("error", flat=True))
    assert len(errors) == 10 and all(len(e) <= 300 and "\n" not in e and "   " not in e for e in errors)
    assert errors[0].startswith("the endpoint refused the request: HTTP 400 <script>")
    page = client.get(reverse("judging:machine_verdicts", args=[collection.slug, "gpt"])).content.decode()
    assert "<script>alert" not in page and "&lt;script&gt;alert(&#x27;key&#x27;)&lt;/script&gt;" in page
    assert page.count("SECRET") < 10 * 30


def test_a_redirect_s_target_is_named_escaped(client, db, staff, keys, settings):
    collection, pool = machine_collection()
    with Stub("redirect", status=302, location="http://<b>evil</b>/x") as declared:
        _declare(settings, declared.url)
        client.force_login(staff)
        client.post(reverse("judging:machine", args=[collection.slug]),
                    {"name": "gpt", "kind": "openai", "pool": pool.pk, "endpoint": "local", "model": "tiny"})
    page = client.get(reverse("judging:machine_verdicts", args=[collection.slug, "gpt"])).content.decode()
    assert "redirected to &lt;b&gt;evil&lt;" in page and "<b>evil" not in page


def test_a_machine_judge_start_counts_towards_the_person_s_start_limit(client, db, staff, keys, settings):
    collection, pool = machine_collection()
    settings.JOB_STARTS_PER_MINUTE = 1
    with Stub() as declared:
        _declare(settings, declared.url)
        client.force_login(staff)
        form = {"name": "gpt", "kind": "openai", "pool": pool.pk, "endpoint": "local", "model": "tiny"}
        url = reverse("judging:machine", args=[collection.slug])
        assert client.post(url, form).status_code == 302
        refused = client.post(url, {**form, "name": "gpt2"})
    assert refused.status_code == 429 and "the most one person may start is 1" in refused.content.decode()
    job = Job.objects.get()
    assert job.started_by == staff and job.task_id  # started as every job is: its task's id kept


def test_a_base_url_stored_by_the_web_before_endpoints_were_declared_is_never_used(db, keys, settings):
    from judging.machine_services import machine_job_for
    from judging.tasks import machine_judge

    collection, pool = machine_collection()
    settings.JUDGE_ENDPOINTS = {}
    with Stub() as elsewhere:
        user = User.objects.create_user("machine:old")
        judge = MachineJudge.objects.create(collection=collection, name="gpt", kind="openai", user=user,
                                            config={"base_url": elsewhere.url, "model": "tiny"})  # as it was stored
        job, _ = machine_job_for(judge=judge, pool=pool)
        machine_judge.call(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and "was not given on the server's command line" in job.error
    assert elsewhere.seen == []


@pytest.mark.parametrize(("raw", "says"), [
    ("{not json", "JUDGE_ENDPOINTS is not JSON"),
    ('["local"]', "must be a JSON object"),
    ('{"local": {"base_url": "http://127.0.0.1:9/v1?x=", "models": ["m"]}}', "endpoint 'local': base_url must be"),
    ('{"local": {"base_url": "http://me:pw@127.0.0.1:9/v1", "models": ["m"]}}', "without user, query or fragment"),
    ('{"local": {"base_url": "file:///etc/passwd", "models": ["m"]}}', "base_url must be http(s)"),
    ('{"local": {"base_url": "http://127.0.0.1:9/v1", "models": []}}', "endpoint 'local': models must be"),
    ('{"local": {"base_url": "http://127.0.0.1:9/v1", "models": ["m"], "key": "sk-1"}}', "unknown fields ['key']"),
    ('{"local": {"base_url": "http://127.0.0.1:9/v1", "models": ["m"], "key_env": "A B"}}', "key_env must be"),
    ('{"lo cal": {"base_url": "http://127.0.0.1:9/v1", "models": ["m"]}}', "endpoint 'lo cal': its name"),
])
def test_a_bad_endpoint_declaration_stops_the_start_naming_the_entry(raw, says):
    from django.core.exceptions import ImproperlyConfigured

    from workbench.access.endpoints import judge_endpoints

    with pytest.raises(ImproperlyConfigured, match=re.escape(says)):
        judge_endpoints("JUDGE_ENDPOINTS", raw)


def test_the_settings_read_the_endpoints_and_limits_from_the_environment():
    code = ("import django; django.setup(); from django.conf import settings as s; "
            "print(s.JUDGE_ENDPOINTS, s.JUDGE_REPLY_MAX_BYTES, s.JUDGE_REQUEST_DEADLINE)")
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "workbench.settings", "JUDGE_REPLY_MAX_BYTES": "2048",
           "JUDGE_REQUEST_DEADLINE": "7.5",
           "JUDGE_ENDPOINTS": '{"local": {"base_url": "http://127.0.0.1:9/v1/", "models": ["m"], "key_env": "K"}}'}
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == ("{'local': {'base_url': 'http://127.0.0.1:9/v1', 'models': ['m'], 'key_env': 'K'}} "
                                   "2048 7.5"), done.stderr
    done = subprocess.run([sys.executable, "-c", code], env={**env, "JUDGE_REQUEST_DEADLINE": "0"}, cwd=root,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "JUDGE_REQUEST_DEADLINE='0' must be a number above 0" in done.stderr

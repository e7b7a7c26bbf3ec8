"""The openai machine judge against a real chat-completions server on 127.0.0.1 (tests/judging/chat_server.py):
each way an endpoint can answer is recorded as it should be, nothing is judged twice, a killed job resumes."""

from __future__ import annotations

import hashlib
import time
from io import StringIO

import pytest
from django.core.management import call_command

from judging import machine_endpoints, machine_services
from judging.models import Judgment, MachineJudge, MachineVerdict
from pooling.models import Pool, PoolEntry
from tests import factories
from tests.judging.chat_server import ChatServer
from workbench.models import Document, Job, Topic

CASES = ["well", "offscale", "malformed", "truncated", "cutjson", "refuse", "ratelimit", "flaky", "stall", "drop"]


@pytest.fixture
def server():
    with ChatServer() as running:
        yield running


@pytest.fixture
def pool(db):
    collection = factories.collection_with_topics(slug="chat", grades=[
        {"grade": g, "label": f"grade {g}"} for g in range(4)])
    topic = Topic.objects.get(collection=collection, qid="301")
    pool = Pool.objects.create(collection=collection, name="main", strategy="depth", params={"depth": 10})
    for order, case in enumerate(CASES, start=1):
        Document.objects.create(collection=collection, docno=f"d-{case}", text=f"A document. CASE:{case}")
        PoolEntry.objects.create(pool=pool, topic=topic, docno=f"d-{case}", judging_order=order, pool_rank=order)
    return pool


def _judge(pool, server, *extra) -> str:
    out = StringIO()
    call_command("machine_judge", pool.collection.slug, "--judge", "gpt", "--kind", "openai",
                 "--base-url", server.url, "--model", "tiny", "--timeout", "0.5", "--concurrency", "4", *extra,
                 stdout=out)
    return out.getvalue()


@pytest.fixture
def fast_retries(monkeypatch):
    """Back-off of 50 ms and two retries, so that the failing cases settle in about a second."""
    real = machine_endpoints.judge_class

    def quick(kind):
        cls = real(kind)

        def make(config, **kwargs):
            return cls({**config, "retries": 2, "backoff": 0.05}, **kwargs)
        return make
    monkeypatch.setattr(machine_endpoints, "judge_class", quick)


def test_each_reply_is_recorded_as_it_should_be(pool, server, fast_retries, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123")
    started = time.monotonic()
    out = _judge(pool, server)
    elapsed = time.monotonic() - started
    verdicts = {v.docno.removeprefix("d-"): v for v in MachineVerdict.objects.all()}
    assert set(verdicts) == set(CASES)
    good = {case: v.parsed_grade for case, v in verdicts.items() if v.ok}
    assert good == {"well": 2, "ratelimit": 1, "flaky": 1}  # rate limit and 5xx retried, then judged
    errors = {case: v.error for case, v in verdicts.items() if not v.ok}
    assert "not on the scale [0, 1, 2, 3]" in errors["offscale"]
    assert "not JSON" in errors["malformed"]
    assert "cut off" in errors["truncated"]
    assert "connection failed" in errors["cutjson"] or "not JSON" in errors["cutjson"]
    assert "refused the request: HTTP 400" in errors["refuse"] and server.requests["refuse"] == 1  # never retried
    assert "no reply within 0.5 s" in errors["stall"] and server.requests["stall"] == 3
    assert "connection failed" in errors["drop"] and server.requests["drop"] == 3
    assert server.requests["ratelimit"] == 2 and elapsed >= 0.4  # waited what Retry-After said
    assert all(v.parsed_grade is None and v.judgment is None for v in verdicts.values() if not v.ok)  # no guesses
    # provenance: model, host, prompt hash, raw reply, tokens; the key is sent, never stored
    well = verdicts["well"]
    assert well.model == "tiny" and well.endpoint_host.startswith("127.0.0.1:")
    sent = next(b["messages"][0]["content"] for b in server.bodies if "CASE:well" in b["messages"][0]["content"])
    assert well.prompt_hash == hashlib.sha256(sent.encode()).hexdigest()  # the exact prompt sent
    assert "##final score: 2" in well.raw_reply and well.prompt_tokens == 120 and well.completion_tokens == 6
    assert server.headers.get("Authorization") == "Bearer sk-test-123"
    assert "sk-test" not in str(MachineJudge.objects.get().config)
    body = server.bodies[0]
    assert body["temperature"] == 0 and body["model"] == "tiny" and "##final score" in body["messages"][0]["content"]
    assert "3 pairs judged by gpt" in out and "7 failed" in out
    assert Judgment.objects.filter(source=Judgment.Source.MACHINE).count() == 3


def test_a_second_run_asks_only_for_the_failed_pairs(pool, server, fast_retries):
    _judge(pool, server)
    asked = server.requests.copy()
    _judge(pool, server)
    assert server.requests["well"] == asked["well"] == 1  # judged pairs are never asked again
    assert server.requests["refuse"] == 2  # failures are tried again by a new run
    assert MachineVerdict.objects.filter(ok=True).count() == 3
    assert Judgment.objects.filter(source=Judgment.Source.MACHINE).count() == 3


def test_a_killed_worker_s_job_resumes_where_it_stopped(pool, server, fast_retries, monkeypatch):
    real_record, written = machine_services._record, []

    def killed_after_two(*args):
        if len(written) == 2:
            raise KeyboardInterrupt  # the worker dies: the job row stays "running"
        written.append(real_record(*args))
        return written[-1]
    monkeypatch.setattr(machine_services, "_record", killed_after_two)
    with pytest.raises(KeyboardInterrupt):
        _judge(pool, server, "--concurrency", "1")
    assert MachineVerdict.objects.count() == 2
    job = Job.objects.get(kind="machine judge")
    assert job.status == Job.Status.RUNNING
    monkeypatch.setattr(machine_services, "_record", real_record)
    asked = server.requests.copy()
    out = _judge(pool, server, "--concurrency", "1")
    assert f"resuming job #{job.pk}" in out
    assert MachineVerdict.objects.count() == len(CASES)  # every pair once
    first_two = [c for c in CASES[:2]]
    assert all(server.requests[c] == asked[c] for c in first_two)  # the two written before the kill: not asked again
    job.refresh_from_db()
    assert job.status == Job.Status.DONE and Job.objects.filter(kind="machine judge").count() == 1


def test_no_more_requests_at_once_than_the_concurrency_and_samples_take_the_majority(server, db):
    from judging.machine.base import Pair, Scale
    from judging.machine.openai_chat import OpenAIJudge
    judge = OpenAIJudge({"base_url": server.url, "model": "tiny", "concurrency": 2, "timeout": 5},
                        scale=Scale(grades=(0, 1, 2, 3), relevant_from=1))
    pairs = [Pair("1", f"d{i}", "q", "CASE:slow") for i in range(6)]
    verdicts = list(judge.judge([pairs]))
    assert [v.grade for v in verdicts] == [3] * 6 and server.most_in_flight == 2
    voting = OpenAIJudge({"base_url": server.url, "model": "tiny", "samples": 3},
                         scale=Scale(grades=(0, 1, 2, 3), relevant_from=1))
    verdict = voting.judge_pair(Pair("1", "v", "q", "CASE:vote"))
    assert verdict.ok and verdict.grade == 1 and server.requests["vote"] == 3 and verdict.prompt_tokens == 360

"""Machine judging split by topic into parts any worker claims (``JOB_PARTS``): the verdicts stored and the job's
lines are one worker's, the calibration is fitted once, a cancel stops every part, and a part done again after
its worker died judges nothing twice. The openai judge talks to a real chat-completions server on 127.0.0.1."""

from __future__ import annotations

import gc
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import timezone

from judging import machine_services
from judging.machine_services import machine_job_cancel, machine_job_for, machine_judge_ensure
from judging.models import Judgment, MachineVerdict
from judging.tasks import machine_judge
from pooling.models import Pool, PoolEntry
from tests import factories
from tests.judging.chat_server import ChatServer
from tests.judging.machine_fixtures import machine_collection
from tests.split_jobs import DB_TASKS
from workbench.models import Document, Job, Topic

#: topic -> (case the server answers, documents): 24 refusals in two topics, more than the 20 failures listed
LAYOUT = {"401": ("well", 6), "402": ("refuse", 12), "403": ("refuse", 12), "404": ("well", 4)}
PAIRS = sum(n for _, n in LAYOUT.values())


@pytest.fixture
def server():
    with ChatServer() as running:
        yield running


@pytest.fixture
def chat_pool(db):
    collection = factories.collection_with_topics(slug="chat", grades=[
        {"grade": g, "label": f"grade {g}"} for g in range(4)])
    Topic.objects.filter(collection=collection).delete()
    pool = Pool.objects.create(collection=collection, name="main", strategy="depth", params={"depth": 20})
    for qid, (case, count) in LAYOUT.items():
        topic = Topic.objects.create(collection=collection, qid=qid, title=f"topic {qid}")
        for order in range(1, count + 1):
            docno = f"{qid}-{order:02d}"
            Document.objects.create(collection=collection, docno=docno, text=f"Document {docno}. CASE:{case}")
            PoolEntry.objects.create(pool=pool, topic=topic, docno=docno, judging_order=order, pool_rank=order)
    return pool


def _start(pool, settings, parts: int, *, kind: str = "openai", config: dict | None = None) -> Job:
    settings.JOB_PARTS = parts
    judge = machine_judge_ensure(collection=pool.collection, name=kind, kind=kind, config=config)
    job, _ = machine_job_for(judge=judge, pool=pool)
    machine_judge.enqueue(job.pk)
    job.refresh_from_db()
    return job


def _stored() -> set[tuple]:
    return set(MachineVerdict.objects.values_list("topic__qid", "docno", "ok", "parsed_grade", "score", "probability",
                                                  "error", "raw_reply", "prompt_tokens", "completion_tokens"))


def _forget() -> None:
    """The machine's verdicts and judgments gone, and its jobs: the next job judges the pool afresh."""
    MachineVerdict.objects.all().delete()
    Judgment.objects.filter(source=Judgment.Source.MACHINE).delete()
    Job.objects.all().delete()


def _done(job: Job) -> list[str]:
    job.refresh_from_db()
    assert (job.status, job.error) == (Job.Status.DONE, ""), job.error
    return job.result["lines"]


def test_split_openai_judging_stores_the_verdicts_and_writes_the_lines_of_one_worker(chat_pool, server, settings):
    config = {"base_url": server.url, "model": "tiny", "timeout": 5}
    whole_lines = _done(_start(chat_pool, settings, 1, config=config))
    whole = _stored()
    assert len(whole) == PAIRS and whole_lines[0] == "10 pairs judged by openai on pool main (0 already judged, 24 failed); 1260 tokens"
    assert len(whole_lines) == 1 + 20 and whole_lines[1].startswith("402 402-01:") and whole_lines[-1].startswith("403 403-08:")
    for parts, expected in ((2, [["401", "402"], ["403", "404"]]), (3, [["401"], ["402"], ["403", "404"]])):
        _forget()
        server.requests.clear()
        job = _start(chat_pool, settings, parts, config=config)
        assert _done(job) == whole_lines
        assert _stored() == whole
        assert [p.params["topics"] for p in job.parts.order_by("pk")] == expected
        assert (job.done, job.total) == (len(expected), len(expected))
        assert sum(server.requests.values()) == PAIRS  # each pair asked once (a refusal is never retried)


def test_split_embedding_judging_fits_the_calibration_once_and_grades_as_one_worker(assessor, settings, monkeypatch):
    collection, pool = machine_collection(assessor=assessor)
    whole_lines = _done(_start(pool, settings, 1, kind="embedding"))
    whole, calibration = _stored(), Job.objects.get(kind="machine judge").params["calibration"]
    assert calibration["trained_on"] == 2  # the assessor's two judgments of topic 301
    fitted = []
    real = machine_services.fit
    monkeypatch.setattr(machine_services, "fit", lambda **kw: fitted.append(1) or real(**kw))
    for parts in (2, 3):
        _forget()
        job = _start(pool, settings, parts, kind="embedding")
        assert _done(job) == whole_lines and _stored() == whole
        assert job.parts.count() == 2 and job.params["calibration"] == calibration
    assert len(fitted) == 2  # once per job, before its parts
    # one topic left to judge: one worker judges it, no parts
    MachineVerdict.objects.filter(topic__qid="302").delete()
    Judgment.objects.filter(source=Judgment.Source.MACHINE, topic__qid="302").delete()
    job = _start(pool, settings, 2, kind="embedding")
    assert _done(job) == ["4 pairs judged by embedding on pool main (6 already judged, 0 failed); 0 tokens"]
    assert job.parts.count() == 0 and _stored() == whole


def test_a_cancel_stops_every_part_and_the_job_resumes_to_the_same_verdicts(chat_pool, server, settings, monkeypatch):
    config = {"base_url": server.url, "model": "tiny", "timeout": 5, "concurrency": 1}
    _done(_start(chat_pool, settings, 1, config=config))
    whole = _stored()
    _forget()
    server.bodies.clear()
    monkeypatch.setattr(machine_services, "REPORT_EVERY", 1)
    real_record = machine_services._record

    def cancelled_after_three(judge, verdict, topic_id, provenance, job):
        written = real_record(judge, verdict, topic_id, provenance, job)
        if MachineVerdict.objects.count() == 3:
            machine_job_cancel(job=job)
        return written
    monkeypatch.setattr(machine_services, "_record", cancelled_after_three)
    job = _start(chat_pool, settings, 2, config=config)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error == f"cancelled: judged 3 of {PAIRS} pairs (0 failed); {3 * 126} tokens so far; run it again to continue"
    assert MachineVerdict.objects.count() == 3
    assert not [b for b in server.bodies if "Document 403" in str(b) or "Document 404" in str(b)]  # nor asked
    assert list(job.parts.order_by("pk").values_list("status", flat=True)) == ["failed", "failed"]
    monkeypatch.setattr(machine_services, "_record", real_record)
    recorded = [f"Document {docno}." for docno in MachineVerdict.objects.values_list("docno", flat=True)]
    server.bodies.clear()
    resumed = _start(chat_pool, settings, 2, config=config)
    assert resumed.pk == job.pk
    lines = _done(resumed)
    assert lines[0].startswith(f"{10 - 3} pairs judged by openai on pool main (3 already judged, 24 failed)")
    assert _stored() == whole and len(server.bodies) == PAIRS - 3  # the 3 judged before the cancel: not asked again
    assert not [b for b in server.bodies if any(doc in str(b) for doc in recorded)]
    assert resumed.parts.count() == 2 and Job.objects.filter(parent__isnull=False).count() == 2  # old parts gone


@pytest.mark.django_db(transaction=True)
def test_a_part_whose_worker_died_is_done_again_and_judges_nothing_twice(chat_pool, server, settings, client,
                                                                          organizer, monkeypatch):
    from django_tasks.base import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    config = {"base_url": server.url, "model": "tiny", "timeout": 5, "concurrency": 1}
    whole_lines = _done(_start(chat_pool, settings, 1, config=config))
    whole = _stored()
    _forget()
    server.requests.clear()
    settings.TASKS, settings.JOB_PARTS = DB_TASKS, 2
    out = StringIO()
    call_command("machine_judge", chat_pool.collection.slug, "--judge", "openai", "--kind", "openai", "--base-url",
                 server.url, "--model", "tiny", "--concurrency", "1", stdout=out)  # plans: 2 parts queued
    job = Job.objects.get(kind="machine judge")
    assert out.getvalue() == f"job #{job.pk}: 0 of 2 parts done (waiting for workers); db_worker processes finish it\n"
    worker = ("db_worker", "--batch", "--no-startup-delay", "--no-reload")
    assert (job.status, job.done, job.total) == (Job.Status.RUNNING, 0, 2)
    client.force_login(organizer)
    assert "0 of 2 parts done (waiting for workers)" in client.get(f"/jobs/{job.pk}/?fragment=1").content.decode()
    # the first part's worker judged two pairs and was killed: its verdicts stay, its rows say "running"
    dead = job.parts.order_by("pk")[0]
    real_record = machine_services._record

    def killed_after_two(*args):
        if MachineVerdict.objects.count() == 2:
            raise KeyboardInterrupt
        return real_record(*args)
    monkeypatch.setattr(machine_services, "_record", killed_after_two)
    judge = machine_judge_ensure(collection=chat_pool.collection, name="openai", kind="openai", config=config)
    with pytest.raises(KeyboardInterrupt):
        machine_services.machine_judge_run(judge=judge, pool=chat_pool, job=job, topics=dead.params["topics"])
    gc.collect()  # the killed run's requests in flight settle (its judge's generator is closed)
    monkeypatch.setattr(machine_services, "_record", real_record)
    recorded = [f"Document {docno}." for docno in MachineVerdict.objects.values_list("docno", flat=True)]
    server.requests.clear()
    server.bodies.clear()
    long_ago = timezone.now() - timedelta(hours=1)
    DBTaskResult.objects.filter(id=dead.task_id).update(status=TaskResultStatus.RUNNING, worker_ids=["killed"],
                                                        started_at=long_ago)
    Job.objects.filter(pk=dead.pk).update(status=Job.Status.RUNNING, started_at=long_ago, heartbeat_at=long_ago)
    call_command(*worker, stdout=StringIO(), stderr=StringIO())
    lines = _done(job)
    assert lines[1:] == whole_lines[1:]  # as one worker resumed after a kill says: 2 already judged
    assert lines[0] == "8 pairs judged by openai on pool main (2 already judged, 24 failed); 1008 tokens"
    stored = _stored()
    assert stored == whole, (stored - whole, whole - stored)
    assert len(server.bodies) == PAIRS - 2  # nothing judged twice: the two pairs judged before the kill not asked
    assert not [b for b in server.bodies if any(doc in str(b) for doc in recorded)]
    dead.refresh_from_db()
    assert dead.status == Job.Status.DONE and dead.params["retried"]
    parts = DBTaskResult.objects.filter(task_path="judging.tasks.machine_judge_part")
    assert parts.filter(status=TaskResultStatus.SUCCESSFUL).count() == 2
    assert parts.filter(status=TaskResultStatus.FAILED).count() == 1  # the killed worker's


def test_a_job_that_cannot_be_planned_fails_in_one_line_as_one_worker_s_does(chat_pool, server, settings, assessor):
    _, other = machine_collection(assessor=assessor)
    judge = machine_judge_ensure(collection=chat_pool.collection, name="openai", kind="openai",
                                 config={"base_url": server.url, "model": "tiny"})
    settings.JOB_PARTS = 2
    job = Job.objects.create(kind="machine judge", collection=chat_pool.collection,
                             params={"judge_id": judge.pk, "pool_id": other.pk})
    machine_judge.enqueue(job.pk)
    job.refresh_from_db()
    assert (job.status, job.error) == (Job.Status.FAILED, "pool 'main' is not a pool of collection 'chat'")
    assert job.parts.count() == 0 and not MachineVerdict.objects.exists() and not server.bodies

"""The machine agreement page reads figures a background job computed (ranking every run twice takes seconds
at TREC size): the board job queues it once the collection changed, or the page does when nothing computes the
judge's current state, and says it is being computed until then; the figures are the command's."""

from __future__ import annotations

import json
import math

import pytest
from django.urls import reverse

from judging import machine_agreement
from judging.machine_agreement import KIND, agreement_stored
from judging.models import Judgment, MachineJudge
from judging.tasks import machine_agreement_job
from tests.judging.machine_fixtures import machine_collection
from workbench.jsonsafe import numpy_scalar
from workbench.models import Job


@pytest.fixture
def judged(client, assessor, organizer):
    """The embedding judge has judged the pool (its 10 pairs); the humans judged c1 and c4 of topic 301."""
    collection, pool = machine_collection(assessor=assessor)
    client.force_login(organizer)
    client.post(reverse("judging:machine", args=[collection.slug]),
                {"name": "embedding", "kind": "embedding", "pool": pool.pk})
    Job.objects.filter(kind=KIND).delete()  # the page was not asked yet: start from nothing stored
    machine_agreement._figures.clear()
    return collection, MachineJudge.objects.get(name="embedding")


def _queue_only(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}


def _not_in_the_request(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the agreement was computed in the request")

    monkeypatch.setattr(machine_agreement, "_machine_agreement", refuse)


def _text(figures: dict) -> str:
    return json.dumps(figures, sort_keys=True, default=numpy_scalar)


PAGE = reverse("judging:machine_agreement", args=["mach", "embedding"])


def test_the_board_job_computes_the_agreement_and_the_page_only_reads_it(client, judged, monkeypatch):
    from evaluation import tasks  # the board job (evaluation) asks judging for it: the layers point down

    collection, judge = judged
    tasks.request_board(collection)  # what the change asks for; the jobs run at once here
    assert Job.objects.get(kind=KIND).status == Job.Status.DONE
    direct = machine_agreement.machine_agreement(judge)  # what `manage.py machine_agreement` prints
    machine_agreement._figures.clear()  # a fresh web worker
    _not_in_the_request(monkeypatch)
    stored, job = agreement_stored(judge)
    assert job is None and _text(stored) == _text(direct)
    assert any(isinstance(v, float) and math.isnan(v) for v in stored.values())  # "not enough data" kept as NaN
    page = client.get(PAGE)
    assert page.status_code == 200 and b"Cohen" in page.content and b"on 1 topic" in page.content
    assert b"not enough data" in page.content
    assert Job.objects.filter(kind=KIND).count() == 1  # the page asked for none


def test_the_page_says_it_is_being_computed_then_shows_the_figures(client, judged, settings, monkeypatch):
    _queue_only(settings)
    with monkeypatch.context() as patched:
        _not_in_the_request(patched)
        for _ in range(2):  # reloaded: still the one job
            waiting = client.get(PAGE)
            assert waiting.status_code == 200 and 'id="agreement-computing"' in waiting.content.decode()
            assert "(waiting for a worker)" in waiting.content.decode()
    job = Job.objects.get(kind=KIND)
    assert job.status == Job.Status.QUEUED and job.params["name"] == "embedding"
    machine_agreement_job.call(job.pk)  # the worker comes
    job.refresh_from_db()
    assert job.result["url"] == PAGE
    machine_agreement._figures.clear()
    _not_in_the_request(monkeypatch)
    page = client.get(PAGE)
    assert b"Cohen" in page.content and b"being computed" not in page.content


def test_a_new_human_judgment_shows_the_old_figures_marked_updating_until_the_new_ones_are_in(
        client, judged, settings, assessor, monkeypatch):
    collection, judge = judged
    before = client.get(PAGE).content.decode()  # the page's job ran at once
    assert "on 1 topic" in before and "Updating" not in before
    _queue_only(settings)
    topic = collection.topics.get(qid="302")
    Judgment.objects.create(collection=collection, topic=topic, docno="p1", grade=2, assessor=assessor.username,
                            user=assessor)
    with monkeypatch.context() as patched:
        _not_in_the_request(patched)
        page = client.get(PAGE).content.decode()
    assert 'id="agreement-updating"' in page and "on 1 topic" in page  # the figures before the judgment
    job = Job.objects.get(kind=KIND, status=Job.Status.QUEUED)
    machine_agreement_job.call(job.pk)
    page = client.get(PAGE).content.decode()
    assert "Updating" not in page and "on 2 topics" in page


def test_a_failed_computation_says_why_and_is_not_retried_on_every_visit(client, judged, monkeypatch):
    def fail(*args, **kwargs):
        raise ValueError("the humans' qrels could not be read")

    monkeypatch.setattr(machine_agreement, "_machine_agreement", fail)
    page = client.get(PAGE).content.decode()
    assert 'id="agreement-failed"' in page and "could not be read" in page
    client.get(PAGE)
    assert Job.objects.filter(kind=KIND).count() == 1

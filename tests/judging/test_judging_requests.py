"""What one judgment costs the server: the queries of the judging page and of a judgment's post, and the board job
a burst of judgments asks for (one, started BOARD_PAUSE_SECONDS after the last one ended at the earliest). 20
assessors judging at once spend the server's time on these (tests/benchmarks/judging_during_import.py)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from evaluation import board_files, tasks
from judging.assignments import assignments_create
from judging.models import AssignmentItem, Judgment
from workbench.models import Job


@pytest.fixture
def judging_client(client, pool, assessor):
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    client.force_login(assessor)
    return client


def _items(user) -> list[AssignmentItem]:
    return list(AssignmentItem.objects.filter(assignment__assessor=user).order_by("judging_order"))


def _token(page: str) -> str:
    return re.search(r'name="client_token" value="([^"]+)"', page).group(1)


def test_the_judging_page_reads_the_document_and_its_place_in_a_few_queries(judging_client, assessor):
    first, second = _items(assessor)[:2]
    with CaptureQueriesContext(connection) as queries:
        response = judging_client.get(f"/judge/item/{second.pk}/")
    assert response.status_code == 200
    body = response.content.decode()
    assert f"/judge/item/{first.pk}/" in body, "the link to the document before it"
    # the session, the user, the item (with its assignment, topic, pool, collection and current judgment), the
    # document, the assignment's progress, and the items before and after it (one query)
    assert len(queries) <= 6, "\n".join(q["sql"][:120] for q in queries.captured_queries)


def test_a_judgment_post_is_saved_and_leads_on_in_a_bounded_number_of_queries(judging_client, assessor):
    first, second = _items(assessor)[:2]
    token = _token(judging_client.get(f"/judge/item/{first.pk}/").content.decode())
    with CaptureQueriesContext(connection) as queries:
        response = judging_client.post(f"/judge/item/{first.pk}/", {"grade": "2", "client_token": token,
                                                                    "time_spent_ms": "3000"})
    assert response.status_code == 302 and response["Location"] == f"/judge/item/{second.pk}/"
    assert Judgment.objects.get(client_token=token).grade == 2
    # session, user, item, document (its text: a grade needs one, and passages fit in it), the token already used?,
    # then in the transaction: the item locked, the assessor's previous judgment of it, the insert, the items it
    # becomes current on, the document's near-duplicate class (two reads); then the next document. The judging
    # page's read of the document says the text is held: the transaction does not read it again.
    assert len(queries) <= 14, "\n".join(q["sql"][:120] for q in queries.captured_queries)


def test_a_burst_of_judgments_queues_one_board_job(judging_client, assessor, settings,
                                                   django_capture_on_commit_callbacks):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}  # no worker comes
    settings.BOARD_ON_CHANGE = True
    for item in _items(assessor):
        token = _token(judging_client.get(f"/judge/item/{item.pk}/").content.decode())
        with django_capture_on_commit_callbacks(execute=True):
            response = judging_client.post(f"/judge/item/{item.pk}/", {"grade": "1", "client_token": token})
        assert response.status_code == 302
    assert Judgment.objects.count() == 4
    assert Job.objects.filter(kind=board_files.KIND).count() == 1


def test_a_board_job_asked_soon_after_the_last_one_waits_for_a_pause_after_it(pool, settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
    settings.BOARD_PAUSE_SECONDS = 10
    collection, now = pool.collection, timezone.now()
    first = tasks.request_board(collection)
    assert _run_after(first) is None, "the first board job after a quiet while starts at once"
    Job.objects.filter(pk=first.pk).update(status=Job.Status.DONE, started_at=now - timedelta(seconds=8),
                                           finished_at=now - timedelta(seconds=3))
    second = tasks.request_board(collection)
    assert second.pk != first.pk
    assert _run_after(second) == now + timedelta(seconds=7), "ten seconds after the last one ended"
    assert tasks.request_board(collection).pk == second.pk, "one queued job per collection"
    Job.objects.filter(pk=second.pk).update(status=Job.Status.RUNNING, started_at=now - timedelta(seconds=1))
    third = tasks.request_board(collection)
    assert _run_after(third) == now + timedelta(seconds=14), "while one runs: its start, the last one's 5 s, 10 s"
    Job.objects.filter(pk__in=[first.pk, second.pk, third.pk]).update(
        status=Job.Status.DONE, started_at=now - timedelta(seconds=60), finished_at=now - timedelta(seconds=50))
    assert _run_after(tasks.request_board(collection)) is None, "the last one ended long ago: at once"


def _run_after(job: Job):
    from django_tasks import default_task_backend

    return default_task_backend.get_result(job.task_id).task.run_after

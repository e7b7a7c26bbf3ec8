"""An adaptive pool learns from a judgment after the judgment is committed: the judgment's transaction holds the
judgment only, the assessor's next page still has the document the pool chose, a topic stopped meanwhile gets
no new document, and an advance that fails loses no judgment and is made on the next queue fill."""

from __future__ import annotations

import logging
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection

from judging.assignments import assignments_create
from judging.models import AssignmentItem, Judgment
from judging.queueing import queue_entries
from judging.services import judgment_record
from pooling import advance
from pooling.models import Pool, PoolEntry
from pooling.services import pool_topic_stop
from tests import factories
from workbench.models import Document

RANKINGS = {"alpha": {"301": ["a1", "a2", "s1", "a3"]}, "beta": {"301": ["s1", "c1", "c2", "c3"]}}
TEXTS = {"c0": "organized crime mafia smuggling ring",
         **{f"m{i}": f"mafia smuggling ring arrested harbour {i}" for i in range(3)},
         **{f"n{i}": f"weather bulletin rainfall forecast {i}" for i in range(10)}}


@pytest.fixture
def mtf(db, tmp_path, assessor):
    collection = factories.collection_with_topics()
    for tag, ranking in RANKINGS.items():
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", "robust", str(path), stdout=StringIO())
    factories.add_documents(collection, sorted({d for r in RANKINGS.values() for ds in r.values() for d in ds}))
    call_command("build_pool", "robust", "--strategy", "mtf", "--budget", "4", "--depth", "4", "--seed", "1",
                 stdout=StringIO())
    pool = Pool.objects.get()
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    return pool


@pytest.fixture
def cal(db, assessor):
    collection = factories.collection_with_topics()
    Document.objects.bulk_create(Document(collection=collection, docno=d, text=t) for d, t in TEXTS.items())
    call_command("build_pool", "robust", "--strategy", "cal", "--budget", "4", "--seed", "3", stdout=StringIO(),
                 stderr=StringIO())
    pool = Pool.objects.get()
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    return pool


def waiting(assessor) -> list[str]:
    return list(AssignmentItem.objects.filter(assignment__assessor=assessor, latest__isnull=True)
                .order_by("judging_order").values_list("docno", flat=True))


def test_the_pool_advances_after_the_judgments_transaction_and_the_keypress_answers_its_choice(
        mtf, assessor, client):
    """No statement of the pool's advance runs while the judgment's transaction is open; the keypress's answer
    (X-Judge-Swap) is the page of the document the pool added."""
    seen = {"block": None, "inside": [], "after": []}

    def watch(execute, sql, params, many, context):
        if sql.startswith("INSERT INTO \"judging_judgment\""):
            seen["block"] = connection.atomic_blocks[-1]
        elif seen["block"] is not None and "pooling_poolentry" in sql and not sql.startswith("SELECT"):
            seen["inside" if seen["block"] in connection.atomic_blocks else "after"].append(sql)
        return execute(sql, params, many, context)

    client.force_login(assessor)
    first = AssignmentItem.objects.get(assignment__assessor=assessor)
    with connection.execute_wrapper(watch):
        response = client.post(f"/judge/item/{first.pk}/", {"grade": "1", "client_token": "k1"},
                               HTTP_X_JUDGE_SWAP="1")
    assert seen["block"] is not None and seen["inside"] == [] and seen["after"], "the advance wrote after commit"
    chosen = PoolEntry.objects.filter(pool=mtf, topic__qid="301").order_by("-judging_order").first()
    assert chosen.docno != first.docno and waiting(assessor) == [chosen.docno]
    following = AssignmentItem.objects.get(assignment__assessor=assessor, docno=chosen.docno)
    assert response.status_code == 200 and response["X-Judge-Url"] == f"/judge/item/{following.pk}/"


def test_a_topic_stopped_while_the_pool_retrains_gets_no_new_document(cal, assessor, monkeypatch):
    """The organizer stops the topic after the judgment committed, while the pool works out its next document:
    that document is never added nor offered."""
    planned = advance._plan

    def stopped_meanwhile(pool, qid, judged):
        plan = planned(pool, qid, judged)
        if plan.new and "301" not in Pool.objects.get(pk=pool.pk).params.get("stopped", {}):
            pool_topic_stop(pool=pool, qid=qid, reason="enough")
        return plan

    monkeypatch.setattr(advance, "_plan", stopped_meanwhile)
    first = waiting(assessor)
    judgment_record(item_id=AssignmentItem.objects.get(docno=first[0]).pk, user=assessor, grade=1, client_token="a")
    assert Judgment.objects.filter(docno=first[0]).count() == 1
    assert list(PoolEntry.objects.filter(pool=cal, topic__qid="301").values_list("docno", flat=True)) == first
    assert waiting(assessor) == []


def test_an_advance_that_fails_keeps_the_judgment_and_is_made_on_the_next_queue_fill(
        mtf, assessor, client, monkeypatch, caplog):
    working = advance._topic_strategy

    def broken(pool, qid, sequence):
        raise RuntimeError("disk full")

    client.force_login(assessor)
    first = AssignmentItem.objects.get(assignment__assessor=assessor)
    monkeypatch.setattr(advance, "_topic_strategy", broken)
    with caplog.at_level(logging.ERROR, logger="judging.queueing"):
        response = client.post(f"/judge/item/{first.pk}/", {"grade": "1", "client_token": "k1"})
    assert response.status_code == 302 and response["Location"] == "/judge/", "nothing left for now: the queue"
    assert Judgment.objects.get(client_token="k1").grade == 1, "the judgment was committed before the advance"
    assert "the pool's advance after a judgment failed" in caplog.text
    monkeypatch.setattr(advance, "_topic_strategy", working)
    page = client.get("/judge/")  # the queue fills: the advance owed is made
    assert page.status_code == 200
    chosen = PoolEntry.objects.filter(pool=mtf, topic__qid="301").order_by("-judging_order").first()
    assert chosen.docno != first.docno and waiting(assessor) == [chosen.docno]
    assert PoolEntry.objects.get(pool=mtf, topic__qid="301", docno=first.docno).relevant is True


def test_two_advances_at_once_add_the_next_document_once(mtf, assessor, outsider, monkeypatch):
    """Two assessors' judgments of the same document commit at once: both advances plan the same next
    document; the second to write finds the topic changed, plans again and adds nothing."""
    assignments_create(pool=mtf, assessors=[outsider], topics=["301"], overlap=2)
    planned, nested = advance._plan, []

    def at_once(pool, qid, judged):
        plan = planned(pool, qid, judged)
        if plan.new and not nested:
            nested.append(True)  # the other process's advance runs to its end between this plan and its write
            queue_entries(pool, advance._advance(pool, qid, judged, (pool.pk, qid)).to_judge)
        return plan

    first = AssignmentItem.objects.get(assignment__assessor=assessor)
    Judgment.objects.create(collection=mtf.collection, topic=first.assignment.topic, docno=first.docno, grade=1,
                            assessor=outsider.username, user=outsider, source=Judgment.Source.WEB)
    monkeypatch.setattr(advance, "_plan", at_once)
    judgment_record(item_id=first.pk, user=assessor, grade=1, client_token="a")
    assert nested and PoolEntry.objects.filter(pool=mtf, topic__qid="301").count() == 2
    assert waiting(assessor) == waiting(outsider)[1:] and len(waiting(assessor)) == 1

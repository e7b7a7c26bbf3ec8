"""The assessor's workspace: assignments, the judging page, and judgments that are never lost."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.assignments import AssignmentRefused, assignments_create
from judging.models import Assignment, AssignmentItem, Judgment
from judging.qrels import qrels
from judging.services import JudgmentRefused, judgment_record


def items_of(user):
    return list(AssignmentItem.objects.filter(assignment__assessor=user).order_by("assignment_id", "judging_order"))


def test_assigning_whole_topics_gives_each_document_to_one_assessor(pool, assessor, outsider):
    summary = assignments_create(pool=pool, assessors=[assessor, outsider])
    assert summary.documents == 6 and summary.items == 6
    by_topic = {a.topic.qid: a.assessor for a in Assignment.objects.all()}
    assert set(by_topic) == {"301", "302"}
    assert by_topic["301"] != by_topic["302"], "the two topics go to different assessors"


def test_overlap_gives_each_document_to_that_many_distinct_assessors(pool, assessor, outsider, organizer):
    assignments_create(pool=pool, assessors=[assessor, outsider, organizer], overlap=2)
    holders = {}
    for item in AssignmentItem.objects.select_related("assignment"):
        holders.setdefault((item.assignment.topic_id, item.docno), set()).add(item.assignment.assessor_id)
    assert len(holders) == 6 and all(len(h) == 2 for h in holders.values())


def test_load_balancing_weighs_documents_by_length_not_count(pool, assessor, outsider):
    # one very long document (d5) weighs as much as the five others together
    from workbench.models import Document

    Document.objects.filter(docno="d5").update(length=5000)
    Document.objects.filter(docno__in=["d1", "d2", "d3", "d4"]).update(length=1000)
    Document.objects.filter(docno="d6").update(length=10)
    summary = assignments_create(pool=pool, assessors=[assessor, outsider], batch_size=1)
    counts = sorted(v["items"] for v in summary.per_assessor.values())
    efforts = sorted(v["effort"] for v in summary.per_assessor.values())
    assert counts == [1, 5], "whoever reads the long document gets fewer documents"
    assert efforts[1] - efforts[0] < 1000


def test_reassigning_after_the_pool_grows_assigns_only_new_documents(pool, assessor):
    assignments_create(pool=pool, assessors=[assessor])
    from pooling.models import PoolEntry

    PoolEntry.objects.create(pool=pool, topic=pool.collection.topics.get(qid="302"), docno="d7", judging_order=3,
                             pool_rank=7)
    summary = assignments_create(pool=pool, assessors=[assessor])
    assert summary.items == 1
    assert AssignmentItem.objects.count() == 7


def test_overlap_larger_than_the_number_of_assessors_is_refused(pool, assessor):
    with pytest.raises(AssignmentRefused, match="overlap 2 needs between 1 and 1"):
        assignments_create(pool=pool, assessors=[assessor], overlap=2)


def test_assign_command_prints_the_work_of_each_assessor(pool, assessor, outsider):
    out = StringIO()
    call_command("assign", "robust", "--assessor", "arthur", "--assessor", "oscar", "--topics", "301",
                 stdout=out)
    assert "assigned 4 documents" in out.getvalue()
    assert "arthur" in out.getvalue() and "oscar" in out.getvalue()
    assert not Assignment.objects.filter(topic__qid="302").exists()


def test_assign_command_names_an_unknown_assessor(pool):
    with pytest.raises(CommandError, match="no user 'nobody'"):
        call_command("assign", "robust", "--assessor", "nobody", stdout=StringIO())


def test_a_judgment_is_appended_and_becomes_the_current_grade(pool, assessor):
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    item = items_of(assessor)[0]
    first = judgment_record(item_id=item.pk, user=assessor, grade=2, client_token="t1", time_spent_ms=4200)
    second = judgment_record(item_id=item.pk, user=assessor, grade=0, client_token="t2")
    item.refresh_from_db()
    assert item.latest == second and second.previous == first
    assert Judgment.objects.filter(docno=item.docno).count() == 2
    assert (first.assessor, first.time_spent_ms) == ("arthur", 4200)


def test_the_same_post_twice_records_one_judgment(pool, assessor):
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    item = items_of(assessor)[0]
    a = judgment_record(item_id=item.pk, user=assessor, grade=1, client_token="same")
    b = judgment_record(item_id=item.pk, user=assessor, grade=1, client_token="same")
    assert a.pk == b.pk and Judgment.objects.count() == 1


def test_a_grade_off_the_scale_is_refused(pool, assessor):
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    with pytest.raises(JudgmentRefused, match="not on the scale"):
        judgment_record(item_id=items_of(assessor)[0].pk, user=assessor, grade=7, client_token="x")
    assert Judgment.objects.count() == 0


def test_cannot_judge_is_recorded_but_is_not_a_grade(pool, assessor):
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    judgment = judgment_record(item_id=items_of(assessor)[0].pk, user=assessor, grade=None, cannot_judge=True,
                               client_token="c")
    assert judgment.grade is None and judgment.cannot_judge
    assert qrels(pool.collection).empty


# --- pages ----------------------------------------------------------------------------------------

@pytest.fixture
def judging_client(client, pool, assessor):
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    client.force_login(assessor)
    return client


def test_next_takes_the_assessor_to_the_first_document_in_judging_order(judging_client, assessor):
    response = judging_client.get("/judge/next/")
    first = items_of(assessor)[0]
    assert response.status_code == 302 and response["Location"] == f"/judge/item/{first.pk}/"
    assert first.docno == "d3", "the pool's judging order, not rank order"


def test_the_judging_page_shows_topic_document_scale_and_progress(judging_client, assessor):
    item = items_of(assessor)[0]
    body = judging_client.get(f"/judge/item/{item.pk}/").content.decode()
    assert "International Organized Crime" in body
    assert "Text of d3" in body
    assert re.search(r'role="progressbar"[^>]*aria-valuenow="0"', body)
    for label in ["Not relevant", "Relevant", "Highly relevant", "Cannot judge"]:
        assert label in body


def test_the_judging_page_never_shows_runs_ranks_or_pool_provenance(judging_client, assessor, pool):
    from pooling.models import PoolEntry

    PoolEntry.objects.filter(pool=pool).update(provenance={"secret-run-tag": 1})
    body = judging_client.get(f"/judge/item/{items_of(assessor)[0].pk}/").content.decode()
    assert "secret-run-tag" not in body
    assert "rank" not in body.lower()


def test_posting_a_grade_stores_it_and_moves_to_the_next_document(judging_client, assessor):
    first, second = items_of(assessor)[:2]
    response = judging_client.post(f"/judge/item/{first.pk}/", {"grade": "2", "client_token": "tok-1",
                                                               "time_spent_ms": "3100"})
    assert response.status_code == 302 and response["Location"] == f"/judge/item/{second.pk}/"
    judgment = Judgment.objects.get()
    assert (judgment.docno, judgment.grade, judgment.time_spent_ms) == (first.docno, 2, 3100)
    body = judging_client.get(f"/judge/item/{second.pk}/").content.decode()
    assert re.search(r'aria-valuenow="1"', body)


def test_without_javascript_time_is_measured_on_the_server(judging_client, assessor):
    item = items_of(assessor)[0]
    page = judging_client.get(f"/judge/item/{item.pk}/").content.decode()
    shown_at = re.search(r'name="shown_at" value="([^"]+)"', page).group(1)
    judging_client.post(f"/judge/item/{item.pk}/", {"grade": "1", "client_token": "t", "shown_at": shown_at})
    assert Judgment.objects.get().time_spent_ms is not None


def test_going_back_shows_the_current_grade_for_revision(judging_client, assessor):
    first, second = items_of(assessor)[:2]
    judging_client.post(f"/judge/item/{first.pk}/", {"grade": "1", "client_token": "a"})
    body = judging_client.get(f"/judge/item/{second.pk}/").content.decode()
    assert f'href="/judge/item/{first.pk}/" id="prev-link"' in body
    back = judging_client.get(f"/judge/item/{first.pk}/").content.decode()
    assert "Your current judgment: <strong>Relevant</strong>" in back


def test_a_post_without_a_grade_is_refused_and_nothing_is_stored(judging_client, assessor):
    response = judging_client.post(f"/judge/item/{items_of(assessor)[0].pk}/", {"client_token": "z"})
    assert response.status_code == 400 and b"Choose a grade" in response.content
    assert Judgment.objects.count() == 0


def test_when_everything_is_judged_next_returns_to_the_queue(judging_client, assessor):
    for n, item in enumerate(items_of(assessor)):
        judging_client.post(f"/judge/item/{item.pk}/", {"grade": "0", "client_token": f"k{n}"})
    response = judging_client.get("/judge/next/", follow=True)
    assert b"Nothing left to judge" in response.content


def test_an_assessor_cannot_open_or_judge_another_assessors_document(client, pool, assessor, outsider):
    assignments_create(pool=pool, assessors=[outsider], topics=["301"])
    theirs = items_of(outsider)[0]
    client.force_login(assessor)
    assert client.get(f"/judge/item/{theirs.pk}/").status_code == 404
    assert client.post(f"/judge/item/{theirs.pk}/", {"grade": "1", "client_token": "evil"}).status_code == 404
    assert Judgment.objects.count() == 0


def test_the_queue_lists_only_the_assessors_own_topics_with_progress(client, pool, assessor, outsider):
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    assignments_create(pool=pool, assessors=[outsider], topics=["302"])
    client.force_login(assessor)
    body = client.get("/judge/").content.decode()
    assert "International Organized Crime" in body and "Poliomyelitis" not in body
    assert "0 / 4" in body


def test_anonymous_users_cannot_reach_the_workspace(client, pool):
    for path in ["/judge/", "/judge/next/", "/judge/item/1/"]:
        response = client.get(path)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_a_post_the_database_cannot_store_says_so_and_keeps_the_choice(judging_client, assessor, monkeypatch):
    from django.db import OperationalError

    from judging import views

    def locked(**kwargs):
        raise OperationalError("database is locked")

    monkeypatch.setattr(views, "judgment_record", locked)
    item = items_of(assessor)[0]
    response = judging_client.post(f"/judge/item/{item.pk}/", {"grade": "2", "client_token": "t-locked"},
                                   HTTP_X_JUDGE_SWAP="1")
    body = response.content.decode()
    assert response.status_code == 503
    assert "Your judgment was NOT saved: the database is busy" in body and "Text of d3" in body
    assert re.search(r'value="2"[^>]*class="[^"]*pending', body)  # the choice, marked to send again
    assert not Judgment.objects.exists()


def test_my_judgments_and_the_boundary_are_the_assessors_own(client, pool, assessor, outsider):
    from judging.models import Assignment

    assignments_create(pool=pool, assessors=[assessor])
    mine = Assignment.objects.filter(assessor=assessor).order_by("id")
    client.force_login(outsider)
    assert client.get(f"/judge/topic/{mine[0].pk}/").status_code == 404
    assert client.get(f"/judge/finished/{mine[0].pk}/next/{mine[1].pk}/").status_code == 404
    client.force_login(assessor)
    page = client.get(f"/judge/topic/{mine[0].pk}/").content.decode()
    assert "0 of 4 judged" in page and "d3" in page


def test_skipping_moves_the_document_to_the_end_of_its_topic(judging_client, assessor):
    first = items_of(assessor)[0]
    response = judging_client.post(f"/judge/item/{first.pk}/", {"skip": "1"})
    assert response.status_code == 302 and response["Location"] != f"/judge/item/{first.pk}/"
    assert items_of(assessor)[-1].pk == first.pk and not Judgment.objects.exists()

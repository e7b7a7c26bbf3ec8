"""The assessor's answer pages: one nugget at a time against one answer, then each citation against its segment.
Every choice is an append-only record against the bank version shown; a post sent twice records once; a
choice made against a bank that changed is refused, not filed under the new one; nobody else's task is
reachable, and no run is named."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from answers.models import Nugget, NuggetAssignment, NuggetBank, SupportJudgment
from tests.answers.judging_fixtures import answer_track


@pytest.fixture
def track(assessor):
    return answer_track(assessor)


def _page(client, name="judge_nuggets", **query):
    return client.get(reverse(f"answers:{name}", args=["rag", "301"]), query)


def _choose(client, page, value, field="assignment", token=None):
    form = page.context
    data = {field: value, "client_token": token or form["client_token"]}
    if field == "assignment":
        data.update(answer=form["step"].answer.pk, nugget=form["step"].nugget.pk)
    else:
        data.update(item=form["step"].item.pk)
    name = "judge_nuggets" if field == "assignment" else "judge_support"
    return client.post(reverse(f"answers:{name}", args=["rag", "301"]), data)


def test_the_assessor_assigns_every_nugget_of_every_answer_one_at_a_time(client, assessor, track):
    collection, bank, answers = track
    client.force_login(assessor)
    page = _page(client)
    html = page.content.decode()
    assert "Polio is caused by the poliovirus" in html and "0 of 6 assigned" in html
    assert "Polio is caused by a virus." in html and "[s2]" in html and "spread by the faecal-oral route" in html
    assert "secret-run" not in html  # blind to systems
    values = ["support", "partial_support", "not_support", "not_support", "not_support", "partial_support"]
    for value in values:
        response = _choose(client, page, value)
        assert response.status_code == 302
        page = _page(client)
    assert "every nugget of every answer of this topic is assigned" in page.content.decode()
    records = NuggetAssignment.objects.order_by("id")
    assert [r.assignment for r in records] == values
    assert all(r.bank == bank and r.assessor == assessor.username and r.source == "web" for r in records)
    assert [(r.answer_id, r.nugget.order) for r in records][:3] == [(answers[0].pk, 0), (answers[0].pk, 1),
                                                                    (answers[0].pk, 2)]


def test_a_choice_sent_twice_is_recorded_once_and_a_revision_names_what_it_revises(client, assessor, track):
    client.force_login(assessor)
    page = _page(client)
    first = _choose(client, page, "support", token="tok-1")
    again = _choose(client, page, "support", token="tok-1")
    assert first.status_code == again.status_code == 302 and NuggetAssignment.objects.count() == 1
    original = NuggetAssignment.objects.get()
    shown = _page(client, answer=original.answer_id, nugget=original.nugget_id)
    assert "Your current choice: <strong>Support</strong>" in shown.content.decode()
    _choose(client, shown, "not_support")
    revision = NuggetAssignment.objects.latest("id")
    assert revision.previous == original and revision.assignment == "not_support"


def test_a_choice_against_a_bank_that_changed_is_refused_and_the_current_bank_is_shown(client, assessor, track):
    collection, bank, answers = track
    client.force_login(assessor)
    page = _page(client)
    newer = NuggetBank.objects.create(collection=collection, topic=bank.topic, version=2, query=bank.query)
    Nugget.objects.create(bank=newer, order=0, text="Polio paralyses some of those infected", importance="vital")
    refused = _choose(client, page, "support")
    assert refused.status_code == 400 and not NuggetAssignment.objects.exists()
    html = refused.content.decode()
    assert "the topic&#x27;s nugget bank changed" in html and "Polio paralyses some" in html


def test_a_forged_answer_or_value_is_refused_with_one_line(client, assessor, track):
    client.force_login(assessor)
    page = _page(client)
    url = reverse("answers:judge_nuggets", args=["rag", "301"])
    nugget = page.context["step"].nugget.pk
    assert client.post(url, {"answer": 999999, "nugget": nugget, "assignment": "support"}).status_code == 400
    assert client.post(url, {"answer": "x", "nugget": nugget, "assignment": "support"}).status_code == 400
    bad = client.post(url, {"answer": page.context["step"].answer.pk, "nugget": nugget, "assignment": "maybe"})
    assert bad.status_code == 400 and "is not support, partial_support or not_support" in bad.content.decode()
    assert not NuggetAssignment.objects.exists()


def test_the_assessor_judges_each_citation_against_its_segment(client, assessor, track):
    client.force_login(assessor)
    page = _page(client, "judge_support")
    html = page.content.decode()
    assert "0 of 4 citations judged" in html and "Polio is caused by a virus." in html
    assert "spread by the faecal-oral route" in html and "secret-run" not in html
    for value in ("full_support", "partial_support", "no_support", "no_support"):
        assert _choose(client, page, value, field="support").status_code == 302
        page = _page(client, "judge_support")
    assert "every citation of this topic is judged" in page.content.decode()
    assert [(j.docno, j.support) for j in SupportJudgment.objects.order_by("id")] == [
        ("s2", "full_support"), ("s1", "partial_support"), ("s3", "no_support"), ("s3", "no_support")]


def test_the_task_list_shows_both_tasks_with_their_progress(client, assessor, track):
    client.force_login(assessor)
    html = client.get(reverse("answers:judge_tasks", args=["rag"])).content.decode()
    assert "0 of 6" in html and "0 of 4" in html and "Citation support" in html


def test_nobody_else_reaches_the_assessors_pages(client, assessor, organizer, track):
    other = User.objects.create_user("ben", password="pw")
    for user in (other, organizer):
        client.force_login(user)
        for name in ("judge_nuggets", "judge_support"):
            assert _page(client, name).status_code == 404
            assert client.post(reverse(f"answers:{name}", args=["rag", "301"]),
                               {"assignment": "support"}).status_code == 404
        assert client.get(reverse("answers:judge_tasks", args=["rag"])).status_code == (200 if user == organizer else 404)
    client.logout()
    assert _page(client).status_code == 302  # to the login page
    assert not NuggetAssignment.objects.exists()


def test_a_busy_database_keeps_the_choice_marked_for_a_retry_and_records_nothing(client, assessor, track,
                                                                                   monkeypatch):
    from django.db import OperationalError

    from answers import judging_views

    def locked(**kwargs):
        raise OperationalError("database is locked")

    client.force_login(assessor)
    page = _page(client)
    monkeypatch.setattr(judging_views, "nugget_assignment_record", locked)
    busy = _choose(client, page, "partial_support")
    html = busy.content.decode()
    assert busy.status_code == 503 and "was NOT saved: the database is busy" in html
    assert 'value="partial_support" data-key="2" class=" pending"' in html  # the same pair, the choice marked
    assert busy.context["step"].nugget.pk == page.context["step"].nugget.pk
    monkeypatch.undo()
    assert _choose(client, busy, "partial_support").status_code == 302
    assert NuggetAssignment.objects.get().assignment == "partial_support"

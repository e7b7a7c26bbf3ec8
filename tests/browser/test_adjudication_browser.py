"""Two assessors disagree in the browser; the organizer adjudicates with both assessors' evidence in view."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from judging.assignments import assignments_create
from judging.models import Judgment
from judging.qrels import qrels
from pooling.models import Pool, PoolEntry
from tests import factories
from tests.browser.conftest import log_in, select_text

pytestmark = pytest.mark.browser

SCALE = [{"grade": 0, "label": "Not relevant", "description": "Off topic."},
         {"grade": 1, "label": "Relevant", "description": "Helps."},
         {"grade": 2, "label": "Highly relevant", "description": "Answers it."}]


@pytest.fixture
def doubly_assigned(transactional_db):
    collection = factories.collection_with_topics(grades=SCALE)
    factories.add_documents(collection, ["d1", "d2"])
    from workbench.models import Document

    Document.objects.filter(docno="d1").update(text="The Hubble telescope found dark energy in 1998.")
    pool = Pool.objects.create(collection=collection, name="main")
    topic = collection.topics.get(qid="303")
    for order, docno in enumerate(["d1", "d2"], start=1):
        PoolEntry.objects.create(pool=pool, topic=topic, docno=docno, judging_order=order, pool_rank=order)
    ada = User.objects.create_user("ada", password="judge-me")
    bob = User.objects.create_user("bob", password="judge-me-too")
    assignments_create(pool=pool, assessors=[ada, bob], overlap=2)
    olga = User.objects.create_user("olga", password="organise-it")
    olga.groups.add(Group.objects.get_or_create(name="organizers")[0])
    return collection


def _judge_first(page, live_server, user, password, key, comment, passage=None):
    log_in(page, live_server, user, password)
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    expect(page.locator("main")).to_contain_text("found dark energy")
    if passage:
        select_text(page, passage)
        page.keyboard.press("p")
        expect(page.locator("mark.passage")).to_have_text(passage)
    page.get_by_text("Comment or supporting passage (optional)").click()
    page.get_by_label("Comment").fill(comment)
    page.get_by_role("button", name=re.compile(f"^{key} ")).click()
    expect(page.locator("main")).to_contain_text("Text of d2")
    page.get_by_role("button", name="Log out").click()


def test_the_organizer_adjudicates_with_both_assessors_evidence(page, live_server, doubly_assigned, screenshot_dir):
    _judge_first(page, live_server, "ada", "judge-me", "2", "states the discovery", passage="found dark energy")
    _judge_first(page, live_server, "bob", "judge-me-too", "0", "about the telescope, not its results")
    assert sorted(Judgment.objects.filter(docno="d1").values_list("grade", flat=True)) == [0, 2]

    log_in(page, live_server, "olga", "organise-it")
    page.goto(f"{live_server.url}/judge/organize/{doubly_assigned.slug}/agreement/")
    expect(page.get_by_role("heading", name="Disagreements (1)")).to_be_visible()
    page.get_by_text("Evidence").click()
    evidence = page.locator("details.evidence")
    expect(evidence).to_contain_text("Topic 303: Hubble Telescope Achievements")
    expect(evidence).to_contain_text("The Hubble telescope found dark energy in 1998.")
    expect(evidence).to_contain_text("ada: Highly relevant")
    expect(evidence).to_contain_text("comment: “states the discovery”")
    expect(evidence).to_contain_text("bob: Not relevant")
    expect(evidence).to_contain_text("comment: “about the telescope, not its results”")
    expect(evidence.locator("mark")).to_have_text("found dark energy")  # ada's passage, from its offsets
    page.screenshot(path=str(screenshot_dir / "adjudication.png"), full_page=True)

    page.get_by_placeholder("Reason (optional)").fill("the discovery is an achievement")
    expect(page.locator("tbody").last).to_contain_text("ada: 2 Highly relevant")  # grades with their labels
    page.get_by_role("button", name="1 Relevant", exact=True).click()
    expect(page.locator("main")).to_contain_text(
        "Topic 303, d1: adjudicated as 1 Relevant (reason: “the discovery is an achievement”)")
    expect(page.locator("tbody").last.locator("td").nth(3)).to_have_text("1 Relevant")
    page.screenshot(path=str(screenshot_dir / "adjudication-done.png"), full_page=True)
    final = Judgment.objects.get(source=Judgment.Source.ADJUDICATION)
    assert (final.docno, final.grade, final.comment) == ("d1", 1, "the discovery is an achievement")
    assert qrels(doubly_assigned).set_index("docno")["rel"]["d1"] == 1

"""An assessor logs in and judges with the keyboard in a real browser."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from judging.assignments import assignments_create
from judging.models import AssignmentItem, Judgment
from pooling.models import Pool, PoolEntry
from tests import factories
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def assigned(transactional_db):
    collection = factories.collection_with_topics(grades=[{"grade": 0, "label": "Not relevant"},
                                                          {"grade": 1, "label": "Relevant"},
                                                          {"grade": 2, "label": "Highly relevant"}])
    factories.add_documents(collection, ["d1", "d2", "d3"])
    pool = Pool.objects.create(collection=collection, name="main")
    topic = collection.topics.get(qid="303")
    for order, docno in enumerate(["d2", "d3", "d1"], start=1):
        PoolEntry.objects.create(pool=pool, topic=topic, docno=docno, judging_order=order, pool_rank=order)
    user = User.objects.create_user("ada", password="judge-me")
    assignments_create(pool=pool, assessors=[user])
    return user


def progress_now(page) -> str:
    return page.get_by_role("progressbar").get_attribute("aria-valuenow")


def test_assessor_logs_in_judges_with_the_keyboard_and_revises(page, live_server, assigned, screenshot_dir):
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    assert page.get_by_text("Hubble Telescope Achievements").first.is_visible()
    assert "Text of d2" in page.content()
    assert progress_now(page) == "0"
    page.screenshot(path=str(screenshot_dir / "judging-page.png"), full_page=True)

    page.keyboard.press("2")  # Highly relevant, then the next document
    page.wait_for_url(re.compile(r"/judge/item/\d+/$"))
    expect(page.get_by_role("progressbar")).to_have_attribute("aria-valuenow", "1")
    assert "Text of d3" in page.content()

    page.keyboard.press("0")
    expect(page.get_by_role("progressbar")).to_have_attribute("aria-valuenow", "2")
    assert "Text of d1" in page.content()

    page.keyboard.press("ArrowLeft")  # back to d3 to revise it
    expect(page.locator("main")).to_contain_text("Text of d3")
    assert "Your current judgment: Not relevant" in page.inner_text("body")
    page.keyboard.press("1")
    expect(page.locator("main")).to_contain_text("Text of d1")

    latest = {i.docno: i.latest.grade for i in AssignmentItem.objects.select_related("latest") if i.latest}
    assert latest == {"d2": 2, "d3": 1}
    revision = Judgment.objects.get(docno="d3", previous__isnull=False)
    assert (revision.previous.grade, revision.grade) == (0, 1)
    assert all(j.time_spent_ms is not None for j in Judgment.objects.all())


def test_question_mark_shows_the_shortcuts(page, live_server, assigned):
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    assert not dialog.is_visible()
    page.keyboard.press("?")
    assert dialog.is_visible()
    assert "Cannot judge" in dialog.inner_text()
    page.keyboard.press("Escape")
    assert not dialog.is_visible()


def test_typing_a_comment_does_not_judge(page, live_server, assigned):
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.get_by_text("Comment or supporting passage (optional)").click()
    page.get_by_label("Comment").fill("mentions 2 telescopes")
    assert Judgment.objects.count() == 0
    page.get_by_role("button", name=re.compile("Relevant$")).first.click()
    expect(page.get_by_role("progressbar")).to_have_attribute("aria-valuenow", "1")
    assert Judgment.objects.get().comment == "mentions 2 telescopes"

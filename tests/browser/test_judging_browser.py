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
from tests.browser.conftest import log_in, select_text

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
    page.wait_for_load_state("load")  # a full page: its keys work once its script has run
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


@pytest.mark.parametrize("failure", ["server", "network"])
def test_a_judgment_that_could_not_be_saved_says_so_and_keeps_the_choice(page, live_server, assigned,
                                                                         screenshot_dir, failure):
    log_in(page, live_server, "ada", "judge-me")

    def refuse(route):
        if route.request.method != "POST":
            return route.continue_()
        return route.fulfill(status=503, body="Service Unavailable", content_type="text/plain")

    # The server's refusal is routed before the judging page loads (its GETs go through), so the interception
    # is in place long before the key is pressed: routed after the page had loaded, one CI run's post slipped
    # past it and was stored. The network failure is the browser going offline (a fetch that never reaches
    # the server), which unlike an intercepted abort cannot race with the interception being set up.
    if failure == "server":
        page.route(re.compile(r"/judge/item/\d+/$"), refuse)
    page.goto(f"{live_server.url}/judge/next/")
    first_url = page.url
    expect(page.locator("main")).to_contain_text("Text of d2")
    if failure == "network":
        page.context.set_offline(True)
    page.keyboard.press("2")
    alert = page.locator("#save-error")
    expect(alert).to_contain_text("Not saved:")
    expect(alert).to_contain_text("Your choice (Highly relevant) is kept")
    assert page.url == first_url and "Text of d2" in page.content()  # no silent reload: the same document
    assert Judgment.objects.count() == 0
    if failure == "server":
        page.screenshot(path=str(screenshot_dir / "judging-not-saved.png"), full_page=True)
    if failure == "server":
        page.unroute(re.compile(r"/judge/item/\d+/$"))
    else:
        page.context.set_offline(False)
    page.get_by_role("button", name="Retry").click()
    expect(page.locator("main")).to_contain_text("Text of d3")
    assert list(Judgment.objects.values_list("docno", "grade")) == [("d2", 2)]


def test_dialogs_take_the_keys_guidelines_one_key_away_and_highlighting_toggles(page, live_server, assigned):
    collection = Pool.objects.get().collection
    collection.guidelines = "## Our rules\n\nA page **about** the topic is relevant."
    collection.scale = [{"grade": 0, "label": "Not relevant", "description": "Off topic."},
                        {"grade": 1, "label": "Relevant", "description": "Helps."},
                        {"grade": 2, "label": "Highly relevant", "description": "Answers it."}]
    collection.save()
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    assert "Answers it." in page.inner_text("aside")  # each grade's definition, always in view
    first = page.url
    page.keyboard.press("?")
    expect(page.locator("#shortcuts")).to_be_visible()
    assert page.evaluate("document.activeElement.id") == "shortcuts"
    page.keyboard.press("2")  # inert under the dialog
    page.wait_for_timeout(300)
    assert page.url == first and Judgment.objects.count() == 0
    page.keyboard.press("Escape")
    expect(page.locator("#shortcuts")).to_be_hidden()
    page.keyboard.press("g")
    expect(page.locator("#guidelines")).to_contain_text("A page about the topic is relevant.")
    page.keyboard.press("1")
    page.wait_for_timeout(300)
    assert page.url == first and Judgment.objects.count() == 0
    page.keyboard.press("g")
    expect(page.locator("#guidelines")).to_be_hidden()
    page.keyboard.press("h")
    assert "plain" in page.evaluate("document.body.className")
    page.keyboard.press("2")
    expect(page.locator("main")).to_contain_text("Text of d3")
    assert list(Judgment.objects.values_list("docno", "grade")) == [("d2", 2)]


def test_the_judging_page_stacks_at_390_px(browser, live_server, assigned, screenshot_dir):
    from workbench.models import Document

    # a title and text with no place to break (a code identifier, a URL) must wrap, not widen the page
    Document.objects.filter(docno="d2").update(title="pdb.Pdb.handle_command_def(line)_" * 3,
                                               text="see https://example.org/" + "a-very-long-path/" * 12)
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390  # nothing cut off at the side
    topic = page.locator("aside.topic").bounding_box()
    document = page.locator("section.doc").bounding_box()
    assert document["y"] >= topic["y"] + topic["height"] - 1  # the document under the topic, full width
    for button in page.locator(".grades button").all():
        box = button.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390
    page.screenshot(path=str(screenshot_dir / "judging-390px.png"), full_page=True)
    context.close()


@pytest.fixture
def two_topics(transactional_db):
    collection = factories.collection_with_topics(grades=[{"grade": 0, "label": "Not relevant"},
                                                          {"grade": 1, "label": "Relevant"}])
    factories.add_documents(collection, ["d1", "d2", "d3", "d4"])
    collection.topics.filter(qid="302").update(narrative="Only documents about vaccines count.")
    pool = Pool.objects.create(collection=collection, name="main")
    for qid, docs in (("301", ["d1", "d2"]), ("302", ["d3", "d4"])):
        topic = collection.topics.get(qid=qid)
        for order, docno in enumerate(docs, start=1):
            PoolEntry.objects.create(pool=pool, topic=topic, docno=docno, judging_order=order, pool_rank=order)
    user = User.objects.create_user("ada", password="judge-me")
    assignments_create(pool=pool, assessors=[user])
    return user


def test_topic_boundary_skip_my_judgments_and_the_end_of_the_queue(page, live_server, two_topics, screenshot_dir):
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    expect(page.locator("main")).to_contain_text("Text of d1")
    page.keyboard.press("s")  # skip: d1 goes to the end of topic 301
    expect(page.locator("main")).to_contain_text("Text of d2")
    page.keyboard.press("1")
    expect(page.locator("main")).to_contain_text("Text of d1")
    page.keyboard.press("0")
    # the topic is finished: a boundary, with the next topic's narrative first
    expect(page.locator("main")).to_contain_text("Topic 301 is finished")
    expect(page.locator("main")).to_contain_text("Only documents about vaccines count.")
    page.screenshot(path=str(screenshot_dir / "judging-topic-boundary.png"), full_page=True)
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_contain_text("Text of d3")
    # revise topic 301 from "my judgments"
    page.goto(f"{live_server.url}/judge/")
    page.get_by_role("link", name="My judgments").first.click()
    expect(page.locator("main")).to_contain_text("2 of 2 judged")
    page.get_by_role("link", name="d2").click()
    page.wait_for_load_state("load")
    page.keyboard.press("0")
    expect(page.locator("main")).to_contain_text("Topic 301 is finished")  # stored, then on to topic 302
    assert list(Judgment.objects.filter(docno="d2").order_by("id").values_list("grade", flat=True)) == [1, 0]
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    page.keyboard.press("1")
    expect(page.locator("main")).to_contain_text("Text of d4")
    page.keyboard.press("1")
    expect(page.locator("main")).to_contain_text("All your documents are judged")
    bar = page.get_by_role("progressbar").first.locator("span").bounding_box()
    assert bar and bar["width"] > 50  # the end-of-queue page keeps its styles: the progress bars are drawn
    page.screenshot(path=str(screenshot_dir / "judging-end-of-queue.png"), full_page=True)


def test_a_passage_selected_is_marked_saved_as_offsets_and_shown_to_the_organizer(page, live_server, assigned):
    from workbench.models import Document

    Document.objects.filter(docno="d2").update(text="The Hubble telescope found dark energy in 1998.")
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    # select "found dark energy" with the mouse (a range in the page), then press p
    select_text(page, "found dark energy")
    page.keyboard.press("p")
    expect(page.locator("mark.passage")).to_have_text("found dark energy")
    page.keyboard.press("2")
    expect(page.locator("main")).to_contain_text("Text of d3")
    judgment = Judgment.objects.get(docno="d2")
    start = "The Hubble telescope ".__len__()
    assert judgment.passages == [[start, start + len("found dark energy")]]
    page.goto(f"{live_server.url}/judge/item/{AssignmentItem.objects.get(docno='d2').pk}/")
    expect(page.locator("mark.passage")).to_have_text("found dark energy")  # shown again when revisiting


def test_a_busy_database_answers_with_the_document_and_the_choice_kept(page, live_server, assigned, monkeypatch):
    """The server's own 503 (the database stayed locked): its page says so, and pressing again stores it."""
    from django.db import OperationalError

    import judging.views

    real = judging.views.judgment_record
    calls = []

    def locked_once(**kwargs):
        calls.append(kwargs["grade"])
        if len(calls) == 1:
            raise OperationalError("database is locked")
        return real(**kwargs)

    monkeypatch.setattr(judging.views, "judgment_record", locked_once)  # the live server runs in this process
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.keyboard.press("1")
    expect(page.locator("main")).to_contain_text("Your judgment was NOT saved: the database is busy")
    assert "Text of d2" in page.content() and Judgment.objects.count() == 0
    page.keyboard.press("1")
    expect(page.locator("main")).to_contain_text("Text of d3")
    assert calls == [1, 1]
    assert list(Judgment.objects.values_list("docno", "grade")) == [("d2", 1)]

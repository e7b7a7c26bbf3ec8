"""Assessors on phones (390 x 844, touch) and dialogs at every size: the grade bar is on the first screen and
stays there, a tap records the grade and brings the next document without a jump to the page's top, touch
hints replace keyboard hints, dialogs fit the screen, the queue's Continue is in view."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from judging.assignments import assignments_create
from judging.models import Judgment
from pooling.models import Pool, PoolEntry
from tests import factories
from tests.browser.conftest import log_in
from workbench.models import Document

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True, "device_scale_factor": 2}
LONG_TEXT = "\n\n".join(f"Paragraph {n}. The Hubble Space Telescope observed distant galaxies, measured the "
                        "expansion of the universe and found evidence of dark energy. " * 3 for n in range(60))


@pytest.fixture
def long_documents(transactional_db):
    collection = factories.collection_with_topics(grades=[{"grade": 0, "label": "Not relevant"},
                                                          {"grade": 1, "label": "Relevant"},
                                                          {"grade": 2, "label": "Highly relevant"}])
    collection.guidelines = "## Rules\n\n" + "\n\n".join(f"Rule {n}: a page about the topic counts." for n in range(40))
    collection.save()
    factories.add_documents(collection, ["d1", "d2", "d3"])
    Document.objects.filter(collection=collection).update(text=LONG_TEXT)
    pool = Pool.objects.create(collection=collection, name="main")
    topic = collection.topics.get(qid="303")
    topic.narrative = "A relevant document names an achievement of the telescope. " * 4
    topic.save()
    for order, docno in enumerate(["d2", "d3", "d1"], start=1):
        PoolEntry.objects.create(pool=pool, topic=topic, docno=docno, judging_order=order, pool_rank=order)
    user = User.objects.create_user("ada", password="judge-me")
    assignments_create(pool=pool, assessors=[user])
    return user


def _inside(box, width: int, height: int) -> bool:
    return box is not None and box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= width \
        and box["y"] + box["height"] <= height


def _grade_buttons(page):
    return page.locator(".grades button[name=grade]").all()


def test_on_a_phone_the_grade_bar_is_on_the_first_screen_and_a_tap_brings_the_next_document_in_place(
        browser, live_server, long_documents, screenshot_dir):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    page.set_default_timeout(10_000)
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    expect(page.locator("#doc-text")).to_contain_text("Paragraph 0.")
    assert page.evaluate("document.documentElement.scrollHeight") > 3 * 844, "a long document"
    buttons = _grade_buttons(page)
    assert len(buttons) == 3
    for button in buttons:  # every grade button fully in the first screen, without scrolling
        assert _inside(button.bounding_box(), 390, 844), button.inner_text()
    assert page.locator("#doc-text").bounding_box()["y"] < 844 - 150, "the document starts on the first screen"
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # touch hints, not keyboard hints
    expect(page.locator(".touch-hint")).to_be_visible()
    expect(page.locator("aside .kbd-hint").first).to_be_hidden()
    expect(page.locator(".grades kbd").first).to_be_hidden()
    page.screenshot(path=str(screenshot_dir / "judging-phone-390.png"))

    # read down into the document: the grade bar is still there
    page.evaluate("window.scrollTo(0, 2500)")
    page.wait_for_timeout(100)
    for button in _grade_buttons(page):
        assert _inside(button.bounding_box(), 390, 844)
    first_url = page.url
    page.get_by_role("button", name="Highly relevant").tap()
    expect(page.locator("#doc-label")).to_contain_text("Document d3")
    assert page.url != first_url
    assert list(Judgment.objects.values_list("docno", "grade")) == [("d2", 2)]
    # the next document starts at the top of the screen: no jump to the page's top (the topic), no scroll needed
    scroll_y = page.evaluate("window.scrollY")
    doc_top = page.locator("section.doc").bounding_box()["y"]
    assert scroll_y > 0, "the window was not sent back to the page's top"
    assert -1 <= doc_top <= 40, f"the document starts at the top of the screen (at {doc_top})"
    for button in _grade_buttons(page):
        assert _inside(button.bounding_box(), 390, 844)
    page.screenshot(path=str(screenshot_dir / "judging-phone-390-next.png"))

    # the last words of a long document are not hidden under the grade bar
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.wait_for_timeout(100)
    links = page.locator(".nav-links").bounding_box()
    bar = page.locator(".judge-bar").bounding_box()
    assert links["y"] + links["height"] <= bar["y"] + 1, "the page ends above the grade bar"

    page.get_by_role("button", name="Not relevant").tap()
    expect(page.locator("#doc-label")).to_contain_text("Document d1")
    assert list(Judgment.objects.order_by("id").values_list("docno", "grade")) == [("d2", 2), ("d3", 0)]
    context.close()


def test_on_a_phone_the_guidelines_open_from_a_button_fit_the_screen_and_close_by_touch(browser, live_server,
                                                                                         long_documents,
                                                                                         screenshot_dir):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    page.locator("aside.topic").get_by_role("button", name="Guidelines").tap()
    dialog = page.get_by_role("dialog", name="Guidelines")
    expect(dialog).to_be_visible()
    assert _inside(dialog.bounding_box(), 390, 844)
    assert page.evaluate("(() => { const d = document.getElementById('guidelines'); "
                         "return d.scrollHeight > d.clientHeight; })()"), "long guidelines scroll inside the dialog"
    dialog.get_by_role("button", name="Close").tap()
    expect(dialog).to_be_hidden()
    assert Judgment.objects.count() == 0
    context.close()


@pytest.mark.parametrize(("width", "height", "name"), [(1280, 900, "dialog-1280.png"), (390, 844, "dialog-390.png"),
                                                       (1024, 600, None)])
def test_the_shortcuts_dialog_fits_the_screen(browser, live_server, long_documents, screenshot_dir, width, height,
                                              name):
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    box = dialog.bounding_box()
    assert _inside(box, width, height), box
    last_row = dialog.locator("tr").last
    last_row.scroll_into_view_if_needed()
    row = last_row.bounding_box()
    assert _inside(row, width, height), "every shortcut can be read"
    assert box["y"] <= row["y"] and row["y"] + row["height"] <= box["y"] + box["height"] + 1, \
        "the list stays inside its box (it scrolls there), not spilling over the page"
    if name:
        page.screenshot(path=str(screenshot_dir / name))
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    context.close()


def test_on_a_desktop_the_grade_bar_and_the_keyboard_hints_stay(page, live_server, long_documents, screenshot_dir):
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    expect(page.locator("aside .kbd-hint").first).to_be_visible()
    expect(page.locator(".touch-hint")).to_be_hidden()
    for button in _grade_buttons(page):
        assert _inside(button.bounding_box(), 1280, 900)
    page.screenshot(path=str(screenshot_dir / "judging-1280.png"))
    page.evaluate("window.scrollTo(0, 3000)")
    page.keyboard.press("1")
    expect(page.locator("#doc-label")).to_contain_text("Document d3")
    for button in _grade_buttons(page):
        assert _inside(button.bounding_box(), 1280, 900), "the sticky grade bar is in view"
    assert page.locator("#doc-label").bounding_box()["y"] >= 0, "the next document's start is in view"


def test_the_queue_shows_continue_at_390_px(browser, live_server, long_documents, screenshot_dir):
    context = browser.new_context(**PHONE)
    page = context.new_page()
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/")
    link = page.get_by_role("link", name="Continue")
    expect(link).to_be_visible()
    assert _inside(link.bounding_box(), 390, 844)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.screenshot(path=str(screenshot_dir / "queue-390.png"))
    link.tap()
    expect(page.locator("#doc-label")).to_contain_text("Document d2")
    context.close()


def test_a_document_without_text_on_a_phone_offers_its_link_and_no_grade(browser, live_server, long_documents,
                                                                          screenshot_dir):
    Document.objects.filter(docno="d2").update(title="", text="")
    collection = Pool.objects.get().collection
    collection.document_url = "https://example.org/doc/{docno}"
    collection.save()
    context = browser.new_context(**PHONE)
    page = context.new_page()
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    link = page.get_by_role("link", name="Open document d2 in a new tab")
    expect(link).to_be_visible()
    assert link.get_attribute("target") == "_blank" and "noopener" in link.get_attribute("rel")
    for button in _grade_buttons(page):
        expect(button).to_be_disabled()
    page.screenshot(path=str(screenshot_dir / "judging-no-text-390.png"))
    page.get_by_role("button", name="Cannot judge").tap()
    expect(page.locator("#doc-label")).to_contain_text("Document d3")
    judgment = Judgment.objects.get()
    assert (judgment.docno, judgment.cannot_judge) == ("d2", True)
    context.close()


def test_judging_by_link_unlocks_the_grades_once_the_documents_page_is_opened(browser, live_server, long_documents):
    Document.objects.filter(docno="d2").delete()
    collection = Pool.objects.get().collection
    collection.document_url = "https://example.org/doc/{docno}"
    collection.judge_by_link = True
    collection.save()
    context = browser.new_context(**PHONE)
    context.route("https://example.org/**", lambda route: route.fulfill(body="<p>Hubble saw far.</p>",
                                                                        content_type="text/html"))
    page = context.new_page()
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    relevant = page.get_by_role("button", name="Relevant", exact=True)
    expect(relevant).to_be_disabled()
    with context.expect_page() as opened:
        page.get_by_role("link", name="Open document d2 in a new tab").tap()
    assert opened.value.url == "https://example.org/doc/d2"
    expect(relevant).to_be_enabled()
    relevant.tap()
    expect(page.locator("#doc-label")).to_contain_text("Document d3")
    assert list(Judgment.objects.values_list("docno", "grade")) == [("d2", 1)]
    context.close()


def test_the_organizer_sees_the_documents_without_text_before_assigning(page, live_server, long_documents,
                                                                        screenshot_dir):
    from django.contrib.auth.models import Group

    Document.objects.filter(docno__in=["d1", "d3"]).delete()
    organizer = User.objects.create_user("olga", password="organize-me")
    organizer.groups.add(Group.objects.get_or_create(name="organizers")[0])
    log_in(page, live_server, "olga", "organize-me")
    for url, name in ((f"/console/{Pool.objects.get().collection.slug}/", "console-without-text-1280.png"),
                      (f"/judge/organize/{Pool.objects.get().collection.slug}/assign/", "assign-without-text-1280.png")):
        page.goto(f"{live_server.url}{url}")
        expect(page.locator("main")).to_contain_text("Pool main: 2 of 3 pooled documents have no text (e.g. d1, d3).")
        page.screenshot(path=str(screenshot_dir / name), full_page=True)

"""A participant's team page in Chromium, on a phone (390 px) and a desktop (1280 px): the topics downloaded,
the guidelines read, the dates; a form refused for its description keeps the chosen file; at the limit the
form is replaced by the reason and a replacement form. Nothing is wider than the screen.

Screenshots: ``test-artifacts/team-390.png`` and ``test-artifacts/team-1280.png`` (and the refused form,
``team-refused-390.png``)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone
from playwright.sync_api import expect

from participation.models import Submission, Team, Track
from tests import factories
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser

GUIDELINES = """A document is **relevant** when it answers the topic's question.

| Grade | Meaning |
|---|---|
| 0 | Not relevant |
| 1 | Relevant: the document names an organization and its crimes |
"""

# the elements of the page that reach past the right edge of the screen, outside any scrolling box
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth, wide = [];
  for (const el of document.querySelectorAll('body *')) {
    let scrolled = false;
    for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowX === 'auto' || s.overflowX === 'scroll' || s.overflowX === 'hidden') { scrolled = true; break; }
    }
    const r = el.getBoundingClientRect();
    if (!scrolled && r.width > 0 && r.right > width + 1) wide.push(el.tagName + '.' + el.className + ' ' + Math.round(r.right));
  }
  return {scrollWidth: document.documentElement.scrollWidth, width, wide};
}"""


@pytest.fixture
def portal(transactional_db, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    collection = factories.collection_with_topics()
    collection.guidelines = GUIDELINES
    collection.save()
    factories.add_documents(collection, [f"d{i}" for i in range(1, 10)])
    track = Track.objects.create(collection=collection, open=True, opens_at=timezone.now() - timedelta(days=1),
                                 closes_at=timezone.now() + timedelta(days=3, minutes=5), max_runs_per_team=2,
                                 pooled_runs_per_team=1, depth=3, require_description=True)
    user = User.objects.create_user("rosa", password="rosa-submits-7")
    user.groups.add(Group.objects.get_or_create(name="participants")[0])
    Team.objects.create(track=track, name="red", display_name="Red Lab").members.add(user)
    for tag in ("red-a", "red-b"):
        (tmp_path / f"{tag}.run").write_text(factories.run_lines(tag, {"301": ["d1", "d2", "d3"],
                                                                       "302": ["d4", "d5", "d6"],
                                                                       "303": ["d7", "d8", "d9"]}))
    return tmp_path


def _fits(page) -> None:
    found = page.evaluate(OVERFLOW)
    assert found["scrollWidth"] <= found["width"] and not found["wide"], found


def _submit(page, path, description: str) -> None:
    page.get_by_label(re.compile("^File")).set_input_files(str(path))
    page.get_by_label(re.compile("^Description")).fill(description)
    page.get_by_role("button", name="Submit").click()
    page.wait_for_load_state()


def test_a_participant_on_a_phone_gets_the_topics_the_guidelines_and_is_stopped_at_the_limit(
        browser, live_server, portal, screenshot_dir):
    context = browser.new_context(viewport={"width": 390, "height": 844}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(15_000)
    log_in(page, live_server, "rosa", "rosa-submits-7")
    page.goto(f"{live_server.url}/participate/")  # My tracks: a card per track, nothing to scroll sideways to
    box = page.get_by_role("cell", name="Results: not released yet").bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= 390, box
    page.goto(f"{live_server.url}/participate/robust/")
    main = page.locator("main")
    expect(main).to_contain_text("0 of 2 runs submitted")
    expect(main).to_contain_text("UTC (in 3 days)")
    expect(main).to_contain_text("UTC (1 day ago)")
    _fits(page)

    with page.expect_download() as download:
        page.get_by_role("link", name=re.compile("^TREC topics")).click()
    text = open(download.value.path(), encoding="utf-8").read()
    assert download.value.suggested_filename == "robust-topics.txt"
    assert "<num> Number: 302\n<title> Poliomyelitis and Post-Polio" in text and text.count("<top>") == 3

    page.get_by_text("Guidelines: how the runs will be judged").click()
    expect(page.locator("#guidelines strong")).to_have_text("relevant")
    expect(page.locator("#guidelines table")).to_contain_text("names an organization and its crimes")

    # the browser itself stops a form without its description: nothing is sent
    page.get_by_label(re.compile("^File")).set_input_files(str(portal / "red-a.run"))
    page.get_by_role("button", name="Submit").click()
    assert page.locator("#id_description").evaluate("e => e.validity.valueMissing")
    assert not Submission.objects.exists()
    # blanks pass the browser but not the server: the form comes back with the file kept
    page.get_by_label(re.compile("^Description")).fill("   ")
    page.get_by_label(re.compile("^Priority")).fill("2")
    page.get_by_label(re.compile("^Run type")).select_option("manual")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_load_state()
    expect(page.get_by_role("alert")).to_contain_text("Please correct the fields marked below")
    expect(main).to_contain_text("Describe how the run was made (the track asks for it).")
    keep = page.get_by_label(re.compile("^Keep the file you chose: red-a.run \\(234"))
    expect(keep).to_be_checked()
    assert page.get_by_label(re.compile("^Priority")).input_value() == "2"
    assert page.get_by_label(re.compile("^Run type")).input_value() == "manual"
    _fits(page)
    page.screenshot(path=str(screenshot_dir / "team-refused-390.png"), full_page=True)
    page.get_by_label(re.compile("^Description")).fill("BM25 on titles, k1=0.9")
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url(re.compile(r"/participate/robust/submissions/\d+/$"))
    expect(page.locator("#receipt")).to_contain_text("Accepted as run red-a")
    assert Submission.objects.get().run_type == "manual"

    page.goto(f"{live_server.url}/participate/robust/")
    _submit(page, portal / "red-b.run", "BM25 with RM3")
    expect(page.locator("#receipt")).to_contain_text("Accepted as run red-b")

    page.goto(f"{live_server.url}/participate/robust/")
    expect(main).to_contain_text("2 of 2 runs submitted")
    expect(page.locator("#limit-reached")).to_contain_text(
        "Your team has submitted 2 of 2 runs, the track's limit: no new run can be sent.")
    assert page.get_by_role("button", name="Submit").count() == 0
    expect(page.get_by_role("button", name="Replace the run")).to_be_visible()
    page.get_by_text("Guidelines: how the runs will be judged").click()
    _fits(page)
    page.screenshot(path=str(screenshot_dir / "team-390.png"), full_page=True)

    # replacing a run stays possible: the new file of red-b
    page.get_by_label("Run to replace").select_option("red-b")
    page.get_by_label(re.compile("^File")).set_input_files(str(portal / "red-b.run"))
    page.get_by_label(re.compile("^Description")).fill("BM25 with RM3, 20 terms")
    page.get_by_role("button", name="Replace the run").click()
    page.wait_for_url(re.compile(r"/participate/robust/submissions/\d+/$"))
    expect(page.locator("#receipt")).to_contain_text("Accepted as run red-b")
    assert Submission.objects.filter(status="replaced").count() == 1

    desktop = browser.new_context(viewport={"width": 1280, "height": 900})
    wide = desktop.new_page()
    log_in(wide, live_server, "rosa", "rosa-submits-7")
    wide.goto(f"{live_server.url}/participate/robust/")
    wide.get_by_text("Guidelines: how the runs will be judged").click()
    expect(wide.locator("main")).to_contain_text("2 of 2 runs submitted")
    _fits(wide)
    wide.screenshot(path=str(screenshot_dir / "team-1280.png"), full_page=True)
    desktop.close()
    context.close()

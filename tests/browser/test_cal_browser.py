"""Continuous active learning in Chromium: an organizer builds a cal pool, an assessor judges, the next
document comes from the retrained model, and the pools page shows each topic's stopping state."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from judging.assignments import assignments_create
from pooling.models import Pool
from tests import factories
from tests.browser.conftest import log_in
from workbench.models import Document

pytestmark = pytest.mark.browser

# topic 301 is "International Organized Crime": c0 is the only document that shares a word with it; the
# m documents share 'mafia smuggling ring' with c0 and nothing with the topic
TEXTS = {"c0": "organized crime mafia smuggling ring",
         **{f"m{i}": f"mafia smuggling ring arrested harbour {i}" for i in range(3)},
         **{f"n{i}": f"weather bulletin rainfall forecast {i}" for i in range(30)}}


@pytest.fixture
def track(transactional_db):
    collection = factories.collection_with_topics()
    Document.objects.bulk_create(Document(collection=collection, docno=d, text=t) for d, t in TEXTS.items())
    organizer = User.objects.create_user("olga", password="organize")
    organizer.groups.add(Group.objects.get_or_create(name="organizers")[0])
    assessor = User.objects.create_user("ada", password="judge-me")
    assessor.groups.add(Group.objects.get_or_create(name="assessors")[0])
    return collection, assessor


def test_a_cal_pool_learns_from_the_assessor_and_shows_its_stopping_state(browser, live_server, track,
                                                                           screenshot_dir):
    collection, assessor = track
    organizer = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(organizer, live_server, "olga", "organize")
    organizer.goto(f"{live_server.url}/console/robust/pools/")
    organizer.get_by_label("Strategy").select_option("cal")
    organizer.get_by_label("Budget").first.fill("4")
    organizer.get_by_label("Active learning parameters").fill("stop=knee")
    organizer.get_by_role("button", name="Build the pool").click()
    expect(organizer.locator("main")).to_contain_text(re.compile(r"added 3 documents"))
    pool = Pool.objects.get(collection=collection)
    assert pool.strategy == "cal" and pool.params["cal"]["stop"] == "knee"
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])

    judge = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(judge, live_server, "ada", "judge-me")
    judge.goto(f"{live_server.url}/judge/next/")
    expect(judge.locator("main")).to_contain_text("organized crime mafia smuggling ring")
    judge.wait_for_load_state("load")
    judge.keyboard.press("1")  # relevant: the model retrains on it and offers what it learnt to look for
    expect(judge.locator("main")).to_contain_text("mafia smuggling ring arrested harbour")
    judge.screenshot(path=str(screenshot_dir / "cal-next-document.png"), full_page=True)

    organizer.goto(f"{live_server.url}/console/robust/pools/")
    row = organizer.locator("#stopping tr[data-qid='301']")
    expect(row).to_contain_text("judging: fewer than 150 documents reviewed")
    assert re.search(r"301\s+1\s+1\b", row.inner_text())  # one judged, one relevant found
    organizer.get_by_label("Reason for stopping topic 302").fill("off topic")
    organizer.get_by_role("button", name="Stop topic 302").click()
    expect(organizer.locator("#stopping tr[data-qid='302']")).to_contain_text("stopped (hand) at 0: off topic")
    organizer.locator("#stopping").screenshot(path=str(screenshot_dir / "cal-stopping-state.png"))


def test_the_pool_form_shows_only_the_chosen_strategys_parameters_and_names_a_bound_crossed(browser, live_server,
                                                                                          track):
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(page, live_server, "olga", "organize")
    page.goto(f"{live_server.url}/console/robust/pools/")
    target = page.get_by_label("Target recall")
    expect(page.get_by_label("Depth:", exact=True)).to_be_visible()  # Depth-k is the first strategy
    expect(target).to_be_hidden()
    expect(page.get_by_label("Per-topic depth")).to_be_visible()
    page.get_by_label("Strategy").select_option("cal")
    expect(target).to_be_visible()
    expect(page.get_by_label("Depth:", exact=True)).to_be_hidden()
    expect(page.get_by_label("Strata")).to_be_hidden()
    assert target.get_attribute("type") == "number" and target.get_attribute("max") == "1"
    page.get_by_label("Budget:", exact=True).fill("4")
    target.fill("1.5")  # the input's own bounds: the browser does not send it
    assert target.evaluate("e => e.validity.rangeOverflow")
    target.fill("1")  # within the input's max, but the bound is open: the server names it
    page.get_by_role("button", name="Preview the size per topic").click()
    expect(page.locator("#pool-form")).to_contain_text("target_recall must be between 0 and 1, not 1")
    expect(page.get_by_label("Depth:", exact=True)).to_be_hidden()  # the form comes back with cal chosen
    target.fill("0.7")
    page.get_by_role("button", name="Preview the size per topic").click()
    expect(page.locator("#preview-parameters")).to_contain_text("Target recall 0.7")

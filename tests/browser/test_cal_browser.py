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

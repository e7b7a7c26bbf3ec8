"""The Content Security Policy forbids inline and eval'd script: the keyboard judging and the inline SVG
figures still work under it in Chromium, and the browser reports no violation."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from playwright.sync_api import expect

from judging.assignments import assignments_create
from pooling.models import Pool, PoolEntry
from tests import factories
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser


def test_the_keyboard_judging_and_figures_work_under_the_policy_in_a_browser(page, live_server,
                                                                             transactional_db, tmp_path):
    collection = factories.collection_with_topics()
    factories.add_documents(collection, ["d1", "d2", "d3"])
    for path in factories.write_runs(tmp_path):
        call_command("import_runs", "robust", str(path), stdout=StringIO())
    qrels = tmp_path / "qrels"
    qrels.write_text("301 0 d1 1\n301 0 d3 0\n302 0 d5 1\n")
    call_command("import_qrels", "robust", str(qrels), stdout=StringIO())
    pool = Pool.objects.create(collection=collection, name="main")
    topic = collection.topics.get(qid="303")
    for order, docno in enumerate(["d2", "d3"], start=1):
        PoolEntry.objects.create(pool=pool, topic=topic, docno=docno, judging_order=order, pool_rank=order)
    user = User.objects.create_user("ada", password="judge-me")
    user.groups.add(Group.objects.get_or_create(name="organizers")[0])
    assignments_create(pool=pool, assessors=[user])

    violations = []
    page.on("console", lambda message: violations.append(message.text)
            if "Content Security Policy" in message.text else None)
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    assert "Text of d2" in page.content()
    page.keyboard.press("1")  # judge.js records the grade and swaps in the next document
    # (waits through locators: Playwright's wait_for_function evaluates with eval(), which the policy forbids)
    expect(page.locator("main")).to_contain_text("Text of d3")
    expect(page.get_by_role("progressbar")).to_have_attribute("aria-valuenow", "1")
    page.goto(f"{live_server.url}/collections/robust/runs/alpha/")
    assert page.locator("svg").count() >= 1 and page.locator("svg").first.bounding_box()["height"] > 50
    assert violations == []

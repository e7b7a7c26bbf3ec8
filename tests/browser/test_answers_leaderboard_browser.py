"""Results -> Answers in the browser (issue 42): an organizer follows the results navigation to the answer
leaderboard and reads the four nugget scores at 1280 px and on a 390 px phone (the table scrolls inside the
page, the run column stays in view); screenshots ``test-artifacts/answers-leaderboard-{1280,390}.png``."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from answers.imports import answers_import
from answers.imports_nuggets import assignments_import, nuggets_import
from tests.answers.generated import write_track
from tests.browser.conftest import log_in
from workbench.collections.services import collection_create
from workbench.models import Topic

pytestmark = pytest.mark.browser


@pytest.fixture
def scored(transactional_db, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    collection = collection_create(slug="rag", name="RAG sample")
    Topic.objects.bulk_create(Topic(collection=collection, qid=q, title=f"question {q}") for q in ("1", "2", "3", "4"))
    files = write_track(tmp_path / "files", runs=4, qids=["1", "2", "3", "4"], nuggets=6)
    answers_import(collection=collection, sources=files["answers"])
    nuggets_import(collection=collection, source=files["banks"])
    assignments_import(collection=collection, source=files["assignments"], assessor="nist")
    organizer = User.objects.create_user("olga", password="organize-it")
    organizer.groups.add(Group.objects.get_or_create(name="organizers")[0])
    return collection


def test_the_answer_leaderboard_shows_the_four_scores_at_1280_and_on_a_phone(browser, page, live_server, scored,
                                                                                screenshot_dir):
    log_in(page, live_server, "olga", "organize-it")
    page.goto(f"{live_server.url}/collections/rag/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Answers").click()
    table = page.get_by_role("table", name="Answer runs")
    for header in ("Strict vital", "Strict all", "Vital", "All", "Support precision", "Citation coverage"):
        expect(table.get_by_role("columnheader", name=header, exact=True)).to_be_visible()
    expect(table.locator("tbody tr")).to_have_count(4)
    expect(table).to_contain_text("run000")
    page.screenshot(path=str(screenshot_dir / "answers-leaderboard-1280.png"), full_page=True)

    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    small = phone.new_page()
    log_in(small, live_server, "olga", "organize-it")
    small.goto(f"{live_server.url}/answers/rag/leaderboard/?sort=vital_score")
    expect(small.get_by_role("table", name="Answer runs")).to_be_visible()
    assert small.evaluate("document.documentElement.scrollWidth") <= 390  # the table scrolls, not the page
    small.screenshot(path=str(screenshot_dir / "answers-leaderboard-390.png"), full_page=True)
    phone.close()

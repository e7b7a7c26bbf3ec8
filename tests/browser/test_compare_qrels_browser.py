"""Results -> Compare qrels in Chromium: an organizer who imported a judge's labels compares them with the
human qrels; the two rankings are drawn against each other, readable on a phone; screenshots for review."""

from __future__ import annotations

import random
from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from tests import factories
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def track(transactional_db, tmp_path):
    factories.collection_with_topics()
    rng = random.Random(5)
    docs = [f"d{i}" for i in range(15)]
    human, machine = [], []
    for qid in factories.TOPICS:
        for d in docs:
            grade = int(rng.random() < 0.3)
            human.append(f"{qid} 0 {d} {grade}\n")
            machine.append(f"{qid} 0 {d} {grade if rng.random() < 0.75 else 1 - grade}\n")
    for r in range(8):
        path = tmp_path / f"system-{r}.run"
        path.write_text(factories.run_lines(f"system-{r}", {q: rng.sample(docs, 10) for q in factories.TOPICS}))
        call_command("import_runs", "robust", str(path), stdout=StringIO())
    (tmp_path / "nist").write_text("".join(human))
    (tmp_path / "umbrela.qrels").write_text("".join(machine))
    call_command("import_qrels", "robust", str(tmp_path / "nist"), "--assessor", "nist", stdout=StringIO())
    call_command("import_machine_judgments", "robust", str(tmp_path / "umbrela.qrels"), "--judge", "umbrela",
                 stdout=StringIO())
    user = User.objects.create_user("olga", password="organize")
    user.groups.add(Group.objects.get_or_create(name="organizers")[0])


@pytest.mark.parametrize("width", [1280, 390])
def test_compare_qrels_draws_both_rankings(page, live_server, track, screenshot_dir, width):
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server, "olga", "organize")
    page.goto(f"{live_server.url}/collections/robust/leaderboard/")
    page.get_by_role("link", name="Compare qrels").click()
    page.select_option("#a", "human")
    page.select_option("#b", "machine")
    page.get_by_role("button", name="Compare").click()
    page.wait_for_load_state()
    chart = page.locator("svg.slope")
    assert chart.count() == 1 and chart.locator("line").count() == 8
    assert "κ binary" in page.inner_text("#label-agreement") and "Kendall" in page.inner_text("#ranking-agreement")
    box = chart.bounding_box()
    assert box["width"] <= width and box["width"] > 300
    label = chart.locator("text").nth(2).bounding_box()  # a run's name stays legible: at least 9 px high
    assert label["height"] >= 9
    assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
    page.screenshot(path=str(screenshot_dir / f"compare-qrels-{width}.png"), full_page=True)

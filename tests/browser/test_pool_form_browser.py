"""The pool form of a 150-run track in Chromium: a compact list of runs by team, filterable, with the
buttons at the top; its height at 1280 px and its width at 390 px measured; screenshots for review."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from tests import factories
from tests.browser.conftest import log_in
from workbench.models import Run

pytestmark = pytest.mark.browser

TEAMS = 40
RUNS = 150


@pytest.fixture
def big_track(transactional_db, tmp_path):
    factories.collection_with_topics()
    paths = []
    for i in range(RUNS):
        tag = f"team{i % TEAMS:02d}-run{i // TEAMS + 1}"
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, {q: [f"d{q}-{(i * 7 + k) % 60}" for k in range(5)]
                                                  for q in ("301", "302", "303")}))
        paths.append(str(path))
    call_command("import_runs", "robust", *paths, stdout=StringIO())
    for run in Run.objects.all():
        team, number = run.tag.split("-run")
        run.team, run.pool_priority = team, int(number)
        run.save(update_fields=["team", "pool_priority"])
    user = User.objects.create_user("olga", password="organize")
    user.groups.add(Group.objects.get_or_create(name="organizers")[0])


OVERFLOWING = """() => {
  const width = window.innerWidth, wide = [];
  const clipped = el => { for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p); if (['auto', 'scroll', 'hidden'].includes(s.overflowX)) return true; }
    return false; };
  for (const el of document.querySelectorAll('body *')) {
    const r = el.getBoundingClientRect();
    if (r.width && r.right > width + 1 && !clipped(el)) wide.push(el.tagName + '.' + el.className + ' ' + Math.round(r.right));
  }
  return {scroll: document.documentElement.scrollWidth, width, wide: wide.slice(0, 10)};
}"""


def test_the_pool_form_of_150_runs_fits_a_screen_and_previews_two_runs_per_team(page, live_server, big_track,
                                                                                screenshot_dir):
    log_in(page, live_server, "olga", "organize")
    page.goto(f"{live_server.url}/console/robust/pools/")
    height = page.evaluate("document.documentElement.scrollHeight")
    assert page.locator("input[name=runs]").count() == RUNS
    assert height < 2000, f"the pool form is {height} px high at 1280 px"
    preview_button = page.get_by_role("button", name="Preview the size per topic")
    assert preview_button.bounding_box()["y"] < 900  # in the first screen, above the runs
    page.screenshot(path=str(screenshot_dir / "pool-form-1280.png"), full_page=True)

    # the filter (JavaScript) narrows the list to one team; "+ team" ticks its runs in place
    page.get_by_label("Filter the runs by team or run").fill("team07")
    assert page.locator(".team:not([hidden])").count() == 1
    page.get_by_role("button", name="Tick every run of team07").click()
    assert page.locator("input[name=runs]:checked").count() == 4
    assert "4 ticked" in page.locator("#runs legend").inner_text()
    page.get_by_role("button", name="none").click()
    assert page.locator("input[name=runs]:checked").count() == 0
    page.get_by_label("Filter the runs by team or run").fill("")

    page.get_by_label("Runs per team").fill("2")
    page.get_by_label("Depth").first.fill("3")
    preview_button.click()
    page.wait_for_load_state()
    text = page.locator("#preview").inner_text()
    assert "over 80 runs of the 150 offered" in text
    assert "team07 (2 of 4)" in text
    page.locator("#preview").screenshot(path=str(screenshot_dir / "pool-form-preview-1280.png"))


def test_the_pool_form_is_no_wider_than_a_phone(browser, live_server, big_track, screenshot_dir):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    try:
        log_in(page, live_server, "olga", "organize")
        page.goto(f"{live_server.url}/console/robust/pools/")
        found = page.evaluate(OVERFLOWING)
        assert found["scroll"] <= 390 and not found["wide"], found
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height < 3200, f"the pool form is {height} px high at 390 px"
        assert page.get_by_role("button", name="Build the pool").bounding_box()["y"] < 844
        page.screenshot(path=str(screenshot_dir / "pool-form-390.png"), full_page=True)
        page.get_by_label("Runs per team").fill("1")
        page.get_by_role("button", name="Preview the size per topic").click()
        page.wait_for_load_state()
        assert "over 40 runs of the 150 offered" in page.locator("#preview").inner_text()
        found = page.evaluate(OVERFLOWING)
        assert found["scroll"] <= 390 and not found["wide"], found
        page.screenshot(path=str(screenshot_dir / "pool-form-preview-390.png"), full_page=True)
    finally:
        context.close()


def test_the_pool_page_says_which_runs_contributed_at_both_sizes(browser, live_server, big_track, screenshot_dir):
    from pooling.services import pool_build

    pool_build(collection=Run.objects.first().collection, name="submissions", depth=3, runs_per_team=1, seed=1)
    for width, height in ((1280, 900), (390, 844)):
        context = browser.new_context(viewport={"width": width, "height": height})
        page = context.new_page()
        try:
            log_in(page, live_server, "olga", "organize")
            page.goto(f"{live_server.url}/collections/robust/pool/")
            assert "Built from 40 of the collection's runs (150 offered to the pool)" in page.inner_text("main")
            rows = page.locator("table:has(th:has-text('Contributed to this pool')) tbody tr")
            assert "team00-run1" in rows.first.inner_text() and "yes" in rows.first.inner_text()
            found = page.evaluate(OVERFLOWING)
            assert found["scroll"] <= width and not found["wide"], found
            page.screenshot(path=str(screenshot_dir / f"pool-page-{width}.png"), full_page=True)
        finally:
            context.close()

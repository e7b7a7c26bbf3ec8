"""Every results page loads in Chromium and shows what a researcher needs; screenshots for review."""

from __future__ import annotations

import csv
import io
import re
from io import StringIO
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from playwright.sync_api import expect

from tests import factories
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser


@pytest.fixture
def track(transactional_db, tmp_path):
    factories.collection_with_topics()
    # alpha and beta share most documents; gamma retrieves documents nobody pooled
    rankings = {
        "alpha": {q: [f"d{q}-{i}" for i in range(10)] for q in ("301", "302", "303")},
        "beta": {q: [f"d{q}-{i}" for i in (1, 0, 3, 2, 5, 4, 12, 7, 8, 11)] for q in ("301", "302", "303")},
        "gamma": {q: [f"g{q}-{i}" for i in range(5)] + [f"d{q}-{i}" for i in range(5)] for q in ("301", "302", "303")},
    }
    for tag, ranking in rankings.items():
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", "robust", str(path), "--team", f"team-{tag}",
                     *(["--no-pool"] if tag == "gamma" else []), stdout=StringIO())
    call_command("build_pool", "robust", "--depth", "10", "--seed", "1", stdout=StringIO())
    qrels = tmp_path / "qrels"
    judged = sorted({d for tag in ("alpha", "beta") for q, docs in rankings[tag].items() for d in docs})
    qrels.write_text("".join(f"{d[1:4]} 0 {d} {int(d.endswith(('0', '2', '5', '11')))}\n" for d in judged))
    call_command("import_qrels", "robust", str(qrels), "--assessor", "nist", stdout=StringIO())
    user = User.objects.create_user("olga", password="organize")
    user.groups.add(Group.objects.get_or_create(name="organizers")[0])


def test_leaderboard_shows_scores_groups_and_flags_the_run_that_did_not_contribute(page, live_server, track,
                                                                                  screenshot_dir):
    log_in(page, live_server, "olga", "organize")
    page.goto(f"{live_server.url}/collections/robust/leaderboard/")
    table = page.locator("table.leaderboard")
    assert table.is_visible()
    rows = table.locator("tbody tr")
    assert rows.count() == 3
    flagged = page.locator("tr.flagged")
    assert flagged.count() == 1 and "gamma" in flagged.inner_text()
    assert "did not contribute to the pool" in flagged.inner_text()
    assert "1 run flagged for pool bias" in page.inner_text("body")
    page.screenshot(path=str(screenshot_dir / "leaderboard.png"), full_page=True)


def test_run_page_plots_the_run_against_best_median_and_worst(page, live_server, track, screenshot_dir):
    log_in(page, live_server, "olga", "organize")
    page.goto(f"{live_server.url}/collections/robust/runs/alpha/?measure=map")
    assert page.locator("figure svg").count() == 1
    assert "Above the median on" in page.inner_text("body")
    assert page.locator("table.data tbody tr").count() == 3
    page.screenshot(path=str(screenshot_dir / "run-report.png"), full_page=True)


def test_topic_page_shows_pool_relevant_per_depth_and_run_scores(page, live_server, track):
    log_in(page, live_server, "olga", "organize")
    page.goto(f"{live_server.url}/collections/robust/topics/301/")
    body = page.inner_text("body")
    assert "International Organized Crime" in body
    assert "Relevant found per pool depth" in body
    assert page.get_by_role("link", name="alpha").count() >= 1


def _texts(locator) -> list[str]:
    return [t.strip() for t in locator.all_inner_texts()]


def _csv_download(page, table_prefix: str) -> list[list[str]]:
    with page.expect_download() as info:
        page.locator(f"a[href*='_table={table_prefix}']").click()
    download = info.value
    assert download.suggested_filename.endswith(f".{table_prefix.strip('-')}.csv")
    return list(csv.reader(io.StringIO(Path(download.path()).read_text())))


def test_significance_matrix_lists_every_pair_sorts_and_exports(page, live_server, track, screenshot_dir):
    log_in(page, live_server, "olga", "organize")
    page.goto(f"{live_server.url}/collections/robust/significance/?measure=map&test=randomization")
    assert page.locator("svg.heatmap image.cells").get_attribute("width") == "3"  # the picture first
    page.locator("details#numbers > summary").click()  # the table, one click away (loaded when opened)
    matrix = page.get_by_role("table", name="Adjusted p-values for every pair of runs")
    rows = matrix.locator("tbody tr")
    expect(rows).to_have_count(3)
    assert "of 3 pairs differ significantly" in page.inner_text("body")
    assert "randomisation test, Holm–Bonferroni correction" in page.inner_text("body")
    head = _texts(matrix.locator("thead th"))
    runs = head[2:]
    assert head[:2] == ["Run", "Mean map"] and sorted(runs) == ["alpha", "beta", "gamma"]
    assert _texts(rows.locator("td:first-child")) == runs  # best mean first, the columns in the same order
    cells = {(rows.nth(i).locator("td").first.inner_text().strip(), runs[j]):
             rows.nth(i).locator("td").nth(2 + j) for i in range(3) for j in range(3)}
    for a in runs:
        assert cells[(a, a)].inner_text().strip() == "—"
        for b in runs:
            if a != b:  # the cell and its mirror show the same difference, with opposite signs
                here, there = cells[(a, b)].inner_text().strip(), cells[(b, a)].inner_text().strip()
                assert here.rstrip("*").lstrip("+−") == there.rstrip("*").lstrip("+−")
                assert {here[0], there[0]} == {"+", "−"} and here.endswith("*") == there.endswith("*")
                assert "adjusted" in cells[(a, b)].get_attribute("title")
    page.screenshot(path=str(screenshot_dir / "significance.png"), full_page=True)

    matrix.locator("thead th", has_text="Run").first.locator("a").click()
    page.wait_for_load_state()
    assert "m-sort=run" in page.url
    matrix = page.get_by_role("table", name="Adjusted p-values for every pair of runs")
    assert _texts(matrix.locator("tbody tr td:first-child")) == ["alpha", "beta", "gamma"]
    exported = _csv_download(page, "m-")
    assert exported[0] == ["Run", "Mean map", *runs]
    assert [r[0] for r in exported[1:]] == ["alpha", "beta", "gamma"]  # as sorted on the page
    pairs = _csv_download(page, "p-")
    assert len(pairs) == 1 + 3 and pairs[0][:2] == ["Run A", "Run B"]


def test_pr_curves_are_drawn_for_the_chosen_runs(page, live_server, track, screenshot_dir):
    log_in(page, live_server, "olga", "organize")
    page.goto(f"{live_server.url}/collections/robust/curves/?run=alpha&run=beta")
    svg = page.locator("figure svg")
    assert svg.count() == 1
    assert "alpha" in svg.inner_html() and "beta" in svg.inner_html()
    page.screenshot(path=str(screenshot_dir / "pr-curves.png"), full_page=True)


def test_overview_and_downloads_pages(page, live_server, track, screenshot_dir):
    log_in(page, live_server, "olga", "organize")
    page.goto(f"{live_server.url}/collections/robust/")
    judged = page.get_by_role("progressbar", name=re.compile(r"^Judged in the pool"))
    assert judged.get_attribute("aria-valuenow") is not None
    page.goto(f"{live_server.url}/collections/robust/downloads/")
    page.get_by_role("button", name="Build the release bundle").click()  # a background job, then its page
    page.wait_for_url(re.compile(r"/jobs/\d+/$"))
    link = page.get_by_role("link", name=re.compile(r"^Download robust-release-"))
    expect(link).to_be_visible()
    page.screenshot(path=str(screenshot_dir / "release-job.png"), full_page=True)
    with page.expect_download() as info:
        link.click()
    assert info.value.suggested_filename.startswith("robust-release-")


def test_reusability_page_reports_leave_one_out_and_recall(page, live_server, track):
    log_in(page, live_server, "olga", "organize")
    page.goto(f"{live_server.url}/collections/robust/reusability/?measure=map")
    body = page.inner_text("body")
    assert "Leave-one-run-out (map)" in body and "Kendall" in body
    assert "How many relevant documents are there?" in body
    assert "Recall of each run" in body and "gamma" in body


def test_assessors_are_refused_every_results_page(page, live_server, track):
    User.objects.create_user("ada", password="judge-me")
    log_in(page, live_server, "ada", "judge-me")
    for path in ["leaderboard/", "runs/alpha/", "topics/301/", "significance/", "curves/", "reusability/",
                 "downloads/release.zip"]:
        response = page.goto(f"{live_server.url}/collections/robust/{path}")
        assert response.status == 403, path


def test_pool_page_shows_unique_contributions_and_overlap(page, live_server, track, screenshot_dir):
    log_in(page, live_server, "olga", "organize")
    page.goto(f"{live_server.url}/collections/robust/pool/")
    body = page.inner_text("body")
    assert "Contributions per run" in body and "Depth-k (TREC)" in body
    overlap = page.get_by_role("table", name="Run-to-run overlap")
    # alpha and beta contributed (gamma did not); each pooled its top 10 on 3 topics, and beta's top 10 holds
    # 8 of alpha's (all but d-12 and d-11)
    assert _texts(overlap.locator("thead th")) == ["Run", "alpha", "beta"]
    rows = overlap.locator("tbody tr")
    assert [_texts(rows.nth(i).locator("td")) for i in range(rows.count())] == [
        ["alpha", "30", "24"], ["beta", "24", "30"]]
    page.screenshot(path=str(screenshot_dir / "pool.png"), full_page=True)

    overlap.locator("thead th", has_text="alpha").locator("a").click()
    page.wait_for_load_state()
    overlap = page.get_by_role("table", name="Run-to-run overlap")
    assert _texts(overlap.locator("tbody tr td:first-child")) == ["beta", "alpha"]  # 24 before 30
    exported = _csv_download(page, "o-")
    assert exported == [["Run", "alpha", "beta"], ["beta", "24", "30"], ["alpha", "30", "24"]]


def test_no_results_page_is_wider_than_a_390_px_phone(browser, live_server, track, screenshot_dir):
    """Wide tables scroll inside their box; forms, plots and headings fit the screen."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    log_in(page, live_server, "olga", "organize")
    wide = {}
    for path in ("", "leaderboard/", "significance/", "curves/?all=1", "reusability/", "pool/", "downloads/",
                 "topics/301/", "runs/alpha/"):
        page.goto(f"{live_server.url}/collections/robust/{path}")
        expect(page.locator("h1")).to_be_visible()
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > 390:
            wide[path] = width
    page.goto(f"{live_server.url}/collections/robust/leaderboard/")
    page.screenshot(path=str(screenshot_dir / "leaderboard-390px.png"), full_page=True)
    # scrolled sideways to the scores, the table still shows which run each row is
    table = page.locator("table.leaderboard")
    table.evaluate("t => { t.scrollLeft = t.scrollWidth; window.scrollTo(0, t.getBoundingClientRect().top + scrollY - 80); }")
    assert table.evaluate("t => t.scrollLeft") > 0, "the leaderboard fits a phone: nothing to scroll"
    first_run = table.locator("tbody tr").first.locator("td").nth(1)
    box = first_run.bounding_box()
    page.screenshot(path=str(screenshot_dir / "leaderboard-390px-scrolled.png"))
    context.close()
    assert not wide, f"pages wider than the screen: {wide}"
    assert 0 <= box["x"] and box["x"] + box["width"] <= 390, f"the run column scrolled out of view: {box}"

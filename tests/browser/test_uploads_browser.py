"""Uploads from the browser with JavaScript: runs, an archive and a manifest sent in the background with a
progress bar (an XMLHttpRequest, not a page load), then the job's page; too many files refused before
anything is sent; the runs page changes many runs at once. Screenshots at 390 and 1280 px go to
``test-artifacts/uploads-*.png``."""

from __future__ import annotations

import re
import zipfile

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from tests import factories
from tests.browser.conftest import log_in
from workbench.models import Run

pytestmark = pytest.mark.browser


@pytest.fixture
def organizer_page(page, live_server, transactional_db, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    factories.collection_with_topics()
    user = User.objects.create_user("olga", password="organize-it")
    user.groups.add(Group.objects.get_or_create(name="organizers")[0])
    violations = []
    page.on("console", lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None)
    log_in(page, live_server, "olga", "organize-it")
    yield page
    assert violations == []


def _files(folder):
    folder.mkdir()
    paths = []
    for tag in ("alpha", "beta"):
        path = folder / f"{tag}.run"
        path.write_text(factories.run_lines(tag, {"301": [f"{tag}-d1", f"{tag}-d2"], "302": [f"{tag}-d3"]}))
        paths.append(path)
    archive = folder / "more.zip"
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("team-c/gamma.run", factories.run_lines("gamma", {"303": ["g1", "g2"]}))
    manifest = folder / "manifest.csv"
    manifest.write_text("tag,team,priority,contributes\nalpha,uni-a,1,yes\nbeta,uni-b,2,yes\ngamma,uni-c,1,no\n")
    return [*paths, archive], manifest


def test_runs_an_archive_and_a_manifest_go_up_with_a_progress_bar_then_the_job_page(organizer_page, live_server,
                                                                                    tmp_path, screenshot_dir):
    page = organizer_page
    runs, manifest = _files(tmp_path / "files")
    page.goto(f"{live_server.url}/console/robust/upload/#runs")
    form = page.locator("form#runs")
    expect(page.locator("#limits")).to_contain_text("at most 1000 files in one upload")
    form.locator("input[name=runs-files]").set_input_files([str(p) for p in runs])
    form.get_by_label("Manifest").set_input_files(str(manifest))
    expect(form.locator(".file-count")).to_contain_text("4 files chosen")
    page.screenshot(path=str(screenshot_dir / "uploads-1-runs-form-1280.png"), full_page=True)
    with page.expect_request(lambda r: r.method == "POST" and "/upload/" in r.url) as sent:
        form.get_by_role("button", name="Upload runs").click()
    assert sent.value.resource_type == "xhr"  # sent in the background, with its progress shown
    page.wait_for_url(re.compile(r"/jobs/\d+/$"))
    expect(page.locator("#job-status")).to_contain_text("Done", timeout=30_000)
    assert "run gamma: 2 lines on 1 topics (not offered to the pool); team uni-c, priority 1" in page.inner_text(
        "#job-status")
    assert sorted(Run.objects.values_list("tag", "team", "pool_priority", "source_file")) == [
        ("alpha", "uni-a", 1, "alpha.run"), ("beta", "uni-b", 2, "beta.run"),
        ("gamma", "uni-c", 1, "more.zip:team-c/gamma.run")]
    page.screenshot(path=str(screenshot_dir / "uploads-2-job-1280.png"), full_page=True)

    # the runs page: beta ticked, moved to team uni-a with priority 3
    page.goto(f"{live_server.url}/console/robust/runs/")
    page.get_by_role("button", name="Tick every run on this page").click()
    expect(page.get_by_label("Select run gamma")).to_be_checked()
    page.get_by_role("button", name="Clear the ticks on this page").click()
    expect(page.get_by_label("Select run gamma")).not_to_be_checked()
    page.get_by_label("Select run beta").check()
    page.get_by_label("Team").fill("uni-a")
    page.get_by_label("Priority").fill("3")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator(".messages")).to_contain_text("1 run updated.")
    assert Run.objects.get(tag="beta").team == "uni-a" and Run.objects.get(tag="beta").pool_priority == 3
    page.screenshot(path=str(screenshot_dir / "uploads-3-runs-page-1280.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(screenshot_dir / "uploads-3-runs-page-390.png"), full_page=True)
    page.goto(f"{live_server.url}/console/robust/upload/#runs")
    page.screenshot(path=str(screenshot_dir / "uploads-1-runs-form-390.png"), full_page=True)


def test_too_many_files_are_refused_before_anything_is_sent(organizer_page, live_server, tmp_path, settings,
                                                           screenshot_dir):
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 2
    page = organizer_page
    runs, _ = _files(tmp_path / "files")
    page.goto(f"{live_server.url}/console/robust/upload/#runs")
    form = page.locator("form#runs")
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    form.locator("input[name=runs-files]").set_input_files([str(p) for p in runs])
    expect(form.locator(".file-count")).to_contain_text("more than the 2 files one upload may carry")
    form.get_by_role("button", name="Upload runs").click()
    page.wait_for_timeout(300)
    assert posts == [] and page.url.endswith("/upload/#runs") and not Run.objects.exists()
    page.screenshot(path=str(screenshot_dir / "uploads-4-too-many-1280.png"), full_page=True)


def test_an_upload_over_the_limit_without_javascript_gets_a_plain_page(browser, live_server, transactional_db,
                                                                     settings, tmp_path, screenshot_dir):
    settings.VAR_DIR = tmp_path / "var"
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 2
    factories.collection_with_topics()
    user = User.objects.create_user("olga", password="organize-it")
    user.groups.add(Group.objects.get_or_create(name="organizers")[0])
    context = browser.new_context(java_script_enabled=False, viewport={"width": 390, "height": 844})
    page = context.new_page()
    log_in(page, live_server, "olga", "organize-it")
    runs, _ = _files(tmp_path / "files")
    page.goto(f"{live_server.url}/console/robust/upload/#runs")
    page.locator("form#runs input[name=runs-files]").set_input_files([str(p) for p in runs])
    page.locator("form#runs").get_by_role("button", name="Upload runs").click()
    page.wait_for_load_state()
    assert "more than 2 files, the most one upload may carry" in page.inner_text("main")
    page.screenshot(path=str(screenshot_dir / "uploads-5-over-limit-390.png"), full_page=True)
    page.get_by_role("link", name="Back to the form").click()
    expect(page.locator("h1")).to_contain_text("Upload to")
    context.close()

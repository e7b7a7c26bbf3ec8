"""End-to-end tests in Debian's Chromium, driven by Playwright (which cannot download its own browser here)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("CHROMIUM", shutil.which("chromium") or "/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

# Playwright's sync API runs an event loop in the test thread; the ORM calls the tests make there are
# ordinary synchronous calls, so Django's async-safety guard does not apply.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

pytestmark = pytest.mark.browser


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install it with `apt-get install chromium` "
                    "(.ci/run does this)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    yield page
    context.close()


@pytest.fixture
def screenshot_dir() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


def log_in(page, live_server, username: str, password: str) -> None:
    page.goto(f"{live_server.url}/accounts/login/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_load_state()


def select_text(page, phrase: str) -> None:
    """Select the first ``phrase`` in the document's text (``#doc-text``), as a mouse drag would."""
    page.evaluate("""phrase => {
        const root = document.getElementById('doc-text');
        const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
        const from = root.textContent.indexOf(phrase), to = from + phrase.length;
        let at = 0, start, startOff, end, endOff;
        while (walker.nextNode()) {
            const n = walker.currentNode, len = n.data.length;
            if (start === undefined && from < at + len) { start = n; startOff = from - at; }
            if (end === undefined && to <= at + len) { end = n; endOff = to - at; }
            at += len;
        }
        const range = document.createRange();
        range.setStart(start, startOff); range.setEnd(end, endOff);
        window.getSelection().removeAllRanges(); window.getSelection().addRange(range);
    }""", phrase)

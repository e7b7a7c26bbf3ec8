"""A judgment key pressed while the database is busy: the server answers workbench.jobs.busy's plain 503 page (no
judging page in it), and the judging page says the judgment was not saved and to try again, keeps the choice,
and stores it on Retry; nothing is lost silently."""

from __future__ import annotations

import pytest
from django.db import OperationalError
from playwright.sync_api import expect

from judging.models import Judgment
from tests.browser.conftest import log_in
from tests.browser.test_judging_browser import assigned  # noqa: F401 - the fixture

pytestmark = pytest.mark.browser


def test_a_busy_page_answered_to_a_keypress_says_try_again_and_retry_stores_it(page, live_server, assigned,  # noqa: F811
                                                                                monkeypatch):
    import judging.views

    real = judging.views.document_for
    armed = []

    def busy_once(*args, **kwargs):
        if armed and armed.pop():
            raise OperationalError("database is locked")
        return real(*args, **kwargs)

    monkeypatch.setattr(judging.views, "document_for", busy_once)  # the live server runs in this process
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    expect(page.locator("main")).to_contain_text("Text of d2")
    first_url = page.url
    armed.append(True)  # the next read of the document (the post's) meets a locked database
    page.keyboard.press("1")
    alert = page.locator("#save-error")
    expect(alert).to_contain_text("Not saved: the server is busy (HTTP 503); try again in a moment")
    expect(alert).to_contain_text("Your choice (Relevant) is kept")
    assert page.url == first_url and Judgment.objects.count() == 0
    alert.get_by_role("button", name="Retry").click()
    expect(page.locator("main")).to_contain_text("Text of d3")
    assert list(Judgment.objects.values_list("docno", "grade")) == [("d2", 1)]

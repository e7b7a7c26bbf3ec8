"""Two teams submit their own runs in Chromium, over a real web server and db_worker: a bad line and a run
after the deadline are refused with the reason, the form closes at the run limit; the teams' first runs are
pooled, judged and released; each team sees its own report and never the other team's files.

Screenshots go to ``test-artifacts/participation-*.png``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from tests.browser.stack import accept_invitation, log_in_at, running_stack
from tests.browser.test_first_track import _finished_job, _shot, _upload
from tests.factories import run_lines

pytestmark = [pytest.mark.browser, pytest.mark.track]

TOPICS = "1\tsolar panels\n2\tsourdough bread\n"
RANKING = {"1": ["D01", "D02", "D03"], "2": ["D04", "D05", "D06"]}


def _invite(page, url, username) -> str:
    page.goto(f"{url}/console/people/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Assessor").uncheck()
    page.get_by_label(re.compile("Participant")).check()
    page.get_by_role("button", name="Create the account").click()
    return page.get_by_label("Set-password link").input_value()


def _join(browser, link, username, password):
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.set_default_timeout(20_000)
    accept_invitation(page, link, username, password)
    expect(page.locator("h1")).to_have_text("My tracks")
    return context, page


def _submit(page, url, path, priority="1"):
    page.goto(f"{url}/participate/ctrack/")
    page.get_by_label(re.compile("^File")).set_input_files(str(path))
    page.get_by_label(re.compile("^Description")).fill("BM25 on titles")
    page.get_by_label(re.compile("^Priority")).fill(priority)
    page.get_by_role("button", name="Submit").click()
    page.wait_for_url(re.compile(r"/participate/ctrack/submissions/\d+/$"))
    expect(page.locator("h1")).not_to_contain_text("Being checked", timeout=30_000)
    return page.inner_text("#receipt"), page.url


def test_two_teams_submit_are_pooled_judged_and_see_only_their_own_results(browser, tmp_path, screenshot_dir):
    files = tmp_path / "files"
    files.mkdir()
    (files / "topics.tsv").write_text(TOPICS)
    (files / "docs.sgml").write_text("".join(f"<DOC>\n<DOCNO>D{i:02d}</DOCNO>\n<TEXT>text {i}</TEXT>\n</DOC>\n"
                                             for i in range(1, 13)))
    for tag, ranking in {"red-1": RANKING, "red-2": {"1": ["D03", "D07"], "2": ["D08"]},
                         "red-3": {"1": ["D09"]}, "blue-1": {"1": ["D10", "D01"], "2": ["D11", "D04"]},
                         "blue-2": {"1": ["D12"]}}.items():
        (files / f"{tag}.run").write_text(run_lines(tag, ranking))
    (files / "red-bad.run").write_text(run_lines("red-bad", RANKING) + "2 Q0 D07 7 not-a-score red-bad\n")
    (files / "qrels.txt").write_text("1 0 D01 1\n1 0 D02 0\n1 0 D10 1\n2 0 D04 1\n2 0 D11 0\n2 0 D05 0\n")

    with running_stack(tmp_path, organizer="boss", password="organizer-pass-1") as stack:
        url = stack.url
        organizer = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        organizer.set_default_timeout(20_000)
        log_in_at(organizer, url, "boss", "organizer-pass-1")
        organizer.goto(f"{url}/console/new/")
        organizer.get_by_label("Slug").fill("ctrack")
        organizer.get_by_label("Name").fill("Shared task")
        organizer.get_by_role("button", name="Create the collection").click()
        _upload(organizer, f"{url}/console/ctrack/upload/", "topics", [files / "topics.tsv"])
        _finished_job(organizer, screenshot_dir, "participation-0-topics")
        _upload(organizer, f"{url}/console/ctrack/upload/", "documents", [files / "docs.sgml"])
        _finished_job(organizer, screenshot_dir, "participation-0-documents")

        links = {name: _invite(organizer, url, name) for name in ("rosa", "bruno")}
        organizer.goto(f"{url}/console/ctrack/participation/")
        organizer.get_by_label(re.compile("^Open for submissions")).check()
        deadline = (datetime.now(UTC) + timedelta(days=1)).strftime("%Y-%m-%dT%H:%M")
        organizer.get_by_label(re.compile("^Deadline")).fill(deadline)
        organizer.get_by_label(re.compile("^Max runs per team")).fill("2")
        organizer.get_by_label(re.compile("^Pooled runs per team")).fill("1")
        organizer.get_by_label(re.compile("^Depth")).fill("3")
        organizer.get_by_role("button", name="Save the track").click()
        for team, member in (("red", "rosa"), ("blue", "bruno")):
            organizer.get_by_label(re.compile("^Name:?$")).fill(team)
            organizer.get_by_label(re.compile("^Members")).fill(member)
            organizer.get_by_role("button", name="Add the team").click()
            expect(organizer.locator("main")).to_contain_text(f"Team '{team}' added")
        _shot(organizer, screenshot_dir, "participation-1-track")

        rosa_context, rosa = _join(browser, links["rosa"], "rosa", "rosa-submits-7")
        assert "Accepted as run red-1" in _submit(rosa, url, files / "red-1.run")[0]
        receipt, _ = _submit(rosa, url, files / "red-bad.run")
        assert "Refused" in receipt and "red-bad.run:7: score 'not-a-score' is not a number" in receipt
        _shot(rosa, screenshot_dir, "participation-2-refused-line-390px")
        assert "Accepted as run red-2" in _submit(rosa, url, files / "red-2.run", priority="2")[0]
        # at the limit the form for a new run is closed: the page says why and offers a replacement instead
        rosa.goto(f"{url}/participate/ctrack/")
        assert "2 of 2 runs submitted" in rosa.inner_text("main")
        assert "the track's limit: no new run can be sent" in rosa.inner_text("#submit")
        assert rosa.get_by_role("button", name="Submit").count() == 0
        _shot(rosa, screenshot_dir, "participation-3-over-limit-390px")

        bruno_context, bruno = _join(browser, links["bruno"], "bruno", "bruno-submits-7")
        receipt, blue_receipt = _submit(bruno, url, files / "blue-1.run")
        assert "Accepted as run blue-1" in receipt

        # the deadline passes: a late upload is refused with the reason
        organizer.goto(f"{url}/console/ctrack/participation/")
        past = (datetime.now(UTC) - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M")
        organizer.get_by_label(re.compile("^Deadline")).fill(past)
        organizer.get_by_role("button", name="Save the track").click()
        bruno.goto(f"{url}/participate/ctrack/")
        assert "Submissions are closed: the deadline passed on" in bruno.inner_text("main")
        assert bruno.get_by_role("button", name="Submit").count() == 0

        # pool each team's first run, judge (an earlier qrels file), release
        organizer.goto(f"{url}/console/ctrack/participation/")
        _shot(organizer, screenshot_dir, "participation-4-submissions")
        organizer.get_by_role("link", name="Pool from the submissions").click()
        assert organizer.get_by_label(re.compile("^Runs per team")).input_value() == "1"
        organizer.get_by_label(re.compile("^Depth:?$")).fill("3")
        organizer.get_by_role("button", name="Build the pool").click()
        assert "from 2 runs of the 3 offered" in _finished_job(organizer, screenshot_dir, "participation-5-pool")
        _upload(organizer, f"{url}/console/ctrack/upload/", "qrels", [files / "qrels.txt"])
        assert "6 judgments on 2 topics" in _finished_job(organizer, screenshot_dir, "participation-6-qrels")
        organizer.goto(f"{url}/console/ctrack/participation/")
        organizer.get_by_role("button", name="Release the results to the teams").click()
        expect(organizer.locator("main")).to_contain_text("Results released")

        rosa.goto(f"{url}/participate/ctrack/results/")
        page = rosa.inner_text("main")
        assert "Run red-1" in page and "Run red-2" in page and "blue-1" not in page
        assert "This run did not contribute to the pool." in page  # red-2: only the first run was pooled
        _shot(rosa, screenshot_dir, "participation-7-results-390px")
        blue_id = blue_receipt.rstrip("/").split("/")[-1]
        for path in (f"/participate/ctrack/submissions/{blue_id}/", f"/participate/ctrack/submissions/{blue_id}/file"):
            response = rosa.request.get(f"{url}{path}")
            assert response.status == 404
        rosa_context.close()
        bruno_context.close()

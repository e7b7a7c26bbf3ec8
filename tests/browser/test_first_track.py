"""A new track from nothing, in Chromium, as an organizer runs one: the console, uploads and a pool build
run as jobs by a real ``db_worker`` (SQLite here; PostgreSQL in ``make test-postgres``), an assessor invited
with a set-password link judges, and the leaderboard and qrels follow.

Screenshots of each console page go to ``test-artifacts/track-*.png``."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.browser.stack import accept_invitation, log_in_at, running_stack
from tests.factories import run_lines

pytestmark = [pytest.mark.browser, pytest.mark.track]

TOPICS = "1\tsolar panels on roofs\n2\tbread without yeast\n3\tmigrating birds at night\n"
DOCS = {f"D{i:02d}": f"document {i} about {'solar power' if i % 3 == 0 else 'bread' if i % 3 == 1 else 'birds'}"
        for i in range(1, 31)}
RANKINGS = {
    "alpha": {"1": ["D03", "D06", "D09", "D12"], "2": ["D01", "D04", "D07"], "3": ["D02", "D05"]},
    "beta": {"1": ["D06", "D15", "D03"], "2": ["D10", "D01"], "3": ["D08", "D02", "D11"]},
    "gamma": {"1": ["D18", "D03"], "2": ["D13"], "3": ["D14"]},
}


@pytest.fixture
def files(tmp_path):
    folder = tmp_path / "files"
    folder.mkdir()
    (folder / "topics.tsv").write_text(TOPICS)
    (folder / "docs.sgml").write_text("".join(f"<DOC>\n<DOCNO>{d}</DOCNO>\n<TEXT>{t}</TEXT>\n</DOC>\n"
                                              for d, t in DOCS.items()))
    for tag, ranking in RANKINGS.items():
        (folder / f"{tag}.run").write_text(run_lines(tag, ranking))
    (folder / "broken.run").write_text(run_lines("broken", {"1": ["D01", "D02"]}) + "2 Q0 D04 three 1.0 broken\n")
    return folder


def _shot(page, artifacts, name: str) -> None:
    page.screenshot(path=str(artifacts / f"{name}.png"), full_page=True)


def _finished_job(page, artifacts, name: str) -> str:
    """Wait on the job's page (it follows the worker's progress without reloading) until it ends."""
    try:
        page.wait_for_url(re.compile(r"/jobs/\d+/(#.*)?$"))
    except Exception:
        _shot(page, artifacts, f"{name}-not-a-job")
        raise AssertionError(f"{page.url}: {page.inner_text('main')[:1500]}") from None
    expect(page.locator("#job-status")).to_contain_text(re.compile("Done|Failed"), timeout=60_000)
    _shot(page, artifacts, name)
    return page.inner_text("#job-status")


def _upload(page, url, kind: str, paths, **checks) -> None:
    page.goto(f"{url}#{kind}")
    form = page.locator(f"form#{kind}")
    form.locator("input[type=file][name$='-files']").set_input_files([str(p) for p in paths])  # (runs also take a manifest)
    for label, value in checks.items():
        field = form.get_by_label(re.compile(f"^{label.replace('_', ' ').capitalize()}:?$"))
        field.fill(value) if isinstance(value, str) else field.set_checked(value)
    form.get_by_role("button", name=re.compile("^Upload")).click()


def test_an_organizer_runs_a_first_track_from_the_browser(browser, tmp_path, files, screenshot_dir):
    with running_stack(tmp_path, organizer="boss", password="organizer-pass-1") as stack:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        page = context.new_page()
        page.set_default_timeout(20_000)
        log_in_at(page, stack.url, "boss", "organizer-pass-1")

        # a collection with a graded scale
        page.get_by_role("link", name="New collection").click()
        page.get_by_label("Slug").fill("garden")
        page.get_by_label("Name").fill("Garden track")
        page.get_by_label("Guidelines").fill("## How to judge\n\nA document is **relevant** if it helps.")
        page.fill("#id_grade-1-label", "Relevant")
        page.fill("#id_grade-2-grade", "2")
        page.fill("#id_grade-2-label", "Highly relevant")
        page.fill("#id_grade-2-description", "Answers the whole topic.")
        _shot(page, screenshot_dir, "track-1-new-collection")
        page.get_by_role("button", name="Create the collection").click()
        expect(page.locator("h1")).to_contain_text("Garden track")
        console = page.url
        assert "2 Highly relevant" in page.inner_text("main")

        upload = f"{console}upload/"
        _upload(page, upload, "topics", [files / "topics.tsv"])
        assert "topics.tsv: 3 topics added" in _finished_job(page, screenshot_dir, "track-2-topics-job")
        _upload(page, upload, "documents", [files / "docs.sgml"])
        assert "30 documents added" in _finished_job(page, screenshot_dir, "track-3-documents-job")

        # one bad line in one of two files: refused, naming the line, nothing imported
        _upload(page, upload, "runs", [files / "alpha.run", files / "broken.run"])
        report = _finished_job(page, screenshot_dir, "track-4-runs-refused")
        assert "Failed" in report and "broken.run:3: rank 'three' is not an integer" in report and "Nothing was imported" in report
        page.goto(console)
        assert re.search(r"\b0\s+runs\b", page.inner_text("main"))

        _upload(page, upload, "runs", [files / "alpha.run", files / "beta.run"], team="garden lab")
        assert "run alpha: 9 lines on 3 topics (offered to the pool)" in _finished_job(page, screenshot_dir,
                                                                                          "track-5-runs-job")
        _upload(page, upload, "runs", [files / "gamma.run"], contributes=False)
        assert "run gamma: 4 lines on 3 topics (not offered to the pool)" in _finished_job(page, screenshot_dir,
                                                                                      "track-6-run-job")

        # a depth-k pool: preview per topic, then build
        page.goto(f"{console}pools/")
        page.get_by_label(re.compile("^Depth:?$")).fill("3")
        page.get_by_label("Judging order").select_option("pool")
        page.get_by_role("button", name="Preview the size per topic").click()
        preview = page.inner_text("#preview")
        # depth 3 of alpha and beta: topic 1 {D03 D06 D09 D15}, 2 {D01 D04 D07 D10}, 3 {D02 D05 D08 D11}
        assert "12 documents" in preview and "on 3 topics" in preview
        _shot(page, screenshot_dir, "track-7-pool-preview")
        page.get_by_role("button", name="Build the pool").click()
        assert "12 documents on 3 topics from 2 runs" in _finished_job(page, screenshot_dir, "track-8-pool-job")

        # an assessor invited with a set-password link, then assigned
        page.goto(f"{stack.url}/console/people/")
        page.get_by_label("Username").fill("ada")
        page.get_by_role("button", name="Create the account").click()
        link = page.get_by_label("Set-password link").input_value()
        _shot(page, screenshot_dir, "track-9-people")
        page.goto(f"{stack.url}/judge/organize/garden/assign/")
        page.get_by_label("ada").check()
        page.get_by_role("button", name="Assign").click()
        expect(page.locator("main")).to_contain_text("Assigned 12 documents")

        # the assessor chooses a password with the link and judges
        assessor = browser.new_context(viewport={"width": 390, "height": 844})
        mobile = assessor.new_page()
        mobile.set_default_timeout(20_000)
        accept_invitation(mobile, link, "ada", "ada-judges-well-7")
        mobile.goto(f"{stack.url}/judge/next/")
        expect(mobile.locator("main")).to_contain_text("solar panels on roofs")
        for key in ("2", "0", "1"):
            before = mobile.url
            mobile.keyboard.press(key)
            mobile.wait_for_function("url => window.location.href !== url", arg=before)
        _shot(mobile, screenshot_dir, "track-10-assessor-390px")
        assessor.close()

        # results: the run that did not contribute is flagged; the qrels hold the three judgments
        # the board is computed by the db_worker: until it is stored the page says so and reloads itself
        page.goto(f"{stack.url}/collections/garden/leaderboard/")
        expect(page.locator("#board-computing")).to_have_count(0, timeout=60_000)
        expect(page.locator("table tbody tr").first).to_be_visible()
        rows = {row.split("\t")[1].split()[0]: row for row in page.locator("table tbody tr").all_inner_texts()
                if "\t" in row}
        assert set(rows) >= {"alpha", "beta", "gamma"}
        assert "no" in rows["gamma"].split("\t") and "yes" in rows["alpha"].split("\t")
        _shot(page, screenshot_dir, "track-11-leaderboard")
        page.goto(f"{stack.url}/collections/garden/downloads/")
        with page.expect_download() as download:
            page.get_by_role("link", name=re.compile("^Graded, adjudicated")).click()
        qrels = [line.split() for line in open(download.value.path()).read().splitlines()]
        assert len(qrels) == 3 and {q[0] for q in qrels} == {"1"} and sorted(q[3] for q in qrels) == ["0", "1", "2"]
        context.close()

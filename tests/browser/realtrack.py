"""The session of the real-size track test (``test_real_track.py``): the organizer's browser page over the
stack, the generated track, the timings and the memory after each step, and the console actions the steps
share (uploads followed to their job's page, invitations, CSV exports, the figures written down)."""

from __future__ import annotations

import csv
import io
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import expect

from tests.browser.realsize import MB, Track
from tests.browser.stack import Stack, log_in_at

ORGANIZER, PASSWORD = "boss", "organizer-pass-1"
SLUG = "realtrack"
#: the web worker's peak resident memory must stay under this (the issue's Done-when)
WEB_MEMORY_LIMIT = 300 * 1000 * 1000  # 300 MB (286 MiB), as the issue states it
JOB_TIMEOUT_MS = 300_000
#: how the CSV exports write a true flag
YES = ("yes", "True")
PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True, "device_scale_factor": 2}


@dataclass
class Session:
    stack: Stack
    page: object
    track: Track
    artifacts: Path
    console: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    #: the processes' peak memory (bytes) after each step
    memory: dict[str, dict[str, int]] = field(default_factory=dict)
    server_errors: list[str] = field(default_factory=list)
    #: the pool built from the submissions, and the runs it was built from
    pool: str = ""
    pooled: set[str] = field(default_factory=set)

    def listen(self, context) -> None:
        """Record every response of ``context``'s pages that answers 5xx."""
        context.on("response", lambda r: r.status >= 500 and self.server_errors.append(f"{r.status} {r.url}"))

    def shot(self, name: str, full_page: bool = True) -> None:
        self.page.screenshot(path=str(self.artifacts / f"real-{name}.png"), full_page=full_page)

    def timed(self, name: str, started: float) -> float:
        self.timings[name] = time.monotonic() - started
        return self.timings[name]

    def measure(self, after: str) -> None:
        self.memory[after] = self.stack.peak_memory()


def organizer_session(browser, stack: Stack, track: Track, artifacts: Path) -> Session:
    context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(30_000)
    session = Session(stack=stack, page=page, track=track, artifacts=artifacts)
    session.listen(context)
    log_in_at(page, stack.url, ORGANIZER, PASSWORD)
    expect(page.get_by_role("link", name="New collection")).to_be_visible()
    session.measure("logging in")
    return session


def both_widths(s: Session, name: str, page=None) -> None:
    """A full-page screenshot of the page at 1280 px and at 390 px (then back to 1280 px)."""
    page = page or s.page
    for width, height in ((1280, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(s.artifacts / f"real-{name}-{width}.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})


def submit_upload(s: Session, kind: str, paths: list[Path], manifest: Path | None = None, shot: str = "") -> None:
    """Choose ``paths`` (and a manifest) in the console's ``kind`` form and send them in one request (the
    page sends it in the background with a progress bar); time it to the job's page."""
    s.page.goto(f"{s.console}upload/#{kind}")
    form = s.page.locator(f"form#{kind}")
    form.locator(f"input[name={kind}-files]").set_input_files([str(p) for p in paths])
    if manifest is not None:
        form.get_by_label("Manifest").set_input_files(str(manifest))
    if shot:
        expect(form.locator(".file-count")).to_contain_text(f"{len(paths) + (manifest is not None)} file")
        both_widths(s, shot)
    started = time.monotonic()
    with s.page.expect_response(lambda r: r.request.method == "POST" and r.url.startswith(f"{s.console}upload/"),
                                timeout=JOB_TIMEOUT_MS) as posted:
        form.get_by_role("button", name=re.compile("^Upload")).click()
    try:
        assert posted.value.status < 400, f"the upload answered {posted.value.status}"
        s.page.wait_for_url(re.compile(r"/jobs/\d+/(#.*)?$"), timeout=JOB_TIMEOUT_MS)
    except Exception as exc:
        s.shot(f"{kind}-not-a-job")
        raise AssertionError(f"{exc}: {s.page.url}: {s.page.inner_text('body')[:1500]}") from None
    s.timed(f"upload of {kind}{' (archive)' if paths[0].name.endswith('.tar.gz') else ''}", started)


def job_report(s: Session, name: str) -> str:
    """Wait on the job's page (it polls the worker's progress) until the job ends; time it."""
    started = time.monotonic()
    expect(s.page.locator("#job-status")).to_contain_text(re.compile("Done|Failed"), timeout=JOB_TIMEOUT_MS)
    s.timed(f"import of {name}", started)
    s.shot(f"{name}-job")
    return s.page.inner_text("#job-status")


def create_collection(s: Session, slug: str = SLUG, name: str = "Real-size track") -> None:
    s.page.goto(s.stack.url)
    s.page.get_by_role("link", name="New collection").click()
    s.page.get_by_label("Slug").fill(slug)
    s.page.get_by_label("Name").fill(name)
    s.page.get_by_role("button", name="Create the collection").click()
    expect(s.page.locator("h1")).to_contain_text(name)
    s.console = s.page.url


def upload_topics(s: Session) -> None:
    submit_upload(s, "topics", [s.track.topics])
    assert "topics.tsv: 30 topics added" in job_report(s, "topics")


def invite(s: Session, username: str, participant: bool = False) -> str:
    s.page.goto(f"{s.stack.url}/console/people/")
    s.page.get_by_label("Username").fill(username)
    if participant:
        s.page.get_by_label("Assessor").uncheck()
        s.page.get_by_label(re.compile("Participant")).check()
    s.page.get_by_role("button", name="Create the account").click()
    return s.page.get_by_label("Set-password link").input_value()


def csv_rows(s: Session, path: str) -> list[dict[str, str]]:
    response = s.page.request.get(f"{s.stack.url}{path}")
    assert response.status == 200, (path, response.status)
    return list(csv.DictReader(io.StringIO(response.text())))


def record_figures(s: Session) -> dict[str, int]:
    """The processes' peak memory (read while they run) and every timing, printed and written down."""
    peaks = s.stack.peak_memory()

    def mib(step: str, process: str) -> str:
        return f"{s.memory[step][process] / 2**20:.0f}"
    database = "PostgreSQL" if s.stack.env["DATABASE_URL"].startswith("postgres") else "SQLite"
    lines = [f"database: {database}; web server: gunicorn, 1 sync worker, DEBUG=0",
             f"runs: {len(s.track.runs)} files, {len({r.team for r in s.track.runs})} teams, "
             f"{s.track.run_bytes / MB:.1f} MB in one upload; as one .tar.gz "
             f"{s.track.archive.stat().st_size / MB:.1f} MB",
             f"documents: {s.track.num_documents:,} in {s.track.documents.stat().st_size / MB:.1f} MB (TREC SGML)",
             f"web worker peak memory (VmHWM): {peaks['web'] / 2**20:.0f} MiB ("
             + ", ".join(f"after {step} {mib(step, 'web')}" for step in s.memory) + ")",
             f"db_worker peak memory (VmHWM): {peaks['db_worker'] / 2**20:.0f} MiB ("
             + ", ".join(f"after {step} {mib(step, 'db_worker')}" for step in s.memory) + ")",
             f"static files from gunicorn at DEBUG=0: HTTP {s.stack.status_of('/static/workbench/jobs.js')}",
             f"responses 5xx over the session: {len(s.server_errors)}",
             *(f"{name}: {seconds:.1f} s" for name, seconds in s.timings.items())]
    (s.artifacts / f"real-track-memory{'-postgresql' if database == 'PostgreSQL' else ''}.txt").write_text(
        "\n".join(lines) + "\n")
    print("\n" + "\n".join(lines))
    return peaks

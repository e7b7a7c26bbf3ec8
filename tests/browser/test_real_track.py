"""A track of real size through the browser, as deployed: gunicorn (one sync worker, DEBUG=0, static files
served by the workbench itself) and a ``db_worker`` over SQLite (PostgreSQL in ``make test-postgres``), driven
from Chromium.

The track is generated in the test (``tests/browser/realsize.py``): 30 topics, 150 run files of 40 teams
(over 100 MB) with the organizer's manifest, and a 300 MB TREC SGML documents file. In order:

1. the organizer creates the collection, uploads the topics, then the 150 run files in ONE request with the
   manifest: the runs page shows 40 teams and every run's team, priority, contribution and type;
2. the same runs as ONE ``.tar.gz`` with the manifest into a second collection: 150 runs, the same teams;
3. the documents file (300 MB);
4. the participation page: pooled runs per team 2 at depth 100 (a real track pools at 1000 or more; 100
   keeps the pool at about 1,600 documents a topic), "Pool from the submissions" previews each team's two
   first runs by priority for a NEW pool, builds it; the pool page and the leaderboard agree on which
   runs contributed;
5. an assessor invited on the People page and assigned two topics judges on a phone (390x844, touch): the
   grade buttons lie inside the first screen each time and the dashboard counts the judgments;
6. a participant of a team limited to one run downloads the topics (30), submits a run and finds the form
   closed at the limit; a POST over the limit made by hand is refused too.

No response answers 5xx over the session, and the web worker's peak memory (VmHWM) stays under 300 MB
through the uploads (they stream to disk, whatever their size) and over the whole session (the pool preview
reads only what it shows; the leaderboard reads the stored board). Each step is timed; the figures go to
``test-artifacts/real-track-memory.txt`` and the screenshots (390 and 1280 px) to ``test-artifacts/real-*.png``.
"""

from __future__ import annotations

import re
import shutil
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.browser.realsize import MB, POOL_DEPTH, Track, generate_track, write_documents
from tests.browser.realtrack import (
    JOB_TIMEOUT_MS,
    ORGANIZER,
    PASSWORD,
    PHONE,
    SLUG,
    WEB_MEMORY_LIMIT,
    YES,
    Session,
    both_widths,
    create_collection,
    csv_rows,
    invite,
    job_report,
    organizer_session,
    record_figures,
    submit_upload,
    upload_topics,
)
from tests.browser.stack import accept_invitation, running_stack

pytestmark = [pytest.mark.browser, pytest.mark.track, pytest.mark.slow]

def _check_runs_page(s: Session) -> None:
    """The runs page names 40 teams, and every run has the manifest's team, priority, type and contribution."""
    s.page.goto(f"{s.console}runs/")
    assert "150 runs of 40 teams." in s.page.inner_text("main"), s.page.inner_text("main")[:500]
    shown = {}
    for number in (1, 2):  # 100 runs a page
        s.page.goto(f"{s.console}runs/?r-page={number}")
        for cells in s.page.locator("table tbody tr").evaluate_all(
                "rows => rows.map(r => [...r.cells].map(c => c.innerText.trim()))"):
            shown[cells[1]] = cells[2:6]  # tag: team, contributes, priority, type
    expected = {r.tag: r for r in s.track.runs}
    assert set(shown) == set(expected), sorted(set(shown) ^ set(expected))[:5]
    for tag, (team, _, priority, run_type) in shown.items():
        run = expected[tag]
        assert (team, priority, run_type.lower()) == (run.team, str(run.priority), run.run_type), (tag, shown[tag])
    offered = {shown[r.tag][1] for r in s.track.runs if r.priority < 5}
    withheld = {shown[r.tag][1] for r in s.track.runs if r.priority == 5}
    assert len(offered) == 1 and len(withheld) == 1 and offered != withheld, (offered, withheld)


def upload_runs_in_one_request(s: Session) -> None:
    """Every run file chosen at once in the runs form with the manifest: one request of over 100 MB, one job.
    The job's page shows a summary and the first lines, the rest folded."""
    runs = s.track.runs
    submit_upload(s, "runs", [r.path for r in runs], manifest=s.track.manifest, shot="1-upload-page")
    report = job_report(s, "runs")
    assert "Done" in report, report
    assert "150 runs: the first 10 below" in report, report[:1500]
    folded = s.page.locator("#job-status details.more-lines").first
    expect(folded.locator("summary")).to_have_text("The other 140")
    lines = {line.split(":")[0]: line for line in s.page.locator("#job-status ul.result li").all_text_contents()}
    missing = [(r.tag, lines.get(f"run {r.tag}")) for r in runs if not lines.get(f"run {r.tag}", "").startswith(
        f"run {r.tag}: 30,000 lines on 30 topics (") or f"team {r.team}, priority {r.priority}" not in lines[f"run {r.tag}"]]
    assert len(lines) == 150 and not missing, (len(lines), missing[:3])
    assert s.page.evaluate("document.documentElement.scrollHeight") < 1400, "the job page of 150 files is short"
    both_widths(s, "2-job-page")
    folded.locator("summary").click()
    expect(folded.locator("li").last).to_be_visible()
    started = time.monotonic()
    _check_runs_page(s)
    s.timed("checking the runs page (2 pages)", started)
    both_widths(s, "3-runs-page")
    s.measure("the runs")


def upload_runs_as_one_archive(s: Session) -> None:
    """The same 150 runs as one .tar.gz with the manifest, into a second collection: the same runs and teams."""
    console = s.console
    create_collection(s, f"{SLUG}-tar", "Real-size track (archive)")
    upload_topics(s)
    submit_upload(s, "runs", [s.track.archive], manifest=s.track.manifest)
    report = job_report(s, "runs-archive")
    assert "Done" in report and "150 runs: the first 10 below" in report, report[:1500]
    assert "runs.tar.gz:runs/" in s.page.inner_text("main") or "runs.tar.gz" in s.page.inner_text("main")
    _check_runs_page(s)
    s.console = console
    s.measure("the archive")


def upload_documents(s: Session) -> None:
    submit_upload(s, "documents", [s.track.documents])
    report = job_report(s, "documents")
    assert f"{s.track.num_documents} documents added" in report, report
    s.page.goto(s.console)
    assert re.search(rf"\b{s.track.num_documents}\s+documents\b", s.page.inner_text("main"))
    s.measure("the documents")


def pool_from_submissions(s: Session, per_team: int = 2, depth: int = POOL_DEPTH) -> None:
    """The track pools each team's ``per_team`` first runs by priority; the link opens the pool form for a
    new pool; the preview lists those runs; the build's job ends Done; the pool page agrees."""
    page = s.page
    page.goto(f"{s.console.rstrip('/')}/participation/")
    page.get_by_label(re.compile("^Open for submissions")).check()
    page.get_by_label(re.compile("^Deadline")).fill((datetime.now(UTC) + timedelta(days=7)).strftime("%Y-%m-%dT%H:%M"))
    page.get_by_label(re.compile("^Max runs per team")).fill("5")
    page.get_by_label(re.compile("^Pooled runs per team")).fill(str(per_team))
    page.get_by_label(re.compile("^Depth")).fill(str(depth))
    page.get_by_role("button", name="Save the track").click()
    expect(page.locator("main")).to_contain_text("Track settings saved.")
    page.get_by_role("link", name="Pool from the submissions").click()
    name = page.get_by_label(re.compile("^Name")).input_value()
    assert page.get_by_label(re.compile("^Runs per team")).input_value() == str(per_team)
    assert page.get_by_label(re.compile("^Depth:?$")).input_value() == str(depth)
    started = time.monotonic()
    page.get_by_role("button", name="Preview the size per topic").click()
    page.wait_for_load_state()
    s.timed("pool preview", started)
    s.measure("the pool preview")
    preview = page.locator("#preview").inner_text()
    offered = {team: [r for r in runs if r.priority < 5] for team, runs in s.track.teams.items()}
    pooled = [r.tag for runs in offered.values() for r in runs[:per_team]]
    assert f"A new pool named {name}" in preview, preview[:800]
    assert f"over {len(pooled)} runs of the {sum(map(len, offered.values()))} offered" in preview, preview[:800]
    for team, runs in offered.items():
        if len(runs) >= 2:
            assert f"{team} ({per_team} of {len(runs)})" in preview, (team, preview[:800])
    both_widths(s, "4-pool-form-preview")
    started = time.monotonic()
    page.get_by_role("button", name="Build the pool").click()
    page.wait_for_url(re.compile(r"/jobs/\d+/(#.*)?$"))
    report = job_report(s, "pool")
    assert "Done" in report and f"from {len(pooled)} runs of the" in report, report[:1500]
    s.timings["building the pool"] = time.monotonic() - started
    s.pool, s.pooled = name, set(pooled)
    s.measure("the pool build")
    rows = csv_rows(s, f"/collections/{s.console.rstrip('/').split('/')[-1]}/pool/?name={name}&_export=csv&_table=c-")
    contributed = {r["Run"]: r for r in rows}
    column = next(k for k in rows[0] if k.startswith("Contributed"))
    assert {t for t, r in contributed.items() if r[column] in YES} == s.pooled, rows[0]
    s.measure("the pool")


def leaderboard_agrees(s: Session) -> None:
    """The leaderboard says "pooled" of exactly the runs the pool page says contributed: a team's third run not."""
    started = time.monotonic()
    s.page.goto(f"{s.stack.url}/collections/{SLUG}/leaderboard/")
    # the board (every run scored once per collection version) is computed by the db_worker: its CSV answers
    # 503 with Retry-After until then
    path = f"/collections/{SLUG}/leaderboard/?_export=csv"
    deadline = time.monotonic() + 180
    while s.page.request.get(f"{s.stack.url}{path}").status == 503 and time.monotonic() < deadline:
        time.sleep(1)
    s.timed("the leaderboard (its board computed)", started)
    s.page.goto(f"{s.stack.url}/collections/{SLUG}/leaderboard/")
    rows = csv_rows(s, path)
    tag = next(k for k in rows[0] if k.lower() in ("run", "tag"))
    flag = next(k for k in rows[0] if k.lower() in ("pooled", "contributed", "contributed to the pool"))
    shown = {r[tag]: r[flag] for r in rows}
    assert {t for t, v in shown.items() if v in YES} == s.pooled, rows[0]
    third = next(runs[2] for runs in s.track.teams.values() if len(runs) >= 3)
    assert shown[third.tag] not in YES and third.tag not in s.pooled
    s.shot("6-leaderboard")
    s.measure("the leaderboard")


def assessor_on_a_phone(s: Session, browser, judgments: int = 4) -> None:
    """An assessor invited on the People page, assigned two topics of the new pool, judges on a phone."""
    link = invite(s, "ada")
    page = s.page
    page.goto(f"{s.stack.url}/judge/organize/{SLUG}/assign/")
    pool = page.get_by_label(re.compile("^Pool"))
    pool.select_option(label=next(o for o in pool.locator("option").all_inner_texts() if s.pool in o))
    page.get_by_label("ada").check()
    topics = page.get_by_label(re.compile("^Topics"))
    topics.select_option(topics.locator("option").evaluate_all("os => os.slice(0, 2).map(o => o.value)"))
    page.get_by_role("button", name="Assign").click()
    expect(page.locator("main")).to_contain_text("Assigned")
    assert "have no text" not in page.inner_text("main")  # the documents file holds every pooled document

    context = browser.new_context(**PHONE)
    phone = context.new_page()
    phone.set_default_timeout(30_000)
    s.listen(context)
    accept_invitation(phone, link, "ada", "ada-judges-well-7")
    phone.goto(f"{s.stack.url}/judge/next/")
    for n in range(judgments):
        expect(phone.locator("#doc-text")).not_to_be_empty()
        buttons = phone.locator(".grades button[name=grade]").all()
        assert len(buttons) >= 2
        for button in buttons:
            box = button.bounding_box()
            assert box and box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= 390 \
                and box["y"] + box["height"] <= 844, (n, button.inner_text(), box)
        if n == 0:
            phone.screenshot(path=str(s.artifacts / "real-5-judging-390.png"))
        label = phone.locator("#doc-label").inner_text()
        buttons[n % len(buttons)].tap()
        expect(phone.locator("#doc-label")).not_to_have_text(label)
    phone.set_viewport_size({"width": 1280, "height": 900})
    phone.screenshot(path=str(s.artifacts / "real-5-judging-1280.png"))
    context.close()
    page.goto(f"{s.stack.url}/judge/organize/{SLUG}/")
    expect(page.locator("main")).to_contain_text(re.compile(rf"ada\s+{judgments}\s+\d+"))  # judged, assigned
    s.shot("5-dashboard")
    s.measure("judging")


def participant_at_the_limit(s: Session, browser) -> None:
    """A team limited to one run: its member gets the 30 topics, submits one run, finds the form closed,
    and a POST over the limit is refused."""
    link = invite(s, "pia", participant=True)
    page = s.page
    page.goto(f"{s.console.rstrip('/')}/participation/")
    page.get_by_label(re.compile("^Max runs per team")).fill("1")
    page.get_by_label(re.compile("^Pooled runs per team")).fill("1")  # no more than a team may submit
    page.get_by_role("button", name="Save the track").click()
    expect(page.locator("main")).to_contain_text("Track settings saved.")
    page.get_by_label(re.compile("^Name:?$")).fill("newlab")
    page.get_by_label(re.compile("^Members")).fill("pia")
    page.get_by_role("button", name="Add the team").click()
    expect(page.locator("main")).to_contain_text("Team 'newlab' added")

    context = browser.new_context(viewport={"width": 390, "height": 844}, accept_downloads=True)
    phone = context.new_page()
    phone.set_default_timeout(30_000)
    s.listen(context)
    accept_invitation(phone, link, "pia", "pia-submits-7")
    team_page = f"{s.stack.url}/participate/{SLUG}/"
    phone.goto(team_page)
    expect(phone.locator("main")).to_contain_text("0 of 1 run submitted")
    with phone.expect_download() as download:
        phone.get_by_role("link", name=re.compile("^TREC topics")).click()
    assert Path(download.value.path()).read_text().count("<top>") == 30
    with phone.expect_download() as download:
        phone.get_by_role("link", name=re.compile("^TSV")).click()
    assert sorted(line.split("\t")[0] for line in Path(download.value.path()).read_text().splitlines()) == sorted(
        str(q) for q in range(1, 31))

    run = s.track.folder / "newlab-1.run"
    docs = {qid: sorted(found)[:10] for qid, found in s.track.pooled.items()}
    run.write_text("".join(f"{qid} Q0 {d} {rank} {20 - rank} newlab-1\n" for qid, found in docs.items()
                           for rank, d in enumerate(found, 1)))
    phone.get_by_label(re.compile("^File")).set_input_files(str(run))
    phone.get_by_label(re.compile("^Description")).fill("BM25, titles only")
    phone.get_by_label(re.compile("^Priority")).fill("1")
    phone.get_by_role("button", name="Submit").click()
    phone.wait_for_url(re.compile(rf"/participate/{SLUG}/submissions/\d+/$"))
    expect(phone.locator("#receipt")).to_contain_text("Accepted as run newlab-1", timeout=JOB_TIMEOUT_MS)

    phone.goto(team_page)
    expect(phone.locator("main")).to_contain_text("1 of 1 run submitted")
    expect(phone.locator("#limit-reached")).to_contain_text("the track's limit: no new run can be sent")
    assert phone.get_by_role("button", name="Submit").count() == 0
    both_widths(s, "7-team-page", phone)
    token = phone.locator("input[name=csrfmiddlewaretoken]").first.input_value()
    refused = phone.request.post(team_page, multipart={
        "csrfmiddlewaretoken": token, "description": "one too many", "priority": "2", "run_type": "automatic",
        "file": {"name": "newlab-2.run", "mimeType": "text/plain",
                 "buffer": run.read_bytes().replace(b"newlab-1", b"newlab-2")}})
    assert refused.status == 400 and "limit" in refused.text(), (refused.status, refused.text()[:500])
    phone.goto(team_page)
    expect(phone.locator("main")).to_contain_text("1 of 1 run submitted")
    context.close()
    s.measure("the participant")


@pytest.fixture
def big_tmp(tmp_path):
    """``tmp_path``, emptied afterwards of the generated files, the database and the uploads (about 1 GB,
    which pytest would otherwise keep for three runs); ``stack.log`` stays for a failure's post-mortem."""
    yield tmp_path
    for path in tmp_path.iterdir():
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        elif path.suffix in (".sqlite3", ".sqlite3-wal", ".sqlite3-shm", ".sgml"):
            path.unlink()


def test_an_organizer_loads_a_track_of_real_size_through_the_console(browser, big_tmp, screenshot_dir):
    started = time.monotonic()
    track = generate_track(big_tmp / "track", archive=True)
    generated = time.monotonic() - started
    assert len(track.runs) == 150 and len(track.teams) == 40 and track.run_bytes >= 100 * MB
    assert track.documents.stat().st_size >= 300 * MB
    with running_stack(big_tmp, organizer=ORGANIZER, password=PASSWORD, server="gunicorn") as stack:
        assert stack.status_of("/static/workbench/jobs.js") == 200  # gunicorn serves the static files itself
        s = organizer_session(browser, stack, track, screenshot_dir)
        s.timings["generating the track"] = generated
        for name, step in (("collection and topics", lambda: (create_collection(s), upload_topics(s))),
                           ("1. runs in one request", lambda: upload_runs_in_one_request(s)),
                           ("2. runs as one archive", lambda: upload_runs_as_one_archive(s)),
                           ("3. documents", lambda: upload_documents(s)),
                           ("4. pool from the submissions", lambda: pool_from_submissions(s)),
                           ("5. assessor on a phone", lambda: assessor_on_a_phone(s, browser)),
                           ("5b. the leaderboard agrees with the pool page", lambda: leaderboard_agrees(s)),
                           ("6. participant at the limit", lambda: participant_at_the_limit(s, browser))):
            begun = time.monotonic()
            step()
            s.timings[f"step {name}"] = time.monotonic() - begun
        peaks = record_figures(s)
    assert not s.server_errors, s.server_errors
    # every upload (150 runs in one request, the archive, 300 MB of documents) streams to disk: the web
    # worker's peak through them (VmHWM only grows: read after the documents) stays under the limit
    uploads = s.memory["the documents"]["web"]
    assert uploads < WEB_MEMORY_LIMIT, f"the web worker peaked at {uploads / 2**20:.0f} MiB through the uploads"
    assert s.memory["the pool preview"]["web"] - uploads < 120 * 2**20, "the pool preview reads runs whole again"
    # and over the whole session (the leaderboard reads the stored board; nothing scores runs in the request)
    assert peaks["web"] < WEB_MEMORY_LIMIT, (
        f"the web worker peaked at {peaks['web'] / 2**20:.0f} MiB over the session (see real-track-memory.txt)")


def test_an_upload_slower_than_gunicorns_timeout_arrives_with_threaded_workers(browser, big_tmp, screenshot_dir):
    """Over a real link a 300 MB upload takes longer than gunicorn's worker timeout (30 s by default): a
    sync worker is killed in the middle of reading it and the browser gets gunicorn's 500. A threaded
    worker (``--worker-class gthread``) keeps its heartbeat while a thread reads the body. Here the same
    at a smaller scale: a 12 MB documents file sent at 1 MB/s to a worker whose timeout is 4 s."""
    documents = big_tmp / "documents.sgml"
    count = write_documents(documents, set(), size=12 * MB)
    with running_stack(big_tmp, organizer=ORGANIZER, password=PASSWORD, server="gunicorn",
                       gunicorn_args=["--worker-class", "gthread", "--threads", "2", "--timeout", "4"]) as stack:
        s = organizer_session(browser, stack, Track(folder=big_tmp, documents=documents, num_documents=count),
                       screenshot_dir)
        create_collection(s)
        cdp = s.page.context.new_cdp_session(s.page)
        cdp.send("Network.enable")
        cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1,
                                                      "uploadThroughput": 1 * MB})
        upload_documents(s)
        assert s.timings["upload of documents"] > 8, s.timings  # the link was slow: twice the timeout at least
    assert not s.server_errors, s.server_errors

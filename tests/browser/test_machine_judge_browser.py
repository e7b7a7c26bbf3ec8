"""Issue 23 in the browser: an organizer runs the machine judge from the console, reads its agreement page,
routes the human queues, switches the leaderboard to human-over-machine, and a human assessor's queue starts
with the pair whose calibrated machine label is likeliest wrong. Screenshots go to test-artifacts/."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from playwright.sync_api import expect

from judging.machine.embedding import _model
from judging.models import MachineJudge
from judging.queueing import routing_gain
from tests import factories
from tests.browser.conftest import log_in
from tests.judging.machine_fixtures import TEXTS, machine_collection
from workbench.models import Job

pytestmark = pytest.mark.browser


@pytest.fixture
def track(transactional_db, tmp_path):
    ada = User.objects.create_user("ada", password="judge-me")
    collection, pool = machine_collection(assessor=ada)
    olga = User.objects.create_user("olga", password="organise-it")
    olga.groups.add(Group.objects.get_or_create(name="organizers")[0])
    for tag, ranking in (("crimeA", {"301": ["c1", "c2", "c3", "c4"], "302": ["p1", "p3"]}),
                         ("crimeB", {"301": ["c4", "c5", "c6", "c1"], "302": ["p3", "p4"]})):
        (tmp_path / tag).write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", collection.slug, str(tmp_path / tag), "--no-pool", stdout=StringIO())
    _model()  # loaded once, before the page asks for it
    return collection, pool


def test_an_organizer_runs_the_machine_judge_and_routes_a_human_queue(page, live_server, track, screenshot_dir):
    collection, pool = track
    log_in(page, live_server, "olga", "organise-it")
    page.goto(f"{live_server.url}/judge/organize/{collection.slug}/")
    page.get_by_role("link", name="Machine assessors").click()
    page.set_default_timeout(180_000)  # the job runs within the request here (tests run jobs at once)
    page.get_by_role("button", name="Run the machine judge").click()
    page.wait_for_load_state("load")
    page.set_default_timeout(10_000)
    expect(page.locator("main")).to_contain_text("10 pairs judged by embedding on pool main")
    page.screenshot(path=str(screenshot_dir / "machine-judge-job.png"), full_page=True)
    assert Job.objects.get(kind="machine judge").status == Job.Status.DONE

    page.goto(f"{live_server.url}/judge/organize/{collection.slug}/machine/")
    page.get_by_role("link", name="agreement with the humans").click()
    expect(page.locator("h1")).to_contain_text("Agreement of machine judge embedding")
    expect(page.locator("#machine-figures")).to_contain_text("Cohen's κ, relevant or not")
    page.screenshot(path=str(screenshot_dir / "machine-agreement.png"), full_page=True)

    page.goto(f"{live_server.url}/judge/organize/{collection.slug}/machine/")
    page.get_by_label("Random audit share").fill("0")
    page.get_by_role("button", name="Route the queues").click()
    expect(page.locator("body")).to_contain_text("1 human queue of pool main now start with what embedding")

    page.goto(f"{live_server.url}/collections/{collection.slug}/leaderboard/")
    page.get_by_label("Qrels").select_option("human-over-machine")
    page.get_by_role("button", name="Update").click()
    expect(page.locator("#machine-share")).to_contain_text("Qrels policy: human over machine")
    expect(page.locator("#machine-share")).to_contain_text("favour runs built with the same kind of model")
    page.screenshot(path=str(screenshot_dir / "leaderboard-human-over-machine.png"), full_page=True)
    page.get_by_role("button", name="Log out").click()

    # the router's expected gain: the chance the per-topic calibrated label is wrong, highest first
    gain = routing_gain(MachineJudge.objects.get(name="embedding"))
    topic = collection.topics.get(qid="301").pk
    least_sure = max(["c2", "c3", "c5", "c6"], key=lambda d: gain[(topic, d)])
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    expect(page.locator("main")).to_contain_text(TEXTS["301"][1][least_sure][:40])
    expect(page.locator("main")).not_to_contain_text("machine:")  # no trace of the machine for a human
    page.screenshot(path=str(screenshot_dir / "assessor-least-sure-first.png"), full_page=True)

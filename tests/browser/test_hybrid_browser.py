"""Issue 41 in the browser: an organizer uploads a machine judge's labels (a LARA probability CSV) on the
console, sees the imported machine assessor, routes a human queue by the expected gain of a human grade; the
assessor, on a phone, is first shown the document the router computes; the organizer compares the human and
the hybrid qrels and sees both rankings drawn. Screenshots at 390 and 1280 px go to test-artifacts/."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from playwright.sync_api import expect

from judging.models import Assignment, MachineJudge
from judging.queueing import route_order, routing_gain
from tests import factories
from tests.browser.conftest import log_in
from tests.judging.machine_fixtures import TEXTS, machine_collection

pytestmark = pytest.mark.browser

# LARA's probability CSV: the judge's label and its probability of relevance per pair; the humans' grades
# (c1 relevant, c4 not; topic 302 from the "nist" qrels below) are what the per-topic calibration learns from
LABELS = {"301": {"c1": 0.93, "c2": 0.81, "c3": 0.62, "c4": 0.08, "c5": 0.47, "c6": 0.03},
          "302": {"p1": 0.9, "p2": 0.35, "p3": 0.55, "p4": 0.1}}
NIST_302 = {"p1": 1, "p2": 1, "p3": 0, "p4": 0}
RUNS = {"alpha": {"301": ["c1", "c2", "c3", "c4"], "302": ["p1", "p2", "p3"]},
        "beta": {"301": ["c4", "c5", "c6", "c1"], "302": ["p3", "p4", "p1"]},
        "gamma": {"301": ["c3", "c5", "c1", "c2"], "302": ["p2", "p1", "p4"]},
        "delta": {"301": ["c6", "c4", "c2", "c5"], "302": ["p4", "p3", "p2"]}}


@pytest.fixture
def track(transactional_db, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    ada = User.objects.create_user("ada", password="judge-me")
    collection, pool = machine_collection(assessor=ada)
    olga = User.objects.create_user("olga", password="organise-it")
    olga.groups.add(Group.objects.get_or_create(name="organizers")[0])
    for tag, ranking in RUNS.items():
        (tmp_path / tag).write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", collection.slug, str(tmp_path / tag), "--no-pool", stdout=StringIO())
    (tmp_path / "nist").write_text("".join(f"302 0 {d} {g}\n" for d, g in NIST_302.items()))
    call_command("import_qrels", collection.slug, str(tmp_path / "nist"), "--assessor", "nist", stdout=StringIO())
    labels = tmp_path / "lara.csv"
    labels.write_text("topic_id,doc_id,annotation,prob_yes,prob_no\n" + "".join(
        f"{q},{d},{int(p >= 0.5)},{p},{1 - p:.2f}\n" for q, docs in LABELS.items() for d, p in docs.items()))
    return collection, labels


def test_imported_labels_route_the_queue_and_compare_with_the_humans(page, live_server, track, screenshot_dir):
    collection, labels = track
    log_in(page, live_server, "olga", "organise-it")
    page.goto(f"{live_server.url}/console/{collection.slug}/upload/#machine_labels")
    form = page.locator("form#machine_labels")
    form.locator("input[name=machine_labels-files]").set_input_files(str(labels))
    form.get_by_role("button", name=re.compile("Upload machine labels")).click()
    page.wait_for_url(re.compile(r"/jobs/\d+/$"))
    expect(page.locator("#job-status")).to_contain_text("Done", timeout=30_000)
    expect(page.locator("#job-status")).to_contain_text("lara.csv: 10 labels (annotation) on 2 topics as machine judge 'lara'")

    page.goto(f"{live_server.url}/judge/organize/{collection.slug}/machine/")
    expect(page.locator("main")).to_contain_text("lara (imported), assessor machine:mach:lara, 10 pairs judged")
    page.get_by_label("Random audit share").fill("0")
    page.get_by_role("button", name="Route the queues").click()
    expect(page.locator("body")).to_contain_text("1 human queue of pool main now start with what lara",
                                               timeout=60_000)  # the first fit imports SciPy and scikit-learn
    page.screenshot(path=str(screenshot_dir / "hybrid-machine-console-1280.png"), full_page=True)
    page.get_by_role("button", name="Log out").click()

    # what the router computes: the unjudged documents of ada's queue (c2, c3, c5, c6 in pool order), ordered by
    # the chance that lara's per-topic calibrated label is wrong, the least sure first
    assignment = Assignment.objects.get(assessor__username="ada")
    gain = routing_gain(MachineJudge.objects.get(name="lara"))
    unjudged = ["c2", "c3", "c5", "c6"]
    order = route_order({d: gain[(assignment.topic_id, d)] for d in unjudged}, unjudged, audit_share=0,
                        seed=assignment.pk)
    assert order[0] != "c2"  # the routed queue does not start where the pool's order did

    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, live_server, "ada", "judge-me")
    page.goto(f"{live_server.url}/judge/next/")
    page.wait_for_load_state("load")
    main = page.locator("main")
    expect(main).to_contain_text(TEXTS["301"][1][order[0]][:40])
    expect(main).not_to_contain_text(TEXTS["301"][1]["c2"][:40])  # the pool's first unjudged one waits
    expect(main).not_to_contain_text("machine:")  # no trace of the machine for a human
    assert page.evaluate("document.documentElement.scrollWidth") <= 391
    page.screenshot(path=str(screenshot_dir / "hybrid-assessor-queue-390.png"), full_page=True)
    page.get_by_role("button", name="Log out").click()

    log_in(page, live_server, "olga", "organise-it")
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900 if width > 400 else 844})
        page.goto(f"{live_server.url}/collections/{collection.slug}/leaderboard/")
        page.get_by_role("link", name="Compare qrels").click()
        page.select_option("#a", "human")
        page.select_option("#b", "hybrid")
        page.get_by_role("button", name="Compare").click()
        page.wait_for_load_state()
        chart = page.locator("svg.slope")
        expect(chart).to_have_count(1)
        assert chart.locator("line").count() == len(RUNS)  # every run joins its two ranks
        names = chart.locator("text").all_text_contents()
        assert all(any(n.endswith(f". {tag}") for n in names) for tag in RUNS)  # on both sides
        assert sum(n.endswith(". alpha") for n in names) == 2
        assert "Kendall" in page.inner_text("#ranking-agreement")
        box = chart.bounding_box()
        assert 300 < box["width"] <= width
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        page.screenshot(path=str(screenshot_dir / f"hybrid-compare-qrels-{width}.png"), full_page=True)

"""Answers judged in the browser (issue 42): an organizer uploads two answer runs and a nugget bank on the
console, sees the bank beside its segments, pools the answers and gives the topic to an assessor with
``build_answer_pools``; the assessor on a phone (390 x 844, touch) follows the answer link of their home page
and assigns every nugget of every answer with the three choices on the first screen, then at 1280 px revises
one with the keyboard.
Screenshots at 390 and 1280 px go to ``test-artifacts/answers-*.png``."""

from __future__ import annotations

import io
import json
import re

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from playwright.sync_api import expect

from answers.models import Answer, AnswerPool, AnswerTask, NuggetAssignment, NuggetBank
from judging.models import Judgment
from tests import factories
from tests.browser.conftest import log_in
from workbench.models import Document, Topic

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True, "device_scale_factor": 2}
SEGMENTS = {"s1": "The Salk vaccine, an inactivated polio vaccine, was licensed in 1955 after a large field trial.",
            "s2": "Poliomyelitis is caused by the poliovirus, which spreads by the faecal-oral route.",
            "s3": "The oral polio vaccine was developed by Albert Sabin and licensed in 1961."}
FIRST_SENTENCE = {"alpha": "Polio is caused by the poliovirus.", "beta": "Albert Sabin made an oral vaccine."}
CHOSEN = {"support": "Support", "not_support": "No support"}  # what the page says of the choice being revised
LONG = " ".join(f"Further detail {n} on the history of polio vaccination campaigns around the world." for n in range(30))


def _answer(run: str, sentences: list[tuple[str, list[int]]], references: list[str]) -> str:
    return json.dumps({"metadata": {"team_id": "team", "run_id": run, "topic_id": "301"},
                       "responses": [{"text": t, "citations": c} for t, c in sentences], "references": references})


@pytest.fixture
def people(transactional_db, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    collection = factories.collection_with_topics("rag")
    Topic.objects.filter(collection=collection, qid="301").update(title="polio vaccines")
    for docno, text in SEGMENTS.items():
        Document.objects.create(collection=collection, docno=docno, text=text, length=len(text.split()))
    organizer = User.objects.create_user("olga", password="organize-it")
    organizer.groups.add(Group.objects.get_or_create(name="organizers")[0])
    assessor = User.objects.create_user("ada", password="judge-me")
    topic = Topic.objects.get(collection=collection, qid="301")
    for docno in ("s1", "s2"):  # judged relevant: the bank page shows them beside the nuggets
        Judgment.objects.create(collection=collection, topic=topic, docno=docno, grade=1, assessor="ada", user=assessor)
    files = tmp_path / "files"
    files.mkdir()
    (files / "alpha.jsonl").write_text(_answer("alpha", [("Polio is caused by the poliovirus.", [0]),
                                                         ("Jonas Salk's vaccine was licensed in 1955. " + LONG, [1])],
                                               ["s2", "s1"]) + "\n")
    (files / "beta.jsonl").write_text(_answer("beta", [("Albert Sabin made an oral vaccine.", [0])], ["s3"]) + "\n")
    (files / "bank.jsonl").write_text(json.dumps({"qid": "301", "query": "polio vaccines", "nuggets": [
        {"text": "Polio is caused by the poliovirus", "importance": "vital"},
        {"text": "Salk's vaccine was licensed in 1955", "importance": "vital"},
        {"text": "Sabin developed an oral vaccine", "importance": "okay"}]}) + "\n")
    return collection, assessor, files


def _upload(page, live_server, kind: str, paths) -> None:
    page.goto(f"{live_server.url}/console/rag/upload/#{kind}")
    form = page.locator(f"form#{kind}")
    form.locator(f"input[name={kind}-files]").set_input_files([str(p) for p in paths])
    form.locator("button[type=submit]").click()
    page.wait_for_url(re.compile(r"/jobs/\d+/$"))
    expect(page.locator("#job-status")).to_contain_text("Done", timeout=30_000)


def _inside(box, width: int, height: int) -> bool:
    return box is not None and box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= width \
        and box["y"] + box["height"] <= height


def test_an_organizer_uploads_answers_and_a_bank_and_an_assessor_assigns_nuggets_on_a_phone(
        browser, page, live_server, people, screenshot_dir):
    collection, assessor, files = people
    log_in(page, live_server, "olga", "organize-it")
    _upload(page, live_server, "answers", [files / "alpha.jsonl", files / "beta.jsonl"])
    _upload(page, live_server, "nuggets", [files / "bank.jsonl"])
    assert Answer.objects.filter(run__collection=collection).count() == 2
    assert NuggetBank.objects.get(collection=collection).nuggets.count() == 3
    page.goto(f"{live_server.url}/answers/rag/banks/301/")
    expect(page.locator("textarea[name=text-0]")).to_have_value("Polio is caused by the poliovirus")
    expect(page.locator(".segments")).to_contain_text("faecal-oral route")
    page.screenshot(path=str(screenshot_dir / "answers-1-bank-1280.png"), full_page=True)

    # the organizer pools the answers for nugget assignment and gives topic 301 to the assessor
    out = io.StringIO()
    call_command("build_answer_pools", "rag", "--kind", "nugget", "--assessor", "ada", stdout=out)
    assert "answer pool 'nugget' (nugget): 2 added" in out.getvalue() and "1 topics given to ada" in out.getvalue()
    pool = AnswerPool.objects.get(collection=collection, kind="nugget")
    order = [i.answer.run.tag for i in pool.items.order_by("judging_order")]  # the pool's seeded shuffle
    assert sorted(order) == ["alpha", "beta"]
    assert AnswerTask.objects.get(pool=pool).assessor == assessor

    phone = browser.new_context(**PHONE)
    small = phone.new_page()
    small.set_default_timeout(10_000)
    log_in(small, live_server, "ada", "judge-me")
    small.goto(f"{live_server.url}/")  # the home page (the assessor's queue) links the answer tasks
    small.get_by_role("link", name=re.compile("^Nugget assignment")).click()
    small.wait_for_url(re.compile(r"/answers/rag/judge/$"))
    small.get_by_role("link", name="Judge").click()
    expect(small.locator("#nugget")).to_contain_text("Polio is caused by the poliovirus")
    expect(small.locator("#answer-text")).to_contain_text(FIRST_SENTENCE[order[0]])
    assert "alpha" not in small.content() and "beta" not in small.content()  # blind to systems
    small.screenshot(path=str(screenshot_dir / "answers-2-assign-390.png"))
    choices = ["support", "partial_support", "not_support", "not_support", "not_support", "support"]
    for n, value in enumerate(choices):
        buttons = small.locator("#judge-form button[name=assignment]").all()
        assert len(buttons) == 3
        for button in buttons:  # the three choices in the first screen, without scrolling
            assert _inside(button.bounding_box(), 390, 844), button.inner_text()
        assert small.evaluate("document.documentElement.scrollWidth") <= 390
        small.locator(f"#judge-form button[value={value}]").tap()
        expect(small.locator("#progress-text")).to_contain_text(f"{n + 1} of 6 assigned")
    expect(small.locator(".answer")).to_contain_text("every nugget of every answer of this topic is assigned")
    small.screenshot(path=str(screenshot_dir / "answers-3-done-390.png"))
    small.goto(f"{live_server.url}/answers/rag/banks/301/")  # the assessor may edit the topic's bank too
    expect(small.locator("textarea[name=text-0]")).to_have_value("Polio is caused by the poliovirus")
    assert small.evaluate("document.documentElement.scrollWidth") <= 390
    small.screenshot(path=str(screenshot_dir / "answers-5-bank-390.png"), full_page=True)
    phone.close()
    assert [a.assignment for a in NuggetAssignment.objects.order_by("id")] == choices

    # at 1280 px with the keyboard: revise the first pair with "2"
    desk = browser.new_context(viewport={"width": 1280, "height": 900})
    wide = desk.new_page()
    log_in(wide, live_server, "ada", "judge-me")
    first = NuggetAssignment.objects.filter(answer__run__tag="alpha").order_by("id").first()  # alpha cites s2
    wide.goto(f"{live_server.url}/answers/rag/judge/301/nuggets/?answer={first.answer_id}&nugget={first.nugget_id}")
    expect(wide.locator(".current-note")).to_contain_text(CHOSEN[first.assignment])
    wide.locator("details summary").first.click()  # a cited segment's text, on demand
    expect(wide.locator("#answer-text details").first).to_contain_text("faecal-oral route")
    wide.screenshot(path=str(screenshot_dir / "answers-4-assign-1280.png"), full_page=True)
    wide.keyboard.press("2")
    expect(wide.locator(".answer")).to_contain_text("every nugget of every answer of this topic is assigned")
    revised = NuggetAssignment.objects.order_by("id").last()
    assert revised.previous == first and revised.assignment == "partial_support"
    desk.close()

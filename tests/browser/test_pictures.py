"""Pictures where people look, at 390 and 1280 px, on a generated track of 143 runs: the significance heatmap,
the budget chart, the near-duplicate comparison with its differing words marked, and the leaderboard whose run
column stays put while the table scrolls. Screenshots go to test-artifacts/ for review."""

from __future__ import annotations

from io import StringIO

import numpy as np
import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from playwright.sync_api import expect

from evaluation.heatmap import CLASSES, SELF
from evaluation.tasks import request_board
from tests import factories
from tests.browser.conftest import log_in
from workbench.models import Document, DuplicateClass, DuplicateMember, Topic

pytestmark = pytest.mark.browser

RUNS, TEAMS, TOPICS, DEPTH = 143, 48, 12, 30
UNPOOLED = 46  # a strong team whose runs did not contribute to the pool: flagged near the top of the board
WIDTHS = (1280, 390)


@pytest.fixture
def track(transactional_db, tmp_path):
    """143 runs of 48 teams over 12 topics, of graded quality (so that some pairs differ significantly), a depth-10
    pool judged in full, one team's runs outside the pool (flagged), one near-duplicate class."""
    collection = factories.collection_with_topics()
    Topic.objects.bulk_create(Topic(collection=collection, qid=str(q), title=f"Topic {q}") for q in range(304, 304 + TOPICS - 3))
    qids = list(collection.topics.values_list("qid", flat=True))
    rng = np.random.default_rng(40)
    relevant = {q: rng.random(80) < 0.3 for q in qids}  # each topic's relevant candidates
    for team in range(TEAMS):
        paths = []
        for run in range(team, RUNS, TEAMS):
            skill = run / RUNS
            tag = f"team{team:02d}-{'bm25' if run % 2 else 'dense'}-rerank{run:03d}"
            ranking = {q: [f"D{q}-{i:03d}" for i in np.argsort(rng.normal(0, 1, 80) - 2 * skill * relevant[q])[:DEPTH]]
                       for q in qids}
            paths.append(tmp_path / f"{tag}.run")
            paths[-1].write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", "robust", *map(str, paths), "--team", f"team{team:02d}",
                     *(["--no-pool"] if team == UNPOOLED else []), stdout=StringIO())
    call_command("build_pool", "robust", "--depth", "10", "--seed", "1", stdout=StringIO())
    pooled = collection.pools.get().entries.values_list("topic__qid", "docno")
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"{q} 0 {d} {int(relevant[q][int(d.rsplit('-', 1)[1])])}\n" for q, d in pooled))
    call_command("import_qrels", "robust", str(qrels), "--assessor", "nist", stdout=StringIO())
    text = ("The Hubble Space Telescope was launched in 1990 and its mirror flaw was corrected in 1993 by a "
            "servicing mission of the shuttle Endeavour; since then it has observed distant galaxies. ")
    Document.objects.bulk_create([
        Document(collection=collection, docno="D303-001", title="Hubble repaired", text=text * 3),
        Document(collection=collection, docno="D303-002", title="Hubble repaired",
                 text=(text * 3).replace("1993", "1994").replace("Endeavour", "Discovery"))])
    klass = DuplicateClass.objects.create(collection=collection, representative="D303-001", similarity=0.91,
                                          threshold=0.8, shingle=5)
    DuplicateMember.objects.create(duplicate_class=klass, collection=collection, docno="D303-002", similarity=0.91)
    request_board(collection)  # the board job a deployment runs on each change (off in tests): the pages read it
    user = User.objects.create_user("olga", password="organize")
    user.groups.add(Group.objects.get_or_create(name="organizers")[0])
    return {"collection": collection, "class": klass}


def _inside(inner: dict, outer: dict, slack: float = 1.0) -> bool:
    return (inner["x"] >= outer["x"] - slack and inner["y"] >= outer["y"] - slack
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack)


def _leaderboard(page, base: str, width: int, shoot) -> list[str]:
    """The first column stays at the scroll box's left edge while the table scrolls sideways; a flagged run
    carries its flag beside its name; at 1280 px nothing of the table hides behind a scroll; on a phone the
    options are folded. Returns the runs in the board's order."""
    page.goto(f"{base}/leaderboard/")
    shoot("leaderboard")
    table = page.locator("table.leaderboard")
    rows = table.locator("tbody tr")
    assert rows.count() == 100 and "143" not in page.locator("h1").inner_text()
    flagged = page.locator("tr.flagged").first
    name, flag = flagged.locator("td:nth-child(2) a").bounding_box(), flagged.locator("td:nth-child(2) .flag").bounding_box()
    assert 0 < flag["x"] - (name["x"] + name["width"]) < 20 and abs(flag["y"] - name["y"]) < 8  # on the name's line
    box = page.locator("div:has(> table.leaderboard)")
    options = page.locator("details#options")
    if width >= 1280:
        assert options.get_attribute("open") is not None and page.locator("#m").is_visible()
        assert _inside(page.locator("table.leaderboard thead th").last.bounding_box(), {"x": 0, "y": 0, "width": width, "height": 1e6})
        widths = box.evaluate("e => [e.scrollWidth, e.clientWidth]")
        assert widths[0] <= widths[1] + 1, widths  # no inner scroll: every column in view
    else:
        assert options.get_attribute("open") is None and not page.locator("#m").is_visible()
        scroller = table if table.evaluate("t => t.scrollWidth > t.clientWidth + 1") else box
        left = scroller.bounding_box()["x"]
        first = rows.first.locator("td:nth-child(2)")
        assert abs(first.bounding_box()["x"] - left) < 60
        scroller.evaluate("e => { e.scrollLeft = 400; }")
        assert scroller.evaluate("e => e.scrollLeft") > 0
        assert abs(first.bounding_box()["x"] - left) < 1  # sticky: the run's cell at the left edge, scrolled
        assert _inside(flagged.locator(".flag").bounding_box(), {"x": 0, "y": 0, "width": width, "height": 1e6})
    return [t.strip() for t in rows.locator("td:nth-child(2) a").all_inner_texts()]


#: the heatmap's pixels counted by colour (what the browser decodes from the picture it shows)
COLOURS = """image => new Promise(resolve => {
    const picture = new Image();
    picture.onload = () => {
        const canvas = document.createElement("canvas");
        canvas.width = picture.width; canvas.height = picture.height;
        const context = canvas.getContext("2d");
        context.drawImage(picture, 0, 0);
        const data = context.getImageData(0, 0, picture.width, picture.height).data, counts = {};
        for (let k = 0; k < data.length; k += 4) {
            const hex = "#" + [0, 1, 2].map(c => data[k + c].toString(16).padStart(2, "0")).join("");
            counts[hex] = (counts[hex] || 0) + 1;
        }
        resolve(counts);
    };
    picture.src = image.getAttribute("href");
})"""
BETTER, RAW_BETTER, _, RAW_WORSE, WORSE = (fill for _, fill, _ in CLASSES)


def _significance(page, base: str, width: int, shoot) -> None:
    page.goto(f"{base}/significance/")
    shoot("significance")
    heatmap = page.locator("svg.heatmap")
    cells = heatmap.locator("image.cells")
    assert (cells.get_attribute("width"), cells.get_attribute("height")) == (str(RUNS), str(RUNS))
    colours = cells.evaluate(COLOURS)  # one pixel a cell: every pair twice (each way round) and each run with itself
    assert sum(colours.values()) == RUNS * RUNS and colours[SELF] == RUNS
    assert colours[BETTER] == colours[WORSE] > 0 and colours[RAW_BETTER] == colours[RAW_WORSE]
    assert heatmap.locator("rect.group").count() > 0
    svg, frame = heatmap.bounding_box(), page.locator(".heatmap-frame").bounding_box()
    assert frame["x"] >= 0 and frame["x"] + frame["width"] <= width  # the frame fits the screen; the picture scrolls in it
    for label in (heatmap.locator("text.row").first, heatmap.locator("text.column").first, heatmap.locator("text.row").last):
        assert _inside(label.bounding_box(), svg)
    assert heatmap.locator("text.row").first.bounding_box()["height"] >= 7  # legible, not a grey smear
    cells.scroll_into_view_if_needed()
    image = cells.bounding_box()
    page.mouse.move(image["x"] + 2.5 * image["width"] / RUNS, image["y"] + 0.5 * image["height"] / RUNS)
    rows = heatmap.locator("text.row").all_text_contents()
    expect(page.locator("#heatmap-pair")).to_contain_text(f"{rows[0]} against {rows[2]}: ")  # the pair, named
    assert page.locator("#heatmap-pair").inner_text().split(": ", 1)[1] in [label for _, _, label in CLASSES]
    assert not page.get_by_role("table", name="Adjusted p-values for every pair of runs").is_visible()
    page.get_by_text("The numbers", exact=True).click()  # the table, one click away (loaded when opened)
    expect(page.get_by_role("table", name="Adjusted p-values for every pair of runs")).to_be_visible()


def _budget(page, base: str, width: int, shoot) -> None:
    page.goto(f"{base}/budget/")
    if page.get_by_text("No plan yet").count():
        page.get_by_role("button", name="Plan the budget").click()
        page.goto(f"{base}/budget/")
    shoot("budget")
    chart = page.locator("figure.budget-chart > svg")
    box = chart.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width
    texts = chart.locator("text")
    for k in range(texts.count()):  # every label whole inside the chart ("563 judgmer" was cut)
        assert _inside(texts.nth(k).bounding_box(), box), texts.nth(k).text_content()
    assert chart.locator("text", has_text="judgments").count() == 1 and texts.first.bounding_box()["height"] >= 8
    tau, top10 = chart.locator("polyline.tau"), chart.locator("polyline.tau-top10")
    assert tau.get_attribute("stroke") != top10.get_attribute("stroke") and top10.get_attribute("stroke-dasharray")
    assert chart.locator("circle").count() >= 2 and chart.locator("rect[width='6']").count() >= 2  # distinct markers
    assert chart.locator("line.planned").count() == 1 and chart.locator("polyline.fit").count() == 1
    assert chart.locator("rect.interval").count() == 1
    nav = page.get_by_role("navigation", name="Main")
    for link in ("Budget", "Machine assessors", "Near-duplicates", "Console", "Results"):
        assert nav.get_by_role("link", name=link, exact=True).count() == 1


def _duplicates(page, base: str, class_id: int, width: int, shoot) -> None:
    page.goto(f"{base.replace('/collections/', '/judge/organize/')}/duplicates/{class_id}/")
    shoot("duplicates")
    left, right = page.locator("section[aria-label=Representative]"), page.locator("section[aria-label=Member]")
    assert [t.strip() for t in left.locator("del").all_inner_texts()] == ["1993", "Endeavour;"] * 3
    assert [t.strip() for t in right.locator("ins").all_inner_texts()] == ["1994", "Discovery;"] * 3
    assert "6 words differ" in page.locator("#difference").inner_text()
    a, b = left.bounding_box(), right.bounding_box()
    assert (abs(a["y"] - b["y"]) < 2) if width >= 1280 else (b["y"] >= a["y"] + a["height"])  # side by side, or stacked
    assert a["x"] + a["width"] <= width and b["x"] + b["width"] <= width
    assert page.get_by_role("navigation", name="Main").get_by_role("link", name="Near-duplicates").count() == 1


def _curves(page, base: str, best: list[str], shoot) -> None:
    page.goto(f"{base}/curves/")
    shoot("curves")
    ticked = page.locator("#run-list input[type=checkbox]:checked")
    assert sorted(ticked.evaluate_all("boxes => boxes.map(b => b.value)")) == sorted(best[:5])
    page.locator("#find").fill("team46")
    visible = [t.strip() for t in page.locator("#run-list label:visible").all_inner_texts()]
    assert visible and all("team46" in t for t in visible)
    page.locator("#find").fill("")
    assert page.locator("#run-list label:visible").count() == RUNS


@pytest.mark.slow
def test_pictures_at_phone_and_desktop_widths(browser, live_server, track, screenshot_dir):
    base = f"{live_server.url}/collections/robust"
    for width in WIDTHS:
        context = browser.new_context(viewport={"width": width, "height": 900})
        page = context.new_page()
        page.set_default_timeout(30_000)
        log_in(page, live_server, "olga", "organize")
        def shoot(name: str, page=page, width=width) -> None:
            page.screenshot(path=str(screenshot_dir / f"pictures-{name}-{width}.png"), full_page=True)

        best = _leaderboard(page, base, width, shoot)
        _significance(page, base, width, shoot)
        _budget(page, base, width, shoot)
        _duplicates(page, base, track["class"].pk, width, shoot)
        _curves(page, base, best, shoot)
        context.close()

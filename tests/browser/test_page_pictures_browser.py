"""The run page's and the topic page's pictures (plain SVG) at 390 and 1280 px: every label whole inside the
picture, text a phone can read, a mark's values on hover. Screenshots go to test-artifacts/ for review."""

from __future__ import annotations

import pytest

from tests.browser.conftest import log_in
from tests.browser.test_results_browser import track  # noqa: F401 - the fixture

pytestmark = pytest.mark.browser


def _inside(inner: dict, outer: dict, slack: float = 1.0) -> bool:
    return (inner["x"] >= outer["x"] - slack and inner["y"] >= outer["y"] - slack
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + slack
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + slack)


def _readable(chart, width: int) -> None:
    box = chart.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width  # no sideways scroll
    texts = chart.locator("text")
    for k in range(texts.count()):
        assert _inside(texts.nth(k).bounding_box(), box), texts.nth(k).text_content()
    assert chart.locator("text.tick").first.bounding_box()["height"] >= 8  # legible on a phone


@pytest.mark.parametrize("width", [390, 1280])
def test_the_run_and_topic_pictures_read_at_phone_and_desktop_widths(browser, live_server, track,  # noqa: F811
                                                                    screenshot_dir, width):
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    log_in(page, live_server, "olga", "organize")
    page.goto(f"{live_server.url}/collections/robust/runs/beta/?measure=map")
    page.screenshot(path=str(screenshot_dir / f"run-picture-{width}.png"), full_page=True)
    chart = page.locator("figure svg.participant")
    _readable(chart, width)
    assert chart.locator("g.topic").count() == 3 and chart.locator("text.topic-id").all_text_contents() == [
        "301", "302", "303"]
    assert chart.get_attribute("role") == "img" and "beta: map per topic" in chart.get_attribute("aria-label")
    assert chart.locator("g.topic title").first.text_content().startswith("topic 301: this run ")
    page.screenshot(path=str(screenshot_dir / f"run-picture-{width}.png"), full_page=True)
    page.goto(f"{live_server.url}/collections/robust/topics/301/")
    chart = page.locator("figure svg.depth")
    _readable(chart, width)
    assert chart.locator("g.depth").count() >= 2 and chart.locator("polyline").count() == 2
    page.screenshot(path=str(screenshot_dir / f"topic-picture-{width}.png"), full_page=True)
    page.goto(f"{live_server.url}/collections/robust/curves/?run=alpha&run=beta")
    chart = page.locator("figure svg.curves")
    _readable(chart, width)
    assert chart.locator("text.legend title").all_text_contents() == ["alpha", "beta"]  # named in full on hover
    page.screenshot(path=str(screenshot_dir / f"curves-picture-{width}.png"), full_page=True)
    context.close()

"""The pages whose names and figures come from one vocabulary or one selector, in Chromium at 390 and 1280 px:
the Benjamini–Hochberg significance page the issue saw answer 500, the "judged in the pool" figure on the
overview, pool page and leaderboard (the same percentage), and the agreement page without "nan".
Screenshots go to test-artifacts/vocab-*.png."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from playwright.sync_api import expect

from tests import factories
from tests.browser.conftest import log_in

pytestmark = pytest.mark.browser

SIZES = {"390px": {"width": 390, "height": 844}, "1280px": {"width": 1280, "height": 900}}


@pytest.fixture
def track(transactional_db, tmp_path):
    factories.collection_with_topics()
    rankings = {tag: {q: [f"{q}-{(i * k) % 13}" for i in range(1, 9)] for q in ("301", "302", "303")}
                for tag, k in (("alpha", 1), ("beta", 2), ("gamma", 3))}
    for tag, ranking in rankings.items():
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", "robust", str(path), "--team", f"team-{tag}", stdout=StringIO())
    call_command("build_pool", "robust", "--depth", "4", "--seed", "1", stdout=StringIO())
    # nist judges most of the pool and two documents outside it; the second assessor finds nothing relevant
    pooled = sorted({d for r in rankings.values() for docs in r.values() for d in docs[:4]})
    lines = [f"{d[:3]} 0 {d} {int(d.endswith(('1', '4', '9')))}" for d in pooled[:-3]] + ["301 0 far-1 1", "302 0 far-2 0"]
    (tmp_path / "nist").write_text("\n".join(lines) + "\n")
    call_command("import_qrels", "robust", str(tmp_path / "nist"), "--assessor", "nist", stdout=StringIO())
    (tmp_path / "second").write_text("".join(f"{d[:3]} 0 {d} 0\n" for d in pooled[:6]))
    call_command("import_qrels", "robust", str(tmp_path / "second"), "--assessor", "second", stdout=StringIO())
    user = User.objects.create_user("olga", password="organize")
    user.groups.add(Group.objects.get_or_create(name="organizers")[0])


@pytest.mark.parametrize("size", SIZES)
def test_the_pages_agree_and_fit_the_screen(browser, live_server, track, screenshot_dir, size):
    context = browser.new_context(viewport=SIZES[size])
    page = context.new_page()
    page.set_default_timeout(10_000)
    log_in(page, live_server, "olga", "organize")
    base = f"{live_server.url}/collections/robust"

    page.goto(f"{base}/significance/?measure=map&test=wilcoxon&correction=bh")
    expect(page.locator("h1")).to_have_text(re.compile("Pairwise significance"))
    assert "Wilcoxon signed-rank test, Benjamini–Hochberg (FDR) correction" in page.inner_text("body")
    assert page.locator("#correction").input_value() == "bh"
    page.screenshot(path=str(screenshot_dir / f"vocab-significance-bh-{size}.png"), full_page=True)

    figures = {}
    for name, path in (("overview", "/"), ("pool", "/pool/"), ("leaderboard", "/leaderboard/?topics=all")):
        page.goto(base + path)
        figure = page.locator(".judged-figure").first
        expect(figure).to_be_visible()
        figures[name] = figure.inner_text()
        assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"], name
        page.screenshot(path=str(screenshot_dir / f"vocab-judged-{name}-{size}.png"), full_page=True)
    assert len(set(figures.values())) == 1 and figures["overview"].endswith("%"), figures

    page.goto(f"{live_server.url}/judge/organize/robust/agreement/")
    body = page.inner_text("body")
    assert not re.search(r"\bnan\b", body, re.IGNORECASE)
    assert "not enough data" in body
    wide = page.evaluate("""() => [...document.querySelectorAll('body *')].filter(e => {
        if (e.getBoundingClientRect().right <= innerWidth + 1) return false;
        for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) if (getComputedStyle(a).overflowX !== 'visible') return false;
        return true; }).slice(0, 8).map(e => e.tagName + '.' + e.className + ':' + Math.round(e.getBoundingClientRect().right))""")
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"], wide
    page.screenshot(path=str(screenshot_dir / f"vocab-agreement-{size}.png"), full_page=True)
    context.close()

"""The curves page: 11-point (equal to trec_eval's iprec_at_recall), non-interpolated PR and ROC curves, per
topic or averaged, any runs or all of them, and their points (CSV) and pictures (SVG, PNG) to download."""

from __future__ import annotations

import csv
import io

import pytest

from evaluation import selectors
from tests.evaluation.tracks import build_track

pytestmark = pytest.mark.django_db


@pytest.fixture
def page(client, organizer, tmp_path):
    collection = build_track(tmp_path)
    client.force_login(organizer)
    return client, collection


def test_the_eleven_point_curve_is_the_leaderboards_iprec_at_recall(page):
    client, collection = page
    tags = list(collection.runs.values_list("tag", flat=True))
    response = client.get("/collections/robust/curves/", {"all": "1", "download": "csv"})
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert {r["run"] for r in rows} == set(tags)
    expected = selectors.pr_curves(collection, tags)
    for r in rows:
        match = expected[(expected["tag"] == r["run"]) & ((expected["recall"] - float(r["recall"])).abs() < 1e-9)]
        assert float(r["interpolated precision"]) == pytest.approx(float(match["precision"].iloc[0]), abs=1e-9)


@pytest.mark.parametrize(("kind", "x", "y"), [("pr", "recall", "precision"), ("roc", "false positive rate",
                                                                            "true positive rate")])
def test_the_other_kinds_per_topic_and_their_downloads(page, kind, x, y):
    client, collection = page
    tag = collection.runs.order_by("tag").first().tag
    html = client.get("/collections/robust/curves/", {"kind": kind, "run": tag, "topic": "301"}).content.decode()
    assert "<svg" in html and ("ROC" in html if kind == "roc" else "not interpolated" in html)
    points = list(csv.DictReader(io.StringIO(client.get("/collections/robust/curves/", {
        "kind": kind, "run": tag, "topic": "301", "download": "csv"}).content.decode())))
    assert points and set(points[0]) == {"run", x, y}
    assert all(0.0 <= float(p[x]) <= 1.0 and 0.0 <= float(p[y]) <= 1.0 for p in points)
    if kind == "roc":
        assert (float(points[0][x]), float(points[0][y])) == (0.0, 0.0)
    svg = client.get("/collections/robust/curves/", {"kind": kind, "run": tag, "download": "svg"})
    png = client.get("/collections/robust/curves/", {"kind": kind, "run": tag, "download": "png"})
    assert svg["Content-Type"] == "image/svg+xml" and b"<svg" in svg.content
    assert png["Content-Type"] == "image/png" and png.content[:8] == b"\x89PNG\r\n\x1a\n"
    assert 'filename="robust.' in png["Content-Disposition"]

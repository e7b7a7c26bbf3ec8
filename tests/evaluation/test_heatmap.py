"""The significance heatmap: one cell per pair of runs, each way round, coloured by who is better and whether
the difference is significant; runs best first; groups of runs no test separates outlined."""

from __future__ import annotations

import base64
import io
import re

import numpy as np
import pandas as pd
from PIL import Image

from evaluation.heatmap import CLASSES, SELF, groups, heatmap_svg

FILL = {name: fill for name, fill, _ in CLASSES}


def _pairs() -> pd.DataFrame:
    """good > mid > bad; good-bad significant, good-mid significant before the correction only, mid-bad not."""
    means = {"mid": 0.5, "bad": 0.2, "good": 0.8}
    rows = [("mid", "good", 0.03, 0.09, False), ("bad", "mid", 0.4, 1.0, False), ("good", "bad", 0.001, 0.003, True)]
    return pd.DataFrame([{"run_a": a, "run_b": b, "mean_a": means[a], "mean_b": means[b],
                          "mean_diff": means[a] - means[b], "p_value": p, "p_adjusted": q, "significant": sig}
                         for a, b, p, q, sig in rows])


def _cells(svg: str) -> list[list[str]]:
    data = re.search(r'href="data:image/png;base64,([^"]+)"', svg).group(1)
    image = Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")
    return [["#{:02x}{:02x}{:02x}".format(*image.getpixel((x, y))) for x in range(image.width)] for y in range(image.height)]


def test_each_pair_is_coloured_each_way_round_with_the_best_run_first():
    svg, n = heatmap_svg(_pairs(), measure="map")
    assert n == 3 and 'data-runs="3"' in svg
    assert re.findall(r'<text class="row"[^>]*>([^<]+)</text>', svg) == ["1 good", "2 mid", "3 bad"]
    cells = _cells(svg)
    assert [cells[i][i] for i in range(3)] == [SELF] * 3
    assert cells[0][2] == FILL["better"] and cells[2][0] == FILL["worse"]  # good-bad: significant
    assert cells[0][1] == FILL["better-raw"] and cells[1][0] == FILL["worse-raw"]  # good-mid: before correction only
    assert cells[1][2] == cells[2][1] == FILL["same"]  # mid-bad: no difference
    # groups: {good, mid} and {mid, bad} are not separated after the correction
    assert svg.count('<rect class="group"') == 2


def test_groups_are_the_maximal_runs_of_neighbours_no_test_separates():
    significant = np.zeros((4, 4), dtype=bool)
    assert groups(significant) == [(0, 3)]
    significant[0, 3] = significant[3, 0] = True
    assert groups(significant) == [(0, 2), (1, 3)]
    assert groups(~np.eye(4, dtype=bool)) == []  # every pair differs: no group of two


def test_labels_are_escaped():
    pairs = _pairs().replace({"good": "<b>good</b>"})
    svg, _ = heatmap_svg(pairs, measure="map & more")
    assert "<b>" not in svg and "&lt;b&gt;good&lt;/b&gt;" in svg and "map &amp; more" in svg

"""The curves page's picture is plain SVG: one line per run in the legend (names escaped), every point inside
the frame, the chance diagonal on ROC only, markers on the 11-point curve only."""

from __future__ import annotations

import re

import pandas as pd

from evaluation.plots import CURVE_AXES, curve_plot
from evaluation.svg_curves import LEFT, PLOT_H, PLOT_W, TOP

CURVES = pd.DataFrame({"tag": ["a<b>"] * 3 + ["plain"] * 3, "x": [0.0, 0.5, 1.0] * 2,
                       "y": [1.0, 0.5, 0.0, 0.2, 0.2, 0.1]})


def test_every_run_is_drawn_inside_the_frame_and_named_escaped():
    svg = curve_plot(CURVES, "interpolated", ", mean over topics")
    assert svg.startswith("<svg") and svg.endswith("</svg>") and "<b>" not in svg
    assert "a&lt;b&gt;" in svg and "plain" in svg and "mean over topics" in svg
    lines = re.findall(r'<polyline points="([^"]+)"', svg)
    assert len(lines) == 2
    for line in lines:
        for point in line.split():
            x, y = map(float, point.split(","))
            assert LEFT <= x <= LEFT + PLOT_W and TOP <= y <= TOP + PLOT_H
    assert svg.count("<circle") == 6 and "dasharray" not in svg
    assert 'width="100%"' in svg and 'viewBox="0 0 400 ' in svg and "<desc>" in svg  # scales to a phone's width


def test_roc_has_the_diagonal_and_its_axes():
    svg = curve_plot(CURVES, "roc")
    x_label, y_label, title = CURVE_AXES["roc"]
    assert "dasharray" in svg and "<circle" not in svg
    assert all(text in svg for text in (x_label, y_label, title))

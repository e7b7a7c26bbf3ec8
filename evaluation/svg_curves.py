"""Curves (precision-recall, ROC) as plain SVG text for the curves page: a few milliseconds, no plotting library
in the request (matplotlib's import and first figure cost a worker about a second). Django-free.

Drawn with :mod:`evaluation.svg_charts`' helpers (a 400-wide viewBox scaled to the page, title and description,
axis labels, names escaped); the legend lists the runs under the plot, one a line, so that the picture reads
at 390 px. The downloads (SVG and PNG files) are still drawn by :func:`evaluation.plots.curve_figure`.
"""

from __future__ import annotations

import pandas as pd

from evaluation.svg_charts import CHAR, PAD, WIDTH, cut, esc, heading, scale, svg_open, text, x_axis, y_axis

__all__ = ["curve_svg"]

#: line colours, in the order the runs are listed (matplotlib's default cycle, as the downloads use)
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
LEFT, TOP, LINE = 50, 30, 16
PLOT_W, PLOT_H = WIDTH - PAD - 12 - LEFT, 250
Y_MAX = 1.02  # as the matplotlib figure: a curve at precision 1 stays visible under the frame's top
TICKS = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


def _run(index: int, tag: str, group: pd.DataFrame, markers: bool, x_at, y_at, legend_y: float) -> list[str]:
    colour = COLOURS[index % len(COLOURS)]
    points = [(x_at(float(x)), y_at(float(y))) for x, y in zip(group["x"], group["y"], strict=True)]
    name = esc(tag)
    parts = [f'<g class="run"><title>{name}</title><polyline points="'
             f'{" ".join(f"{x:.1f},{y:.1f}" for x, y in points)}" fill="none" stroke="{colour}" stroke-width="1.4"/>']
    if markers:
        parts += [f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.4" fill="{colour}"/>' for x, y in points]
    parts += ["</g>", f'<line x1="{PAD}" y1="{legend_y - 4}" x2="{PAD + 18}" y2="{legend_y - 4}" stroke="{colour}" '
                      f'stroke-width="2"/>',
              text(PAD + 24, legend_y, f"<title>{name}</title>{cut(tag, int((WIDTH - 2 * PAD - 24) / CHAR))}",
                   css_class="legend")]
    return parts


def curve_svg(curves: pd.DataFrame, axes: tuple[str, str, str], *, markers: bool = False, diagonal: bool = False,
              title_suffix: str = "") -> str:
    """An inline ``<svg>`` of the curves (columns tag, x, y; x and y in [0, 1]), one line per tag in order of
    first appearance, labelled ``axes`` (x label, y label, title), with a legend under the plot (names cut to
    the width, in full on hover) and, for ROC, the chance diagonal."""
    x_label, y_label, title = axes
    groups = list(curves.groupby("tag", sort=False))
    bottom = TOP + PLOT_H
    legend_top = bottom + 50
    height = legend_top + len(groups) * LINE
    x_at = scale(0, 1, LEFT, LEFT + PLOT_W)
    y_at = scale(0, Y_MAX, bottom, TOP)
    desc = (f"{y_label} against {x_label} of {len(groups)} run{'s' if len(groups) != 1 else ''}"
            f"{title_suffix}, one line each, named in the legend under the plot.")
    parts = [svg_open(WIDTH, height, title + title_suffix, desc, "chart curves", max_width=560),
             heading(title + title_suffix), *y_axis(y_at, TICKS, LEFT, LEFT + PLOT_W, PAD + 8, y_label),
             *x_axis(x_at, TICKS, LEFT, LEFT + PLOT_W, TOP, bottom, x_label)]
    if diagonal:
        parts.append(f'<line x1="{x_at(0):.1f}" y1="{y_at(0):.1f}" x2="{x_at(1):.1f}" y2="{y_at(1):.1f}" '
                     f'stroke="#c0c6d0" stroke-dasharray="4 3"/>')
    for index, (tag, group) in enumerate(groups):
        parts += _run(index, str(tag), group, markers, x_at, y_at, legend_top + index * LINE + 4)
    return "\n".join([*parts, "</svg>"])

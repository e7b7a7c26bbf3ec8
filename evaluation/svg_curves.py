"""Curves (precision-recall, ROC) as plain SVG text for the curves page: a few milliseconds, no plotting library
in the request (matplotlib's import and first figure cost a worker about a second). Django-free.

The downloads (SVG and PNG files) are still drawn by :func:`evaluation.plots.curve_figure`.
"""

from __future__ import annotations

from html import escape

import pandas as pd

__all__ = ["curve_svg"]

#: line colours, in the order the runs are listed (matplotlib's default cycle, as the other plots use)
COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
LEFT, TOP, PLOT_W, PLOT_H, LEGEND_W, LINE = 58, 34, 420, 300, 170, 16
Y_MAX = 1.02  # as the matplotlib figure: a curve at precision 1 stays visible above the frame's top


def _xy(x: float, y: float) -> str:
    return f"{LEFT + x * PLOT_W:.1f},{TOP + (1 - y / Y_MAX) * PLOT_H:.1f}"


def _frame(x_label: str, y_label: str) -> list[str]:
    bottom = TOP + PLOT_H
    parts = [f'<rect x="{LEFT}" y="{TOP}" width="{PLOT_W}" height="{PLOT_H}" fill="none" stroke="#8a94a6"/>']
    for i in range(6):
        v = i / 5
        x, y = LEFT + v * PLOT_W, TOP + (1 - v / Y_MAX) * PLOT_H
        parts += [f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{bottom}" stroke="#e3e7ee"/>',
                  f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + PLOT_W}" y2="{y:.1f}" stroke="#e3e7ee"/>',
                  f'<text x="{x:.1f}" y="{bottom + 14}" text-anchor="middle">{v:.1f}</text>',
                  f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{v:.1f}</text>']
    parts += [f'<text x="{LEFT + PLOT_W / 2}" y="{bottom + 32}" text-anchor="middle">{escape(x_label)}</text>',
              f'<text transform="translate(16,{TOP + PLOT_H / 2}) rotate(-90)" text-anchor="middle">'
              f'{escape(y_label)}</text>']
    return parts


def _run(index: int, tag: str, group: pd.DataFrame, markers: bool) -> list[str]:
    colour = COLOURS[index % len(COLOURS)]
    points = [_xy(float(x), float(y)) for x, y in zip(group["x"], group["y"], strict=True)]
    name = escape(tag)
    parts = [f'<g><title>{name}</title><polyline points="{" ".join(points)}" fill="none" stroke="{colour}" '
             f'stroke-width="1.4"/>']
    if markers:
        parts += [f'<circle cx="{p.split(",")[0]}" cy="{p.split(",")[1]}" r="2.4" fill="{colour}"/>' for p in points]
    y = TOP + 8 + index * LINE
    x = LEFT + PLOT_W + 14
    shown = name if len(tag) <= 24 else escape(tag[:23]) + "…"
    parts += ["</g>", f'<line x1="{x}" y1="{y}" x2="{x + 18}" y2="{y}" stroke="{colour}" stroke-width="2"/>',
              f'<text x="{x + 24}" y="{y + 4}"><title>{name}</title>{shown}</text>']
    return parts


def curve_svg(curves: pd.DataFrame, axes: tuple[str, str, str], *, markers: bool = False, diagonal: bool = False,
              title_suffix: str = "") -> str:
    """An inline ``<svg>`` of the curves (columns tag, x, y; x and y in [0, 1]), one line per tag in order of
    first appearance, labelled ``axes`` (x label, y label, title), with a legend (names cut at 24
    characters, in full on hover) and, for ROC, the chance diagonal."""
    x_label, y_label, title = axes
    groups = list(curves.groupby("tag", sort=False))
    width = LEFT + PLOT_W + LEGEND_W
    height = max(TOP + PLOT_H + 44, TOP + 16 + len(groups) * LINE)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="{width}" '
             f'height="{height}" style="max-width:100%;height:auto" font-family="sans-serif" font-size="11" '
             f'role="img" aria-label="{escape(title + title_suffix)}">',
             f'<text x="{LEFT + PLOT_W / 2}" y="20" text-anchor="middle" font-size="13">'
             f'{escape(title + title_suffix)}</text>', *_frame(x_label, y_label)]
    if diagonal:
        parts.append(f'<line x1="{LEFT}" y1="{TOP + (1 - 0 / Y_MAX) * PLOT_H:.1f}" x2="{LEFT + PLOT_W}" '
                     f'y2="{TOP + (1 - 1 / Y_MAX) * PLOT_H:.1f}" stroke="#c0c6d0" stroke-dasharray="4 3"/>')
    for index, (tag, group) in enumerate(groups):
        parts += _run(index, str(tag), group, markers)
    return "\n".join([*parts, "</svg>"])

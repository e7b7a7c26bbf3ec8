"""Charts of the results pages as plain SVG text written here: a run's score per topic against every run's
(the run page, a team's results) and what a pool finds per depth (the topic page). A few milliseconds, no
plotting library in a request (matplotlib's import and first figure cost a worker about a second). Django-free.

Every chart is an inline ``<svg>`` with a ``viewBox`` the page scales to its width (so it stays readable at
390 px: its labels sit inside the frame, names too long are cut with "…" and given in full on hover), a
``<title>`` and ``<desc>`` for screen readers, axis labels, and a ``<title>`` on every mark with its values.
Every user string (run tags, topic ids, measure names) is escaped. :mod:`evaluation.svg_curves` draws the
curves page with the same helpers.
"""

from __future__ import annotations

import math
from html import escape

import pandas as pd

__all__ = ["depth_svg", "participant_svg"]

WIDTH = 400  # the viewBox's width: at 390 px (a phone's page, about 360 px of it) the text stays ~11 px
PAD, FONT, CHAR = 8, 12, 6.8  # margin, font size, a character's width at it (for cutting and spacing labels)
GRID, FRAME, RANGE, MEDIAN, RUN, POOLED = "#e3e7ee", "#8a94a6", "#c5ccd6", "#1d2330", "#1f5fbf", "#8a94a6"


def esc(value: object) -> str:
    """``value`` as text safe inside an element or a double-quoted attribute."""
    return escape(str(value), quote=True)


def cut(text: str, chars: int) -> str:
    """``text`` escaped, cut to ``chars`` characters with "…" when longer."""
    return esc(text) if len(text) <= chars else esc(text[:max(chars - 1, 1)]) + "…"


def number(value: float) -> str:
    """A value as a label: at most four decimals, no trailing zeros ("0.25", "12", "0.1234")."""
    if not math.isfinite(value):
        return "–"
    return f"{value:.4f}".rstrip("0").rstrip(".") if value != int(value) else f"{int(value)}"


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round values (steps of 1, 2 or 5 times a power of ten) from ``low`` to ``high``."""
    if high <= low:
        high = low + 1
    raw = (high - low) / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(s * power for s in (1, 2, 5, 10) if s * power >= raw)
    first = math.ceil(low / step - 1e-9)
    return [round(k * step, 10) for k in range(first, math.floor(high / step + 1e-9) + 1)]


def top(values, floor: float = 1.0) -> float:
    """The axis's upper end: ``floor`` (1 for the measures in [0, 1]) or the first round tick above the data."""
    high = max((float(v) for v in values if v == v), default=0.0)  # v == v: not NaN
    if high <= floor:
        return floor
    values = ticks(0, high)
    return values[-1] if values[-1] >= high else values[-1] + values[1] - values[0]


def svg_open(width: float, height: float, title: str, desc: str, css_class: str, *, max_width: float | None = None,
             font_size: int = FONT) -> str:
    """The ``<svg>`` element's start: scaled to the page's width (at most ``max_width`` px, default 1.4 × its
    own), named by ``title`` and described by ``desc`` for screen readers."""
    largest = max_width or round(width * 1.4)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" viewBox="0 0 {width:.0f} {height:.0f}" '
            f'width="100%" style="max-width:{largest:.0f}px;height:auto;display:block" font-family="sans-serif" '
            f'font-size="{font_size}" role="img" aria-label="{esc(title)}"><title>{esc(title)}</title>'
            f'<desc>{esc(desc)}</desc>')


def text(x: float, y: float, content: str, *, anchor: str = "start", css_class: str = "", extra: str = "") -> str:
    """A ``<text>`` whose ``content`` is already escaped."""
    kind = f' class="{css_class}"' if css_class else ""
    return f'<text{kind} x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{content}</text>'


def heading(title: str) -> str:
    """The chart's title across its top, cut to the width."""
    return text(PAD, 16, cut(title, int((WIDTH - 2 * PAD) / (CHAR * 0.85))), css_class="title",
                extra=' font-size="12.5" font-weight="600"')


def legend(y: float, items: list[tuple[str, str]]) -> list[str]:
    """One line of legend at ``y``: (marker's SVG drawn in a 14 × 10 box at the origin, label) side by side."""
    parts, x = [], PAD
    for marker, label in items:
        parts += [f'<g transform="translate({x:.1f},{y - 8:.1f})" aria-hidden="true">{marker}</g>',
                  text(x + 18, y, esc(label), css_class="legend")]
        x += 18 + len(label) * CHAR * 0.8 + 16
    return parts


def scale(low: float, high: float, start: float, end: float, *, log: bool = False):
    """A function from a value in [low, high] to a coordinate in [start, end] (``log``: a logarithmic axis)."""
    if log:
        low, high = math.log10(low), math.log10(high)
    span = (high - low) or 1.0

    def at(value: float) -> float:
        v = math.log10(value) if log else value
        return start + (v - low) / span * (end - start)

    return at


def x_axis(at, values: list[float], left: float, right: float, top_y: float, bottom_y: float, label: str, *,
           labels_above: bool = False) -> list[str]:
    """Vertical grid lines at ``values``, their labels under the plot (and above it if ``labels_above``), and
    the axis's ``label`` (escaped here) under them."""
    parts = [f'<rect x="{left:.1f}" y="{top_y:.1f}" width="{right - left:.1f}" height="{bottom_y - top_y:.1f}" '
             f'fill="none" stroke="{FRAME}"/>']
    for v in values:
        x = at(v)
        parts += [f'<line x1="{x:.1f}" y1="{top_y:.1f}" x2="{x:.1f}" y2="{bottom_y:.1f}" stroke="{GRID}"/>',
                  text(x, bottom_y + 13, number(v), anchor="middle", css_class="tick")]
        if labels_above:
            parts.append(text(x, top_y - 4, number(v), anchor="middle", css_class="tick"))
    parts.append(text((left + right) / 2, bottom_y + 29, esc(label), anchor="middle", css_class="axis"))
    return parts


def y_axis(at, values: list[float], left: float, right: float, label_x: float, label: str) -> list[str]:
    """Horizontal grid lines at ``values``, their labels left of the plot, and the axis's ``label`` turned up."""
    parts = []
    for v in values:
        y = at(v)
        parts += [f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{right:.1f}" y2="{y:.1f}" stroke="{GRID}"/>',
                  text(left - 4, y + 4, number(v), anchor="end", css_class="tick")]
    middle = (at(values[0]) + at(values[-1])) / 2 if values else 0
    parts.append(f'<text class="axis" transform="translate({label_x:.1f},{middle:.1f}) rotate(-90)" '
                 f'text-anchor="middle">{esc(label)}</text>')
    return parts


ROW = 15  # a topic's row in the participant chart


def _finite(value) -> float:
    """``value`` as a float, NaN where it is missing."""
    return math.nan if value is None or value != value else float(value)


def _participant_row(row: dict, y: float, at) -> list[str]:
    qid, score, has = str(row["qid"]), _finite(row["score"]), bool(row.get("has_results", True))
    best, median, worst = _finite(row["best"]), _finite(row["median"]), _finite(row["worst"])
    # not which run was best: a participant's page shows no other team's run
    told = (f"topic {qid}: this run {number(score)}{'' if has else ' (no results for this topic)'}, "
            f"best {number(best)}, median {number(median)}, worst {number(worst)}")
    parts = [f'<g class="topic"><title>{esc(told)}</title>']
    if math.isfinite(best) and math.isfinite(worst):
        parts.append(f'<rect class="range" x="{at(worst):.1f}" y="{y - 4:.1f}" '
                     f'width="{max(at(best) - at(worst), 1.5):.1f}" height="8" fill="{RANGE}"/>')
    if math.isfinite(median):
        parts.append(f'<line class="median" x1="{at(median):.1f}" y1="{y - 6:.1f}" x2="{at(median):.1f}" '
                     f'y2="{y + 6:.1f}" stroke="{MEDIAN}" stroke-width="2"/>')
    if math.isfinite(score):
        parts.append(f'<circle class="score" cx="{at(score):.1f}" cy="{y:.1f}" r="3.6" fill="{RUN if has else "#fff"}" '
                     f'stroke="{RUN}" stroke-width="1.5"/>')
    return [*parts, "</g>"]


def participant_svg(report: pd.DataFrame, tag: str, measure: str) -> str:
    """Per topic, one row: the run's score (a dot; hollow where it has no results for the topic) against the
    worst to best of all runs (a bar) and their median (a tick). ``report``: columns qid, score, best, median,
    worst, and optionally has_results (:func:`evaluation.selectors.run_report`). Which run was best is not
    told: a team's results page shows no other team's run."""
    rows = report.to_dict("records")
    above = sum(_finite(r["score"]) > _finite(r["median"]) for r in rows)
    best = sum(_finite(r["score"]) >= _finite(r["best"]) for r in rows)
    title = f"{tag}: {measure} per topic against all runs"
    desc = (f"One row per topic ({len(rows)}): {tag}'s {measure} as a dot, the worst to the best of all runs as a "
            f"grey bar, their median as a tick. Above the median on {above} of {len(rows)} topics; best on {best}.")
    label_chars = min(max((len(str(r["qid"])) for r in rows), default=3), 16)
    left = PAD + max(label_chars, 3) * CHAR + 8
    right = WIDTH - PAD - 12  # half a tick label ("0.8") right of the frame
    labels_above = len(rows) > 12  # the scale again above the rows when they run long
    plot_top = 64 if labels_above else 46
    bottom = plot_top + len(rows) * ROW + 4
    values = [v for r in rows for v in (_finite(r["score"]), _finite(r["best"]), _finite(r["worst"]))
              if math.isfinite(v)]
    low, high = min(0.0, *values), top(values)
    at = scale(low, high, left + 4, right - 4)
    parts = [svg_open(WIDTH, bottom + 38, title, desc, "chart participant", max_width=520), heading(title),
             *legend(34, [(f'<rect y="1" width="14" height="8" fill="{RANGE}"/>', "worst to best of all runs"),
                          (f'<line x1="7" x2="7" y1="0" y2="10" stroke="{MEDIAN}" stroke-width="2"/>', "median"),
                          (f'<circle cx="7" cy="5" r="3.6" fill="{RUN}"/>', "this run")]),
             *x_axis(at, ticks(low, high), left, right, plot_top, bottom, measure, labels_above=labels_above)]
    for index, row in enumerate(rows):
        y = plot_top + 2 + ROW * index + ROW / 2
        parts.append(text(left - 6, y + 4, cut(str(row["qid"]), label_chars), anchor="end", css_class="topic-id"))
        parts += _participant_row(row, y, at)
    return "\n".join([*parts, "</svg>"])


def _depth_labels(depths: list[int], log: bool) -> list[int]:
    """The depths named on the axis: every one when they are few, else round values that do not overlap."""
    if len(depths) <= 8:
        return depths
    candidates = [m * 10 ** e for e in range(7) for m in (1, 2, 5)] if log else ticks(min(depths), max(depths))
    return [v for v in candidates if min(depths) <= v <= max(depths)]


def depth_svg(by_depth: pd.DataFrame) -> str:
    """Documents in the pool, and relevant ones among them, against the pool's depth k (columns depth,
    pool_size, relevant), one point per depth (named with its values); a logarithmic depth axis when the
    depths span a factor of ten or more (1, 5, 10, 20, 50, 100)."""
    depths = [int(d) for d in by_depth["depth"]]
    pooled, relevant = [int(v) for v in by_depth["pool_size"]], [int(v) for v in by_depth["relevant"]]
    title = "Relevant documents found per pool depth"
    last = len(depths) - 1
    desc = (f"Pool size and relevant documents found at depths {', '.join(map(str, depths))}: at depth "
            f"{depths[last]}, {pooled[last]} pooled documents of which {relevant[last]} relevant.")
    y_values = ticks(0, top(pooled, floor=1.0), 4)
    left = PAD + 16 + max(len(number(v)) for v in y_values) * CHAR + 4
    right, plot_top, bottom = WIDTH - PAD - 10, 48, 200
    log = min(depths) >= 1 and max(depths) >= 10 * min(depths)
    x_at = scale(min(depths), max(depths), left + 12, right - 12, log=log)
    shown = _depth_labels(depths, log)
    y_at = scale(0, y_values[-1], bottom, plot_top)
    parts = [svg_open(WIDTH, bottom + 38, title, desc, "chart depth", max_width=520), heading(title),
             *legend(34, [(f'<line x2="14" y1="5" y2="5" stroke="{POOLED}" stroke-width="2"/>', "pooled documents"),
                          (f'<line x2="14" y1="5" y2="5" stroke="{RUN}" stroke-width="2"/>', "relevant found")]),
             *y_axis(y_at, y_values, left, right, PAD + 8, "documents"),
             *x_axis(x_at, shown, left, right, plot_top, bottom,
                     "pool depth k" + (" (logarithmic)" if log else ""))]
    for series, colour, name in ((pooled, POOLED, "pooled"), (relevant, RUN, "relevant")):
        points = " ".join(f"{x_at(d):.1f},{y_at(v):.1f}" for d, v in zip(depths, series, strict=True))
        parts.append(f'<polyline class="{name}" points="{points}" fill="none" stroke="{colour}" stroke-width="1.8"/>')
    for d, p, r in zip(depths, pooled, relevant, strict=True):
        parts.append(f'<g class="depth"><title>depth {d}: {p} pooled documents, {r} relevant</title>'
                     f'<circle cx="{x_at(d):.1f}" cy="{y_at(p):.1f}" r="3" fill="{POOLED}"/>'
                     f'<circle cx="{x_at(d):.1f}" cy="{y_at(r):.1f}" r="3" fill="{RUN}"/></g>')
    return "\n".join([*parts, "</svg>"])

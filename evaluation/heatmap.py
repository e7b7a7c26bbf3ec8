"""The significance page's picture: every pair of runs as one cell of a run-by-run heatmap, drawn as plain SVG
(no plotting library in the request). Runs are ordered by their mean, best first; a cell is coloured by whether
the row run is better or worse than the column run, strongly when the difference is significant after the
correction, lightly when only the uncorrected p-value is under 0.05. Groups (runs no test separates, the
leaderboard's letters) are outlined along the diagonal.

The SVG is in cell units (one cell = ``CELL``) under a ``viewBox``, so it scales to the page; labels sit inside
that box (their room is measured from the longest run tag)."""

from __future__ import annotations

import base64
import html
import io

import numpy as np
import pandas as pd

__all__ = ["CLASSES", "groups", "heatmap_svg"]

CELL, FONT, CHAR = 12, 11, 6.8  # a cell's side, the labels' font size and an average character's width
#: the smallest a cell is drawn on a screen, in CSS pixels (labels stay legible): a narrower frame scrolls
MIN_CELL_PX = 9
#: (css class, fill, what it means): the legend is written from this list
CLASSES = (
    ("better", "#1f5fbf", "row run better, significant (adjusted p < 0.05)"),
    ("better-raw", "#a9c4ee", "row run better, p < 0.05 before the correction only"),
    ("same", "#f1f3f6", "no significant difference"),
    ("worse-raw", "#f3c59a", "row run worse, p < 0.05 before the correction only"),
    ("worse", "#c2560c", "row run worse, significant (adjusted p < 0.05)"),
)
SELF = "#8a94a6"  # a run against itself


def _square(values: pd.Series, ia: np.ndarray, ib: np.ndarray, sign: float) -> np.ndarray:
    """A run-by-run matrix of a column: the pair (a, b) gives the cell (a, b), and ``sign`` times it the cell (b, a)."""
    values = values.to_numpy(dtype=float)
    out = np.zeros((len(ia) and max(ia.max(), ib.max()) + 1,) * 2)
    out[ia, ib] = values
    out[ib, ia] = sign * values
    return out


def groups(significant: np.ndarray) -> list[tuple[int, int]]:
    """Runs ordered best first, the maximal ranges [i, j] in which no two runs differ significantly (the
    letters of a compact letter display, for runs in score order): each a run and the runs after it up to
    the first that differs from any run of the range.

    >>> groups(np.array([[0, 0, 1], [0, 0, 0], [1, 0, 0]], dtype=bool))
    [(0, 1), (1, 2)]
    """
    n, found = len(significant), []
    for i in range(n):
        j = i
        while j + 1 < n and not significant[j + 1, i:j + 1].any():
            j += 1
        if j > i and not (found and found[-1][1] >= j):
            found.append((i, j))
    return found


def _raster(kind: np.ndarray) -> str:
    """The cells as a PNG data URI, one pixel per cell coloured by its class (:data:`CLASSES`, then the diagonal):
    a few kilobytes for 500 runs, where one SVG element per cell would be megabytes."""
    from PIL import Image  # Pillow (a dependency of matplotlib's), imported when a heatmap is drawn

    image = Image.fromarray(kind.astype(np.uint8), mode="P")
    colours = [fill for _, fill, _ in CLASSES] + [SELF]
    image.putpalette([int(c[k:k + 2], 16) for c in colours for k in (1, 3, 5)])
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def heatmap_svg(pairs: pd.DataFrame, *, measure: str) -> tuple[str, int]:
    """The heatmap of a significance frame (columns run_a, run_b, mean_a, mean_b, mean_diff, p_value, p_adjusted,
    significant) as an SVG element, and the number of runs (the numbers of each pair are in the page's table)."""
    runs_a, runs_b = pairs["run_a"].astype(str).tolist(), pairs["run_b"].astype(str).tolist()
    means = dict(zip(runs_b, pairs["mean_b"].tolist(), strict=True))
    means.update(zip(runs_a, pairs["mean_a"].tolist(), strict=True))
    order = sorted(means, key=lambda tag: -means[tag])
    n, index = len(order), {tag: i for i, tag in enumerate(order)}
    ia = np.fromiter(map(index.__getitem__, runs_a), dtype=np.int64, count=len(runs_a))
    ib = np.fromiter(map(index.__getitem__, runs_b), dtype=np.int64, count=len(runs_b))
    diff = _square(pairs["mean_diff"], ia, ib, -1.0)
    p_raw = _square(pairs["p_value"], ia, ib, 1.0)
    significant = _square(pairs["significant"], ia, ib, 1.0) > 0
    np.fill_diagonal(p_raw, 1.0)
    # 0 better, 1 better before correction only, 2 same, 3 worse before correction only, 4 worse
    kind = np.full((n, n), 2, dtype=np.int64)
    raw = p_raw < 0.05
    kind[raw & (diff > 0)], kind[raw & (diff < 0)] = 1, 3
    kind[significant & (diff > 0)], kind[significant & (diff < 0)] = 0, 4
    np.fill_diagonal(kind, len(CLASSES))
    label = max((len(t) for t in order), default=1) * CHAR / CELL + 3.5  # room for a rank and a tag, in cells
    size = n + label
    rows = "".join(f'<text class="row" x="-0.4" y="{i + 0.78}">{i + 1} {html.escape(t)}</text>'
                   for i, t in enumerate(order))
    columns = "".join(f'<text class="column" transform="translate({j + 0.78} -0.4) rotate(-90)">{j + 1} {html.escape(t)}</text>'
                      for j, t in enumerate(order))
    outlines = "".join(f'<rect class="group" x="{i}" y="{i}" width="{j - i + 1}" height="{j - i + 1}">'
                       f"<title>runs {i + 1}–{j + 1} ({html.escape(order[i])} … {html.escape(order[j])}) "
                       f"do not differ significantly</title></rect>" for i, j in groups(significant))
    scale = 1 / CELL
    svg = (f'<svg class="heatmap" role="img" viewBox="{-label:.2f} {-label:.2f} {size:.2f} {size:.2f}" '
           f'width="{size * CELL:.0f}" style="min-width:{size * MIN_CELL_PX:.0f}px;max-width:{max(size * 2 * CELL, 480):.0f}px" data-runs="{n}" '
           f'aria-label="Significance of every pair of {n} runs on {html.escape(measure)}, best run first">'
           f"<style>.heatmap text {{ font-size:{FONT * scale:.4f}px; fill:#1d2330; }} "
           f".heatmap text.row {{ text-anchor:end; }} .heatmap rect.group {{ fill:none; stroke:#111; "
           f"stroke-width:{1.2 * scale:.4f}; }}"
           f'</style><image class="cells" href="{_raster(kind)}" x="0" y="0" width="{n}" height="{n}" '
           f'preserveAspectRatio="none" style="image-rendering:pixelated"/><g>{outlines}</g>'
           f"<g>{rows}</g><g>{columns}</g></svg>")
    return svg, n

"""The significance page's picture: every pair of runs as one cell of a run-by-run heatmap, drawn as plain SVG
(no plotting library in the request). Runs are ordered by their mean, best first; a cell is coloured by whether
the row run is better or worse than the column run, strongly when the difference is significant after the
correction, lightly when only the uncorrected p-value is under 0.05. Groups (runs no test separates, the
leaderboard's letters) are outlined along the diagonal.

The SVG is in cell units (one cell = ``CELL``) under a ``viewBox``, so it scales to the page; labels sit inside
that box (their room is measured from the longest run tag)."""

from __future__ import annotations

import html

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


def _square(pairs: pd.DataFrame, index: dict[str, int], column: str, sign: float) -> np.ndarray:
    """A run-by-run matrix of ``column``: the pair (a, b) gives the cell (a, b), and ``sign`` times it the cell (b, a)."""
    ia = np.fromiter((index[a] for a in pairs["run_a"]), dtype=np.int64, count=len(pairs))
    ib = np.fromiter((index[b] for b in pairs["run_b"]), dtype=np.int64, count=len(pairs))
    values = pairs[column].to_numpy(dtype=float)
    out = np.zeros((len(index), len(index)))
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


def _cells(kind: np.ndarray, titles: list[list[str]] | None) -> str:
    """One ``<rect>`` per cell, in cell units (the diagonal grey)."""
    out = []
    names = [c[0] for c in CLASSES]
    for i, row in enumerate(kind.tolist()):
        for j, k in enumerate(row):
            if i == j:  # the run against itself
                out.append(f'<rect class="cell self" x="{j}" y="{i}" width="1" height="1"/>')
                continue
            title = f"<title>{titles[i][j]}</title>" if titles else ""
            out.append(f'<rect class="cell {names[k]}" x="{j}" y="{i}" width="1" height="1">{title}</rect>')
    return "".join(out)


def heatmap_svg(pairs: pd.DataFrame, *, measure: str, titles_up_to: int = 60) -> tuple[str, int]:
    """The heatmap of a significance frame (columns run_a, run_b, mean_a, mean_b, mean_diff, p_value, p_adjusted,
    significant) as an SVG element, and the number of runs. Cells carry a tooltip (row − column, p-values)
    while there are at most ``titles_up_to`` runs; beyond that the table of pairs has them."""
    means: dict[str, float] = {}
    for a, mean_a, b, mean_b in zip(pairs["run_a"], pairs["mean_a"], pairs["run_b"], pairs["mean_b"], strict=True):
        means.setdefault(a, float(mean_a))
        means.setdefault(b, float(mean_b))
    order = sorted(means, key=lambda tag: -means[tag])
    index = {tag: i for i, tag in enumerate(order)}
    n = len(order)
    diff = _square(pairs, index, "mean_diff", -1.0)
    p_raw, p_adj = _square(pairs, index, "p_value", 1.0), _square(pairs, index, "p_adjusted", 1.0)
    significant = _square(pairs.astype({"significant": float}), index, "significant", 1.0) > 0
    np.fill_diagonal(p_raw, 1.0)
    # 0 better, 1 better before correction only, 2 same, 3 worse before correction only, 4 worse
    kind = np.full((n, n), 2, dtype=np.int64)
    raw = p_raw < 0.05
    kind[raw & (diff > 0)], kind[raw & (diff < 0)] = 1, 3
    kind[significant & (diff > 0)], kind[significant & (diff < 0)] = 0, 4
    titles = None
    if n <= titles_up_to:
        esc = [html.escape(t) for t in order]
        titles = [[f"{esc[i]} − {esc[j]}: {diff[i, j]:+.4f}, p = {p_raw[i, j]:.4f}, adjusted {p_adj[i, j]:.4f}"
                   for j in range(n)] for i in range(n)]
    label = max((len(t) for t in order), default=1) * CHAR / CELL + 3.5  # room for a rank and a tag, in cells
    size = n + label
    rows = "".join(f'<text class="row" x="-0.4" y="{i + 0.78}">{i + 1} {html.escape(t)}</text>'
                   for i, t in enumerate(order))
    columns = "".join(f'<text class="column" transform="translate({j + 0.78} -0.4) rotate(-90)">{j + 1} {html.escape(t)}</text>'
                      for j, t in enumerate(order))
    outlines = "".join(f'<rect class="group" x="{i}" y="{i}" width="{j - i + 1}" height="{j - i + 1}">'
                       f"<title>runs {i + 1}–{j + 1} ({html.escape(order[i])} … {html.escape(order[j])}) "
                       f"do not differ significantly</title></rect>" for i, j in groups(significant))
    fills = "".join(f".heatmap .{name} {{ fill:{fill}; }}" for name, fill, _ in CLASSES) + ".heatmap .self { fill:#8a94a6; }"
    scale = 1 / CELL
    svg = (f'<svg class="heatmap" role="img" viewBox="{-label:.2f} {-label:.2f} {size:.2f} {size:.2f}" '
           f'width="{size * CELL:.0f}" style="min-width:{size * MIN_CELL_PX:.0f}px;max-width:{max(size * 2 * CELL, 480):.0f}px" data-runs="{n}" '
           f'aria-label="Significance of every pair of {n} runs on {html.escape(measure)}, best run first">'
           f"<style>{fills} .heatmap text {{ font-size:{FONT * scale:.4f}px; fill:#1d2330; }} "
           f".heatmap text.row {{ text-anchor:end; }} .heatmap rect.group {{ fill:none; stroke:#111; "
           f"stroke-width:{1.2 * scale:.4f}; }} .heatmap rect.cell {{ stroke:#fff; stroke-width:{0.5 * scale:.4f}; }}"
           f"</style><g>{_cells(kind, titles)}</g><g>{outlines}</g><g>{rows}</g><g>{columns}</g></svg>")
    return svg, n

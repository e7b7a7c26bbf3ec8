"""The pictures of the results pages, and the curves' downloads.

Every picture shown in a page is plain SVG written by code (:mod:`evaluation.svg_charts`: a run's score per
topic against all runs, what a pool finds per depth; :mod:`evaluation.svg_curves`: the curves page), a few
milliseconds with no plotting library in the request. Only the downloads (the curves as SVG or PNG files) are
drawn by matplotlib, imported on the first download.
"""

from __future__ import annotations

import functools
import io
import warnings

import pandas as pd

from evaluation import svg_charts, svg_curves


@functools.cache
def _pyplot():
    """matplotlib's pyplot on the Agg backend, set up on first use (a download): importing it costs about half a
    second, which no page and no command should pay."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # text.parse_math off: run tags, topic ids and measure names are shown as typed ("$x$" is not maths)
    plt.rcParams.update({"font.size": 10, "axes.spines.top": False, "axes.spines.right": False,
                         "svg.fonttype": "none", "text.parse_math": False})
    return plt


def participant_plot(report: pd.DataFrame, tag: str, measure: str) -> str:
    """Per topic: the run's score against the best / median / worst of all runs (the TREC participant
    report), as plain SVG (:func:`evaluation.svg_charts.participant_svg`)."""
    return svg_charts.participant_svg(report, tag, measure)


def depth_plot(by_depth: pd.DataFrame) -> str:
    """Relevant documents found, and pool size, against pool depth (columns depth, pool_size, relevant), as plain
    SVG (:func:`evaluation.svg_charts.depth_svg`)."""
    return svg_charts.depth_svg(by_depth)


CURVE_AXES = {"interpolated": ("recall", "interpolated precision", "Interpolated precision-recall (11 points)"),
              "pr": ("recall", "precision", "Precision-recall (not interpolated)"),
              "roc": ("false positive rate", "true positive rate", "ROC")}


def curve_figure(curves: pd.DataFrame, kind: str, title_suffix: str = ""):
    """A figure of curves (columns tag, x, y) of ``kind`` (interpolated, pr, roc)."""
    x_label, y_label, title = CURVE_AXES[kind]
    fig, ax = _pyplot().subplots(figsize=(6.5, 4.2))
    for tag, group in curves.groupby("tag", sort=False):
        marker = "o" if kind == "interpolated" else None
        ax.plot(group["x"], group["y"], marker=marker, markersize=3, label=str(tag), linewidth=1.2)
    if kind == "roc":
        ax.plot([0, 1], [0, 1], color="#c0c6d0", linewidth=0.8, linestyle="--")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel(x_label)
    ax.set_ylabel(y_label)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False)
    ax.set_title(title + title_suffix)
    return fig


def curve_plot(curves: pd.DataFrame, kind: str, title_suffix: str = "") -> str:
    """The curves page's picture: plain SVG (:mod:`evaluation.svg_curves`), no matplotlib in the request."""
    return svg_curves.curve_svg(curves, CURVE_AXES[kind], markers=kind == "interpolated", diagonal=kind == "roc",
                                title_suffix=title_suffix)


def figure_bytes(fig, fmt: str) -> bytes:
    """The figure as a downloadable SVG or PNG file."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)
        fig.savefig(buffer, format=fmt, bbox_inches="tight", dpi=150 if fmt == "png" else None)
    _pyplot().close(fig)
    return buffer.getvalue()

"""Plots as SVG, rendered on the server with matplotlib (no JavaScript needed to read them); the curves page's
picture is plain SVG (:mod:`evaluation.svg_curves`)."""

from __future__ import annotations

import functools
import io
import warnings

import pandas as pd

from evaluation import svg_curves
from workbench.cache import LRU

#: drawn SVGs by what they show (a page drawn again shows the same data: no matplotlib)
_drawn = LRU(size=512)


def _kept(draw):
    """``draw(frame, *args)`` once per content of ``frame`` and ``args``: the key is a hash of the frame's
    values, so a changed report is drawn anew and nothing is invalidated by hand."""

    @functools.wraps(draw)
    def kept(frame: pd.DataFrame, *args) -> str:
        content = (tuple(frame.columns), tuple(pd.util.hash_pandas_object(frame, index=False).tolist()))
        return _drawn.get_or_compute((draw.__name__, content, args), lambda: draw(frame, *args))

    return kept


@functools.cache
def _pyplot():
    """matplotlib's pyplot on the Agg backend, set up on first use: importing it costs about half a
    second, which every command would otherwise pay at start-up (Django's checks import the views)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # text.parse_math off: run tags, topic ids and measure names are shown as typed ("$x$" is not maths)
    plt.rcParams.update({"font.size": 10, "axes.spines.top": False, "axes.spines.right": False,
                         "svg.fonttype": "none", "text.parse_math": False})
    return plt


def warm_up() -> None:
    """Import matplotlib now (a server does at start: ``EvaluationConfig.warm_up``)."""
    _pyplot()


def _svg(fig) -> str:
    buffer = io.StringIO()
    with warnings.catch_warnings():
        # text stays text in the SVG (svg.fonttype none): the browser draws any script, whatever fonts
        # matplotlib has for measuring it
        warnings.filterwarnings("ignore", message="Glyph .* missing from font", category=UserWarning)
        fig.savefig(buffer, format="svg", bbox_inches="tight")
    _pyplot().close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog so the SVG can sit inline in HTML


@_kept
def participant_plot(report: pd.DataFrame, tag: str, measure: str) -> str:
    """Per topic: the run's score as a bar against the best / median / worst of all runs (the TREC
    participant report)."""
    width = max(6.0, 0.28 * len(report) + 2)
    fig, ax = _pyplot().subplots(figsize=(width, 3.6))
    x = range(len(report))
    ax.vlines(x, report["worst"], report["best"], color="#c5ccd6", linewidth=6, label="worst to best of all runs")
    ax.scatter(x, report["median"], marker="_", s=120, color="#1d2330", label="median of all runs", zorder=3)
    ax.scatter(x, report["score"], marker="o", s=22, color="#1f5fbf", label=tag, zorder=4)
    ax.set_xticks(list(x), report["qid"], rotation=90 if len(report) > 20 else 0, fontsize=8)
    ax.set_xlabel("topic")
    ax.set_ylabel(measure)
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22 if len(report) > 20 else -0.15), ncol=3,
              frameon=False)
    ax.set_title(f"{tag}: {measure} per topic")
    return _svg(fig)


def pr_plot(curves: pd.DataFrame) -> str:
    """Interpolated precision-recall curves (columns tag, recall, precision)."""
    fig, ax = _pyplot().subplots(figsize=(6.5, 4.2))
    for tag, group in curves.groupby("tag", sort=False):
        ax.plot(group["recall"], group["precision"], marker="o", markersize=3, label=str(tag))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False)
    ax.set_title("Interpolated precision-recall")
    return _svg(fig)


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


@_kept
def depth_plot(by_depth: pd.DataFrame) -> str:
    """Relevant documents found, and pool size, against pool depth (columns depth, pool_size, relevant)."""
    fig, ax = _pyplot().subplots(figsize=(6.0, 3.4))
    ax.plot(by_depth["depth"], by_depth["pool_size"], marker="o", markersize=3, label="pooled documents",
            color="#8a94a6")
    ax.plot(by_depth["depth"], by_depth["relevant"], marker="o", markersize=3, label="relevant found",
            color="#1f5fbf")
    ax.set_xlabel("pool depth k")
    ax.set_ylabel("documents")
    ax.legend(frameon=False)
    ax.grid(alpha=0.3)
    ax.set_title("Relevant documents found per depth")
    return _svg(fig)

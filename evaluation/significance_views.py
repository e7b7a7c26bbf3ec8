"""The significance page: every pair of runs on one measure, as a heatmap (:mod:`evaluation.heatmap`, drawn once
per version of the collection and choice) and, one click away on a page of their own (:func:`significance_numbers`,
loaded into the page when its "numbers" are opened), as a run-by-run matrix and a table of pairs: at 143 runs the
tables are megabytes, the heatmap a few kilobytes.

With 500 runs there are 124,750 pairs: the tables are built from the selector's columns (numpy arrays and
lists), not from a dict per pair, and a pair's row is made only when a page, a sort or an export shows it
(:class:`FrameRecords`); the matrix's cells are the same HTML and CSV as
:func:`evaluation.tables.significance_table` writes (a test compares them).
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from urllib.parse import urlencode

import django_tables2
import numpy as np
import pandas as pd
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django_tables2.data import TableListData

from evaluation import cache, selectors, tables
from evaluation.access import results_view
from evaluation.heatmap import CLASSES, heatmap_svg
from evaluation.scoring import EvaluationError
from evaluation.tables import _fmt, _matrix_table, _MatrixRow, _run_columns
from evaluation.views import _choices, _error_page
from workbench.collections.selectors import may_organize

__all__ = ["FrameRecords", "significance", "significance_matrix_table", "significance_numbers"]


class FrameRecords(Sequence):
    """A frame's rows as dicts (the values ``DataFrame.to_dict("records")`` gives), each made when asked
    for: a page of 100 pairs costs 100 dicts, not 124,750. Sorting (django-tables2 sorts a list in place)
    makes them all once."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._columns = {c: frame[c].tolist() for c in frame.columns}
        self._n = len(frame)
        self._rows: list[dict] | None = None

    def _row(self, i: int) -> dict:
        return {c: values[i] for c, values in self._columns.items()}

    def _all(self) -> list[dict]:
        if self._rows is None:
            self._rows = [self._row(i) for i in range(self._n)]
        return self._rows

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index):
        if self._rows is not None:
            return self._rows[index]
        if isinstance(index, slice):
            return [self._row(i) for i in range(*index.indices(self._n))]
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(index)
        return self._row(index)

    def __iter__(self):
        return iter(self._all()) if self._rows is not None else (self._row(i) for i in range(self._n))

    def sort(self, *, key=None, reverse: bool = False) -> None:
        self._all().sort(key=key, reverse=reverse)


def _td(text: str, *, css: str = "", title: str = "") -> str:
    """:func:`evaluation.tables._td` without a link, escaping with the standard library (what Django's
    ``escape`` calls) rather than through Django's lazy-string wrapper, 25,000 times a page."""
    attrs = (f' class="{css}"' if css else "") + (f' title="{html.escape(title)}"' if title else "")
    return f"<td{attrs}>{html.escape(text)}</td>"


def significance_matrix_table(pairs: pd.DataFrame, *, measure: str, test: str, correction: str, run_url=None,
                              request=None, prefix: str = "m-", per_page: int = 50):
    """:func:`evaluation.tables.significance_table` of the selector's frame (same rows, cells, CSV)."""
    if not len(pairs):
        return tables.significance_table([], measure=measure, test=test, correction=correction, run_url=run_url,
                                         request=request, prefix=prefix, per_page=per_page)
    run_a, run_b = pairs["run_a"].tolist(), pairs["run_b"].tolist()
    means: dict[str, float] = {}
    for a, mean_a, b, mean_b in zip(run_a, pairs["mean_a"].tolist(), run_b, pairs["mean_b"].tolist(), strict=True):
        means.setdefault(a, mean_a)
        means.setdefault(b, mean_b)
    order = sorted(means, key=lambda tag: -means[tag])  # stable: ties keep the selector's order
    keys = _run_columns(order)
    index = {tag: i for i, tag in enumerate(order)}
    ia = np.fromiter((index[a] for a in run_a), dtype=np.int64, count=len(run_a))
    ib = np.fromiter((index[b] for b in run_b), dtype=np.int64, count=len(run_b))

    def square(column: str, sign: float = 1.0) -> np.ndarray:
        values = pairs[column].to_numpy(dtype=float)
        out = np.zeros((len(order), len(order)))
        out[ib, ia] = sign * values
        out[ia, ib] = values  # a pair listed (a, b) gives the cell (a, b), its opposite the cell (b, a)
        return out

    diff, p_value, p_adjusted = square("mean_diff", -1.0), square("p_value"), square("p_adjusted")
    significant = square("significant") > 0
    how = f"{test} test, {correction} correction"
    link = tables._td  # the run's own cell, with its link, exactly as the other table writes it

    def write(row: dict) -> tuple[str, list[str]]:
        a = row["run"]
        i = index[a]
        cells = [link(a, url=run_url(a) if run_url else ""), _td(_fmt(row["mean"]))]
        values = [a, _fmt(row["mean"])]
        for j, (b, key) in enumerate(keys.items()):
            if i == j:
                cells.append(_td("—", css="self"))
                values.append("—")
                continue
            value, mark = row[key], "*" if significant[i, j] else ""
            cells.append(_td(f"{value:+.4f}".replace("-", "−") + mark, css="sig" if mark else "",
                             title=f"{a} − {b}: p = {_fmt(float(p_value[i, j]))}, adjusted "
                                   f"{_fmt(float(p_adjusted[i, j]))} ({how})"))
            values.append(f"{value:.4f}{mark}")
        return mark_safe("".join(cells)), values  # noqa: S308 - escaped in _td

    np.fill_diagonal(diff, 0.0)
    columns_keys = list(keys.values())
    rows = [_MatrixRow({"run": a, "mean": means[a], **dict(zip(columns_keys, diff[i].tolist(), strict=True))}, write)
            for i, a in enumerate(order)]
    columns = [("run", django_tables2.Column(verbose_name="Run")),
               ("mean", django_tables2.Column(verbose_name=f"Mean {measure}"))]
    columns += [(key, django_tables2.Column(verbose_name=tag, attrs={"th": {"title": f"row run's mean − mean of {tag}"}}))
                for tag, key in keys.items()]
    return _matrix_table(rows, columns, prefix=prefix, request=request, per_page=per_page,
                         label="Adjusted p-values for every pair of runs", empty="Fewer than two runs or topics.")


def _pairs(request: HttpRequest, collection) -> tuple[dict, str, pd.DataFrame]:
    """(the choices, the measure, every pair) of the query: the pairs computed once per version of the collection
    and choice (:func:`evaluation.selectors.significance_matrix`)."""
    measure = request.GET.get("measure", "map")
    choice = _choices(request, collection)
    pairs = selectors.significance_matrix(collection, measure=measure, test=choice["test"],
                                          correction=choice["correction"], qrels_policy=choice["qrels_policy"],
                                          assessor=choice["assessor"])
    return choice, measure, pairs


def _tables(request: HttpRequest, collection, choice: dict, measure: str, pairs: pd.DataFrame):
    """The run-by-run table of mean differences and the table of every pair (paged, sortable, exported)."""
    run_link = lambda tag: reverse("evaluation:run", args=[collection.slug, tag])  # noqa: E731
    matrix_table = significance_matrix_table(pairs, measure=measure, test=choice["test_label"],
                                             correction=choice["correction_label"], run_url=run_link,
                                             request=request, prefix="m-")
    records = TableListData(FrameRecords(pairs.astype({"significant": bool})))  # as is: not copied into a list
    return matrix_table, tables.pairs_table(records, collection, request)


def _tables_html(request: HttpRequest, collection, choice: dict, measure: str, *found) -> list[str]:
    """The tables' HTML, the same for every visitor asking the same query: rendered once per version of the
    collection, choice and query string (a 143-run matrix is most of the numbers page's time)."""
    key = (cache.version(collection), "significance tables", measure, choice["test"], choice["correction"],
           choice["qrels_policy"], choice["assessor"], request.GET.urlencode())
    return cache.cached(key, lambda: [mark_safe(table.as_html(request)) for table in found])  # noqa: S308 - django-tables2's


def _heatmap(collection, choice: dict, measure: str, pairs: pd.DataFrame) -> tuple[str, int]:
    """:func:`evaluation.heatmap.heatmap_svg` of the pairs, drawn once per version of the collection and choice
    (the same key as the pairs': a page shown again only reads it), or the board job's for its choice."""
    if not len(pairs):
        return "", 0
    key = (cache.version(collection), "significance heatmap", measure, choice["test"], choice["correction"],
           choice["qrels_policy"], choice["assessor"])
    options = {"measure": measure, "test": choice["test"], "correction": choice["correction"],
               "qrels_policy": choice["qrels_policy"], "assessor": choice["assessor"]}
    return cache.cached(key, lambda: selectors.stored_heatmap(collection, **options)  # the board job's
                        or heatmap_svg(pairs, measure=measure))


def _context(request: HttpRequest, collection, choice: dict, measure: str, pairs: pd.DataFrame) -> dict:
    return {"collection": collection, "measure": measure, "choice": choice,
            "n_significant": int(pairs["significant"].sum()) if len(pairs) else 0, "n_pairs": len(pairs),
            "query": tables.query_without_export(request), "organizer": may_organize(request.user, collection),
            "choice_query": urlencode([(k, v) for k, v in request.GET.items() if not k.startswith(("m-", "p-", "_"))])}


def _export_name(collection, choice: dict, measure: str) -> str:
    return f"{collection.slug}.significance.{measure}.{choice['test']}.{choice['correction']}"


@results_view()
def significance(request: HttpRequest, collection) -> HttpResponse:
    """The heatmap of every pair and how many differ. The tables of numbers (a 143-run track's are megabytes)
    are one click away (:func:`significance_numbers`, loaded into the page when its "numbers" are opened); a
    query that sorts or pages them (``m-``/``p-``) or exports one shows them here, as before."""
    try:
        choice, measure, pairs = _pairs(request, collection)
    except (EvaluationError, ValueError) as exc:
        return _error_page(request, collection, str(exc))
    inline = (any(k.startswith(("m-", "p-")) for k in request.GET) or bool(request.GET.get("_export"))
              or not len(pairs))  # no picture: the (empty) tables say why
    matrix_table = pairs_table = None
    if inline:
        matrix_table, pairs_table = _tables(request, collection, choice, measure, pairs)
        exported = tables.table_export(request, [matrix_table, pairs_table], _export_name(collection, choice, measure))
        if exported:
            return exported
    heatmap, n_runs = _heatmap(collection, choice, measure, pairs)
    tables_html = _tables_html(request, collection, choice, measure, matrix_table, pairs_table) if inline else None
    return render(request, "evaluation/significance.html", {
        **_context(request, collection, choice, measure, pairs), "tables_html": tables_html, "heatmap": mark_safe(heatmap), "n_runs": n_runs, "classes": CLASSES,  # noqa: S308 - escaped in heatmap_svg
        "table_open": inline or not heatmap})


@results_view()
def significance_numbers(request: HttpRequest, collection) -> HttpResponse:
    """The numbers of the significance page: the run-by-run table of mean differences and every pair with its
    p-values, sortable, paged and exported as CSV."""
    try:
        choice, measure, pairs = _pairs(request, collection)
    except (EvaluationError, ValueError) as exc:
        return _error_page(request, collection, str(exc))
    matrix_table, pairs_table = _tables(request, collection, choice, measure, pairs)
    exported = tables.table_export(request, [matrix_table, pairs_table], _export_name(collection, choice, measure))
    if exported:
        return exported
    return render(request, "evaluation/significance_numbers.html", {
        **_context(request, collection, choice, measure, pairs),
        "tables_html": _tables_html(request, collection, choice, measure, matrix_table, pairs_table)})

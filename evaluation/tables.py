import django_tables2 as tables
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe
from django_tables2 import RequestConfig
from django_tables2.export import TableExport

from evaluation.headings import BreakableHeadings, breakable
from workbench.formats.spreadsheet import safe_values
from workbench.formats.vocabulary import Choice, Vocabulary


class RunTable(tables.Table):
    tag = tables.Column(verbose_name="Run")
    team = tables.Column()
    contributed = tables.BooleanColumn(verbose_name="Contributed to the pool", yesno="yes,no")
    contributes = tables.BooleanColumn(verbose_name="Offered to the pool", yesno="yes,no")
    pool_priority = tables.Column(verbose_name="Priority")
    num_topics = tables.Column(verbose_name="Topics")
    num_entries = tables.Column(verbose_name="Entries")
    imported_at = tables.DateTimeColumn(verbose_name="Imported", format="Y-m-d H:i")

    class Meta:
        attrs = {"class": "data"}
        order_by = ("tag",)


class TopicTable(tables.Table):
    qid = tables.Column(verbose_name="Topic", linkify=lambda record: record["url"])
    title = tables.Column()
    pool_size = tables.Column(verbose_name="Pooled")
    judged = tables.Column(verbose_name="Judged")
    relevant = tables.Column(verbose_name="Relevant")

    class Meta:
        attrs = {"class": "data"}


def _fmt(value, digits: int = 4) -> str:
    return "—" if value is None or value != value else f"{value:.{digits}f}"


def leaderboard_table(board, *, run_url) -> tables.Table:
    """A django-tables2 table of a Leaderboard: one column per measure (mean, with its CI on hover),
    the significance letters, judged@10, the robust measures and the pool-bias flags."""
    robust = [m for m in board.robust_measures if m not in board.measures]
    rows = []
    for r in board.runs:
        row = {"rank": r.rank, "tag": r.tag, "team": r.team, "contributed": "yes" if r.contributed else "no",
               "letter": r.letter, "judged_at_10": r.judged_at_10, "flags": "; ".join(r.flags), "_ci": r.ci,
               "_url": run_url(r.tag)}
        row.update({f"m_{i}": r.measures.get(name) for i, name in enumerate(board.measures)})
        row.update({f"x_{i}": r.robust.get(name) for i, name in enumerate(robust)})
        rows.append(row)

    class MeasureColumn(tables.Column):
        def __init__(self, name, **kwargs):
            self.measure = name
            super().__init__(**kwargs)

        def render(self, value, record):
            low, high = record["_ci"].get(self.measure, (None, None))
            if low is None:
                return _fmt(value)
            return format_html('<span title="95% CI {} to {}">{}</span>', _fmt(low), _fmt(high), _fmt(value))

        def value(self, value):
            return _fmt(value)

    class NumberColumn(tables.Column):
        def render(self, value):
            return _fmt(value)

        def value(self, value):
            return _fmt(value)

    class RunColumn(tables.Column):
        def render(self, value, record):
            if record["flags"]:  # beside the name (the reason on hover, in full in the Flags column)
                return format_html('<a href="{}">{}</a> <span class="flag" title="{}" aria-label="flagged: {}">'
                                   '&#9873; flagged</span>', record["_url"], value, record["flags"], record["flags"])
            return format_html('<a href="{}">{}</a>', record["_url"], value)

        def value(self, value):
            return value

    extra = [("rank", tables.Column(verbose_name="#")), ("tag", RunColumn(verbose_name="Run")),
             ("team", tables.Column(verbose_name="Team")), ("contributed", tables.Column(verbose_name="Pooled"))]
    extra += [(f"m_{i}", MeasureColumn(name, verbose_name=breakable(name))) for i, name in enumerate(board.measures)]
    extra += [("letter", tables.Column(verbose_name="Group", attrs={"th": {"title": "Runs sharing a letter are "
              "not significantly different on the first measure"}, "td": {"class": "group"}}))]
    extra += [("judged_at_10", NumberColumn(verbose_name="judged@10"))]
    extra += [(f"x_{i}", NumberColumn(verbose_name=breakable(name))) for i, name in enumerate(robust)]
    extra += [("flags", tables.Column(verbose_name="Flags", orderable=False, attrs={"td": {"class": "flags"}}))]

    class LeaderboardTable(BreakableHeadings):
        class Meta:
            attrs = {"class": "data leaderboard"}
            row_attrs = {"class": lambda record: "flagged" if record["flags"] else ""}

    return LeaderboardTable(rows, extra_columns=extra, prefix="l-")


class _Number(tables.Column):
    def __init__(self, *args, digits: int = 4, **kwargs):
        self.digits = digits
        super().__init__(*args, **kwargs)

    def render(self, value):
        return _fmt(value, self.digits)

    def value(self, value):
        return _fmt(value, self.digits)


def rows_table(rows: list[dict], columns: list[tuple], *, prefix: str, request=None, per_page: int = 50,
               label: str = "") -> tables.Table:
    """A sortable, paginated django-tables2 table (CSV export with ``?_export=csv``) from rows of dicts.

    ``columns``: (key, heading, kind) with kind one of "text", "int", "num" (4 decimals), "num1",
    "yesno", or a callable ``record -> url`` to link the value.
    """
    extra = []
    for key, heading, kind in columns:
        if kind == "num":
            column = _Number(verbose_name=heading)
        elif kind == "num1":
            column = _Number(verbose_name=heading, digits=1)
        elif kind == "yesno":
            column = tables.BooleanColumn(verbose_name=heading, yesno="yes,no")
        elif callable(kind):
            column = tables.Column(verbose_name=heading, linkify=kind)
        else:
            column = tables.Column(verbose_name=heading)
        extra.append((key, column))

    class RowsTable(tables.Table):
        class Meta:
            attrs = {"class": "data", **({"aria-label": label} if label else {})}

    table = RowsTable(rows, extra_columns=extra, prefix=prefix)
    if request is not None:
        RequestConfig(request, paginate={"per_page": per_page}).configure(table)
    return table


# --- matrices: one column per run -----------------------------------------------------------------

def _run_columns(order: list[str]) -> dict[str, str]:
    """Column keys of a run matrix: ``c0``, ``c1``, ... (run tags may hold dots, which accessors would split)."""
    return {tag: f"c{i}" for i, tag in enumerate(order)}


class _MatrixTable(tables.Table):
    """A run-by-run matrix. django-tables2 sorts (by the numbers under each column key), pages, draws the
    headings with their sort links and exports; each row carries its cells already written out, as HTML
    (``cells_html``, drawn by ``evaluation/_matrix_table.html``) and as CSV values (``cells_csv``), because
    with 150 runs a page holds 7,500 cells and django-tables2's per-cell rendering takes seconds over them."""

    class Meta:
        template_name = "evaluation/_matrix_table.html"

    def as_values(self, exclude_columns=None):
        yield [str(column.header) for column in self.columns.iterall()]
        for row in self.rows:
            yield row.record["cells_csv"]


class _MatrixRow(dict):
    """A matrix row: the numbers to sort by under the column keys; ``cells_html`` and ``cells_csv`` are written
    out by ``write(row)`` on first use, so that only the rows of the page shown (or exported) pay for it."""

    def __init__(self, values: dict, write) -> None:
        super().__init__(values)
        self._write = write

    def __missing__(self, key):
        if key not in ("cells_html", "cells_csv"):
            raise KeyError(key)
        html, csv = self._write(self)
        self["cells_html"], self["cells_csv"] = html, csv
        return self[key]


def _matrix_table(rows: list[dict], columns: list[tuple], *, prefix: str, label: str, request, per_page: int,
                  empty: str) -> tables.Table:
    class MatrixTable(_MatrixTable):
        class Meta(_MatrixTable.Meta):
            attrs = {"class": "data matrix", "aria-label": label}
            empty_text = empty

    table = MatrixTable(rows, extra_columns=columns, prefix=prefix)
    if request is not None:
        RequestConfig(request, paginate={"per_page": per_page}).configure(table)
    return table


def _td(text: str, *, css: str = "", title: str = "", url: str = "") -> str:
    attrs = (f' class="{css}"' if css else "") + (f' title="{escape(title)}"' if title else "")
    body = f'<a href="{escape(url)}">{escape(text)}</a>' if url else escape(text)
    return f"<td{attrs}>{body}</td>"


def significance_table(pairs: list[dict], *, measure: str, test: str, correction: str, run_url=None,
                       request=None, prefix: str = "m-", per_page: int = 50) -> tables.Table:
    """The pairwise significance matrix as a django-tables2 table: one row and one column per run, best mean
    first; a cell is the row run's mean minus the column run's mean, marked ``*`` (and class ``sig``) when
    the adjusted p-value is below alpha, with both p-values and the test in its ``title``. Sorting a run's
    column sorts by that difference; CSV cells are the difference to 4 decimals, ``*`` when significant,
    ``—`` on the diagonal.

    ``pairs``: rows of :func:`evaluation.selectors.significance_matrix` (run_a, run_b, mean_a, mean_b,
    mean_diff = mean_a - mean_b, p_value, p_adjusted, significant).
    """
    means: dict[str, float] = {}
    cells: dict[tuple[str, str], dict] = {}
    for pair in pairs:
        means.setdefault(pair["run_a"], pair["mean_a"])
        means.setdefault(pair["run_b"], pair["mean_b"])
        cells[(pair["run_a"], pair["run_b"])] = pair
    order = sorted(means, key=lambda tag: -means[tag])  # stable: ties keep the selector's order
    keys = _run_columns(order)
    how = f"{test} test, {correction} correction"

    def write(row: dict) -> tuple[str, list[str]]:
        a = row["run"]
        html = [_td(a, url=run_url(a) if run_url else ""), _td(_fmt(row["mean"]))]
        values = [a, _fmt(row["mean"])]
        for b, key in keys.items():
            if a == b:
                html.append(_td("—", css="self"))
                values.append("—")
                continue
            pair = cells.get((a, b)) or cells[(b, a)]
            diff, mark = row[key], "*" if pair["significant"] else ""
            html.append(_td(f"{diff:+.4f}".replace("-", "−") + mark, css="sig" if mark else "",
                            title=f"{a} − {b}: p = {_fmt(pair['p_value'])}, adjusted {_fmt(pair['p_adjusted'])} "
                                  f"({how})"))
            values.append(f"{diff:.4f}{mark}")
        return mark_safe("".join(html)), values  # escaped in _td

    rows = []
    for a in order:
        row = {"run": a, "mean": means[a]}
        for b, key in keys.items():
            if a == b:
                row[key] = 0.0
            elif (a, b) in cells:
                row[key] = float(cells[(a, b)]["mean_diff"])
            else:
                row[key] = -float(cells[(b, a)]["mean_diff"])
        rows.append(_MatrixRow(row, write))
    columns = [("run", tables.Column(verbose_name="Run")), ("mean", tables.Column(verbose_name=f"Mean {measure}"))]
    columns += [(key, tables.Column(verbose_name=tag, attrs={"th": {"title": f"row run's mean − mean of {tag}"}}))
                for tag, key in keys.items()]
    return _matrix_table(rows, columns, prefix=prefix, request=request, per_page=per_page,
                         label="Adjusted p-values for every pair of runs", empty="Fewer than two runs or topics.")


def overlap_table(overlap: dict[str, dict[str, int]], *, run_url=None, request=None, prefix: str = "o-",
                  per_page: int = 50) -> tables.Table:
    """The run-to-run overlap matrix of a pool (``{run: {run: shared pooled pairs}}``) as a django-tables2
    table: one row and one column per contributing run (by tag), the diagonal (class ``self``) the run's own
    count. Sorting a run's column sorts by the pairs shared with that run."""
    order = sorted(overlap)  # by tag: the statistics' own order is not guaranteed
    keys = _run_columns(order)
    def write(row: dict) -> tuple[str, list[str]]:
        a = row["run"]
        html = [_td(a, url=run_url(a) if run_url else "")]
        html += [_td(str(row[key]), css="self" if a == b else "") for b, key in keys.items()]
        return mark_safe("".join(html)), [a, *(str(row[key]) for key in keys.values())]  # escaped in _td

    rows = [_MatrixRow({"run": a, **{key: int(overlap[a].get(b, 0)) for b, key in keys.items()}}, write)
            for a in order]
    columns = [("run", tables.Column(verbose_name="Run"))]
    columns += [(key, tables.Column(verbose_name=tag)) for tag, key in keys.items()]
    return _matrix_table(rows, columns, prefix=prefix, request=request, per_page=per_page,
                         label="Run-to-run overlap", empty="No run contributed to this pool.")


# --- the report tables of the results pages -------------------------------------------------------

def _topic_link(collection, key: str = "qid"):
    return lambda record: reverse("evaluation:topic", args=[collection.slug, record[key]])


def _run_link(collection, key: str = "run"):
    return lambda record: reverse("evaluation:run", args=[collection.slug, record[key]])


def run_report_table(rows: list[dict], collection, tag: str, measure: str, request) -> tables.Table:
    """A run's score per topic against the best, median and worst of all runs (the TREC appendix view)."""
    return rows_table(rows, [
        ("qid", "Topic", _topic_link(collection)),
        ("score", tag, "num"), ("best", "Best", "num"), ("median", "Median", "num"), ("worst", "Worst", "num"),
        ("best_run", "Best run", "text"), ("has_results", "Has results", "yesno")],
        prefix="t-", request=request, per_page=100, label=f"{measure} per topic")


def depth_table(rows: list[dict], request) -> tables.Table:
    return rows_table(rows, [
        ("depth", "Depth", "int"), ("pool_size", "Pool size", "int"), ("judged", "Judged", "int"),
        ("relevant", "Relevant", "int")], prefix="d-", request=request, label="Relevant found per depth")


def topic_runs_table(rows: list[dict], collection, measures: list[str], request) -> tables.Table:
    return rows_table(rows, [
        ("run", "Run", _run_link(collection)),
        ("team", "Team", "text"), ("contributed", "Pooled", "yesno"), *[(m, m, "num") for m in measures]],
        prefix="r-", request=request, per_page=100, label="Runs on this topic")


def pairs_table(records, collection, request) -> tables.Table:
    """Every pair of runs of the significance page (``records``: a sequence of dicts, ``significant`` a bool)."""
    return rows_table(records, [
        ("run_a", "Run A", _run_link(collection, "run_a")),
        ("run_b", "Run B", _run_link(collection, "run_b")),
        ("mean_a", "Mean A", "num"), ("mean_b", "Mean B", "num"), ("mean_diff", "Difference", "num"),
        ("statistic", "Statistic", "num"), ("p_value", "p", "num"), ("p_adjusted", "Adjusted p", "num"),
        ("significant", "Significant", "yesno"), ("effect_size", "Effect size (d_z)", "num"),
        ("ci_low", "95% CI low", "num"), ("ci_high", "95% CI high", "num")],
        prefix="p-", request=request, per_page=100, label="Every pair of runs")


def leave_one_out_table(rows: list[dict], collection, request) -> tables.Table:
    return rows_table(rows, [
        ("unit", "Left out", "text"), ("run", "Run", _run_link(collection)), ("unique_judged", "Unique judged", "int"),
        ("unique_relevant", "Unique relevant", "int"), ("score", "Score", "num"),
        ("score_loo", "Without its documents", "num"), ("change", "Change", "num"), ("change_pct", "Change %", "num1"),
        ("rank", "Rank", "int"), ("rank_loo", "Rank without", "int")], prefix="l-", request=request, per_page=100,
        label="Leave-one-out")


def recall_estimates_table(rows: list[dict], collection, request) -> tables.Table:
    return rows_table(rows, [
        ("qid", "Topic", _topic_link(collection)),
        ("known_relevant", "Known relevant", "int"), ("estimate", "Estimate", "num1"), ("ci_low", "95% low", "num1"),
        ("ci_high", "95% high", "num1"), ("method", "Method", "text"), ("note", "Note", "text")],
        prefix="e-", request=request, per_page=100, label="Recall estimates")


def run_recall_table(rows: list[dict], collection, request) -> tables.Table:
    return rows_table(rows, [
        ("run", "Run", _run_link(collection)), ("contributed", "Pooled", "yesno"),
        ("relevant_retrieved", "Relevant retrieved", "int"),
        ("recall_known", "Recall (known relevant)", "num"), ("recall_estimated", "Recall (estimated total)", "num")],
        prefix="r-", request=request, per_page=100, label="Recall of each run")


def contributions_table(rows: list[dict], collection, request) -> tables.Table:
    """Every run of the collection: whether the pool was built from it (contributed, the leaderboard's
    flag), whether it was offered (eligible), and what it brought (and found relevant, once judged)."""
    with_qrels = any("relevant" in row for row in rows)
    return rows_table(rows, [
        ("tag", "Run", _run_link(collection, "tag")), ("team", "Team", "text"),
        ("contributed", "Contributed to this pool", "yesno"), ("offered", "Offered to the pool", "yesno"),
        ("documents", "Pooled documents it retrieved", "int"), ("unique", "Only this run", "int"),
        *([("relevant", "Relevant", "int"), ("unique_relevant", "Relevant only this run", "int")] if with_qrels else [])],
        prefix="c-", request=request, per_page=100, label="Contributions per run")


def pool_topics_table(rows: list[dict], collection, request) -> tables.Table:
    return rows_table(rows, [
        ("qid", "Topic", _topic_link(collection)),
        ("pool_size", "Pooled", "int"), ("judged", "Judged", "int"), ("relevant", "Relevant", "int")],
        prefix="t-", request=request, per_page=100, label="Pool per topic")


#: which topics the scores average over when some are only partly judged
TOPIC_SCOPES = Vocabulary("topics", [Choice("complete", "fully judged only"),
                                     Choice("all", "all judged, partial ones too")])
#: the two "judged" figures, named apart wherever a table shows them (see selectors.JudgedFigures)
JUDGED_IN_POOL = "Judged in the pool"
JUDGMENTS_ALL = "Judgments (incl. outside the pool)"
JUDGED_COLUMNS = [("judged", tables.Column(verbose_name=JUDGED_IN_POOL)),
                  ("judgments", tables.Column(verbose_name=JUDGMENTS_ALL))]


def table_export(request: HttpRequest, tables_: list, filename: str) -> HttpResponse | None:
    """``?_export=csv&_table=PREFIX`` (or ``json``): that table, every row, not one page (CSV cells a
    spreadsheet would read as formulas made text: ``workbench.formats.spreadsheet``)."""
    wanted, form = request.GET.get("_table"), request.GET.get("_export")
    for table in tables_:
        if form in ("csv", "json") and table.prefix == wanted:
            return TableExport(form, safe_values(table) if form == "csv" else table).response(f"{filename}.{table.prefix.strip('-')}.{form}")
    return None


def query_without_export(request: HttpRequest) -> str:
    """The page's query string (measure, test, sorting...) without ``_export``/``_table``, for CSV links."""
    params = request.GET.copy()
    for key in ("_export", "_table"):
        params.pop(key, None)
    return params.urlencode()

import django_tables2 as tables


class RunTable(tables.Table):
    tag = tables.Column(verbose_name="Run")
    team = tables.Column()
    contributes = tables.BooleanColumn(verbose_name="Contributed to the pool", yesno="yes,no")
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


def leaderboard_table(board, *, leaderboard_url: str, run_url) -> tables.Table:
    """A django-tables2 table of a Leaderboard: one column per measure (mean, with its CI on hover),
    the significance letters, judged@10, the robust measures and the pool-bias flags."""
    from django.utils.html import format_html

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
            return format_html('<a href="{}">{}</a>', record["_url"], value)

        def value(self, value):
            return value

    extra = [("rank", tables.Column(verbose_name="#")), ("tag", RunColumn(verbose_name="Run")),
             ("team", tables.Column(verbose_name="Team")), ("contributed", tables.Column(verbose_name="Pooled"))]
    extra += [(f"m_{i}", MeasureColumn(name, verbose_name=name)) for i, name in enumerate(board.measures)]
    extra += [("letter", tables.Column(verbose_name="Group", attrs={"th": {"title": "Runs sharing a letter are "
              "not significantly different on the first measure"}}))]
    extra += [("judged_at_10", NumberColumn(verbose_name="judged@10"))]
    extra += [(f"x_{i}", NumberColumn(verbose_name=name)) for i, name in enumerate(robust)]
    extra += [("flags", tables.Column(verbose_name="Flags", orderable=False))]

    class LeaderboardTable(tables.Table):
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
    from django_tables2 import RequestConfig

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

"""The two run-by-run matrices as django-tables2 tables: the significance page (mean differences, marks and
p-values) and the pool page (run-to-run overlap): their cells, sorting by any column, paging and CSV export.

Significance track (3 topics, one relevant document r per topic, AP = 1 / rank of r):

    rank of r   301 302 303   MAP
    good          1   1   1   1
    twin          1   1   2   5/6
    mid           2   2   3   4/9
    bad           3   4   5   47/180

good - bad differs by 2/3, 3/4, 4/5 (paired t = 19.0, 2 df, p = 0.003): significant without correction;
good - twin by 0, 0, 1/2 (t = 1, p = 0.42): not significant.
"""

from __future__ import annotations

import csv
import io
from html.parser import HTMLParser

import pytest
from django.test import RequestFactory

from evaluation import selectors
from evaluation.tables import significance_table
from tests import factories
from tests.evaluation.tracks import build_track, run, write_qrels

RANK_OF_R = {"good": (1, 1, 1), "twin": (1, 1, 2), "mid": (2, 2, 3), "bad": (3, 4, 5)}
MAP = {"good": 1.0, "twin": 5 / 6, "mid": 4 / 9, "bad": (1 / 3 + 1 / 4 + 1 / 5) / 3}


class _Tables(HTMLParser):
    """Every <table> of a page: its aria-label, header texts and rows of (text, attributes) cells."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, dict] = {}
        self._table = self._row = self._cell = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "table":
            self._table = {"head": [], "rows": []}
            self.tables[attrs.get("aria-label", f"table {len(self.tables)}")] = self._table
        elif tag == "tr" and self._table is not None:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = {"tag": tag, "text": "", **attrs}

    def handle_data(self, data):
        if self._cell is not None:
            self._cell["text"] += data

    def handle_endtag(self, tag):
        if tag in ("td", "th") and self._cell is not None:
            self._cell["text"] = self._cell["text"].strip()
            self._row.append(self._cell)
            self._cell = None
        elif tag == "tr" and self._row is not None:
            if self._row and all(c["tag"] == "th" for c in self._row):
                self._table["head"] = [c["text"] for c in self._row]
            elif self._row:
                self._table["rows"].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None


def tables_of(response) -> dict[str, dict]:
    assert response.status_code == 200, response.content[:500]
    parser = _Tables()
    parser.feed(response.content.decode())
    return parser.tables


def csv_rows(response) -> list[list[str]]:
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(response.content.decode())))


@pytest.fixture
def ranked(db, tmp_path):
    collection = factories.collection_with_topics()
    qids = ("301", "302", "303")
    for tag, ranks in RANK_OF_R.items():
        ranking = {q: [f"n{i}" for i in range(1, rank)] + ["r"] + [f"m{i}" for i in range(5 - rank)]
                   for q, rank in zip(qids, ranks, strict=True)}
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        run("import_runs", "robust", str(path))
    judgments = {(q, "r"): 1 for q in qids} | {(q, f"n{i}"): 0 for q in qids for i in range(1, 5)}
    run("import_qrels", "robust", write_qrels(tmp_path / "qrels.txt", judgments), "--assessor", "nist")
    return collection


SIG = "/collections/robust/significance/?measure=map&test=t&correction=none"
#: the tables of numbers: a page of their own, one click from the heatmap
NUMBERS = "/collections/robust/significance/numbers/?measure=map&test=t&correction=none"


def test_the_significance_matrix_shows_each_difference_marked_where_significant(client, ranked, organizer):
    client.force_login(organizer)
    table = tables_of(client.get(NUMBERS))["Adjusted p-values for every pair of runs"]
    order = ["good", "twin", "mid", "bad"]
    assert table["head"] == ["Run", "Mean map", *order]
    assert [row[0]["text"] for row in table["rows"]] == order
    cells = {row[0]["text"]: {tag: cell for tag, cell in zip(order, row[2:], strict=True)} for row in table["rows"]}
    for row in table["rows"]:
        assert float(row[1]["text"]) == pytest.approx(MAP[row[0]["text"]], abs=5e-5)
    good_bad = cells["good"]["bad"]
    assert good_bad["text"] == f"+{MAP['good'] - MAP['bad']:.4f}*" and "sig" in good_bad.get("class", "").split()
    assert cells["bad"]["good"]["text"] == f"−{MAP['good'] - MAP['bad']:.4f}*"
    assert cells["good"]["twin"]["text"] == f"+{MAP['good'] - MAP['twin']:.4f}"
    assert "sig" not in cells["good"]["twin"].get("class", "").split()
    assert cells["mid"]["mid"]["text"] == "—" and "self" in cells["mid"]["mid"].get("class", "").split()
    # the p-values are on the cell, as the selector computed them, with the test and correction named
    pairs = selectors.significance_matrix(ranked, measure="map", test="t", correction="none")
    pair = pairs[(pairs["run_a"] == "good") & (pairs["run_b"] == "bad")].iloc[0]
    assert good_bad["title"] == (f"good − bad: p = {pair['p_value']:.4f}, adjusted {pair['p_adjusted']:.4f} "
                                 "(paired t test, no correction)")
    # every mark agrees with the selector, and the summary counts the marked pairs
    marked = {(a, b) for a in order for b in order if cells[a][b]["text"].endswith("*")}
    expected = {(r.run_a, r.run_b) for r in pairs.itertuples() if r.significant}
    assert marked == expected | {(b, a) for a, b in expected}
    body = client.get(SIG).content.decode()
    assert f"{len(expected)} of 6 pairs differ significantly on map" in body
    assert "paired t test, no correction" in body


def test_the_correction_changes_the_marks_and_is_named(client, ranked, organizer):
    """Paired t p-values (2 df): good-bad 0.0028, good-mid 0.0099, mid-bad 0.034, twin-bad 0.054,
    twin-mid 0.073, good-twin 0.42. Uncorrected, three are below 0.05; Bonferroni (x 6) keeps good-bad only."""
    client.force_login(organizer)
    none = client.get(NUMBERS)
    assert "3 of 6 pairs differ significantly" in none.content.decode()
    bonferroni = client.get(NUMBERS.replace("none", "bonferroni"))
    assert "1 of 6 pairs differ significantly" in bonferroni.content.decode()
    assert "paired t test, Bonferroni correction" in bonferroni.content.decode()
    for response, marked in ((none, {"good-bad", "good-mid", "mid-bad"}), (bonferroni, {"good-bad"})):
        rows = tables_of(response)["Adjusted p-values for every pair of runs"]["rows"]
        order = [row[0]["text"] for row in rows]
        found = {f"{row[0]['text']}-{order[i]}" for row in rows for i, cell in enumerate(row[2:])
                 if cell["text"].endswith("*") and order.index(row[0]["text"]) < i}
        assert found == marked


def test_the_significance_matrix_sorts_by_any_column(client, ranked, organizer):
    client.force_login(organizer)
    by_run = tables_of(client.get(NUMBERS + "&m-sort=-run"))["Adjusted p-values for every pair of runs"]
    assert [row[0]["text"] for row in by_run["rows"]] == ["twin", "mid", "good", "bad"]
    # the column of "mid" holds row mean - mean(mid): ascending puts the weakest run first
    headings = tables_of(client.get(NUMBERS))["Adjusted p-values for every pair of runs"]["head"]
    column = f"c{headings.index('mid') - 2}"
    by_mid = tables_of(client.get(NUMBERS + f"&m-sort={column}"))["Adjusted p-values for every pair of runs"]
    assert [row[0]["text"] for row in by_mid["rows"]] == ["bad", "mid", "twin", "good"]
    by_mean = tables_of(client.get(NUMBERS + "&m-sort=mean"))["Adjusted p-values for every pair of runs"]
    assert [row[0]["text"] for row in by_mean["rows"]] == ["bad", "mid", "twin", "good"]


def test_the_significance_matrix_exports_as_csv_with_marks(client, ranked, organizer):
    client.force_login(organizer)
    rows = csv_rows(client.get(NUMBERS + "&_export=csv&_table=m-"))
    assert rows[0] == ["Run", "Mean map", "good", "twin", "mid", "bad"]
    assert [r[0] for r in rows[1:]] == ["good", "twin", "mid", "bad"]
    good = dict(zip(rows[0], rows[1], strict=True))
    bad = dict(zip(rows[0], rows[4], strict=True))
    assert good["bad"] == f"{MAP['good'] - MAP['bad']:.4f}*" and bad["good"] == f"{MAP['bad'] - MAP['good']:.4f}*"
    assert good["twin"] == f"{MAP['good'] - MAP['twin']:.4f}" and good["good"] == "—"
    sorted_rows = csv_rows(client.get(SIG + "&m-sort=-run&_export=csv&_table=m-"))
    assert [r[0] for r in sorted_rows[1:]] == ["twin", "mid", "good", "bad"]  # the export follows the sorting


def test_every_pair_is_listed_with_its_p_values_and_exports(client, ranked, organizer):
    client.force_login(organizer)
    table = tables_of(client.get(NUMBERS))["Every pair of runs"]
    assert len(table["rows"]) == 6
    rows = csv_rows(client.get(SIG + "&_export=csv&_table=p-"))
    assert rows[0][:8] == ["Run A", "Run B", "Mean A", "Mean B", "Difference", "Statistic", "p", "Adjusted p"]
    by_pair = {(r[0], r[1]): dict(zip(rows[0], r, strict=True)) for r in rows[1:]}
    assert len(by_pair) == 6
    assert by_pair[("good", "bad")]["Difference"] == f"{MAP['good'] - MAP['bad']:.4f}"
    assert by_pair[("good", "bad")]["Significant"] == "True" and by_pair[("good", "twin")]["Significant"] == "False"
    assert float(by_pair[("good", "twin")]["p"]) == pytest.approx(0.4226, abs=1e-4)  # t = 1, 2 df


def test_the_significance_matrix_pages_long_lists_of_runs(ranked):
    pairs = selectors.significance_matrix(ranked, measure="map", test="t", correction="none").to_dict("records")
    request = RequestFactory().get("/", {"m-page": "2"})
    table = significance_table(pairs, measure="map", test="t", correction="none", request=request, per_page=3)
    assert table.paginator.num_pages == 2
    assert [row.record["run"] for row in table.page.object_list] == ["bad"]
    assert len(table.columns) == 2 + 4  # every run keeps its column on every page


def test_fewer_than_two_runs_show_an_empty_matrix(client, db, tmp_path, organizer):
    factories.collection_with_topics()
    path = tmp_path / "solo.run"
    path.write_text(factories.run_lines("solo", {"301": ["a"], "302": ["b"]}))
    run("import_runs", "robust", str(path))
    run("import_qrels", "robust", write_qrels(tmp_path / "q.txt", {("301", "a"): 1, ("302", "b"): 0}))
    client.force_login(organizer)
    body = client.get("/collections/robust/significance/").content.decode()
    assert "0 of 0 pairs" in body and "Fewer than two runs or topics." in body  # no picture: the tables, open


# ----------------------------------------------------------------------------------------------- pool
@pytest.fixture
def pooled(db, tmp_path):
    """Depth-2 pool over alpha and beta (late does not contribute): 301 alpha [a b] beta [b x],
    302 alpha [e f] beta [f g]. Both pooled b and f: overlap 2; each run pooled 4 pairs."""
    return build_track(tmp_path)


def test_the_overlap_matrix_counts_shared_pooled_pairs(client, pooled, organizer):
    client.force_login(organizer)
    table = tables_of(client.get("/collections/robust/pool/"))["Run-to-run overlap"]
    assert table["head"] == ["Run", "alpha", "beta"]
    assert [[c["text"] for c in row] for row in table["rows"]] == [["alpha", "4", "2"], ["beta", "2", "4"]]
    assert "self" in table["rows"][0][1].get("class", "").split() and "self" not in table["rows"][0][2].get("class", "").split()


def test_the_overlap_matrix_sorts_by_any_column_and_exports_as_csv(client, pooled, organizer):
    client.force_login(organizer)
    by_alpha = tables_of(client.get("/collections/robust/pool/?o-sort=c0"))["Run-to-run overlap"]
    assert [row[0]["text"] for row in by_alpha["rows"]] == ["beta", "alpha"]  # 2 before 4
    by_run = tables_of(client.get("/collections/robust/pool/?o-sort=-run"))["Run-to-run overlap"]
    assert [row[0]["text"] for row in by_run["rows"]] == ["beta", "alpha"]
    assert csv_rows(client.get("/collections/robust/pool/?_export=csv&_table=o-")) == [
        ["Run", "alpha", "beta"], ["alpha", "4", "2"], ["beta", "2", "4"]]
    sorted_csv = csv_rows(client.get("/collections/robust/pool/?o-sort=c0&_export=csv&_table=o-"))
    assert [r[0] for r in sorted_csv[1:]] == ["beta", "alpha"]
    body = client.get("/collections/robust/pool/").content.decode()
    assert "_export=csv&amp;_table=o-" in body

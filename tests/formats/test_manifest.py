"""A runs manifest (CSV or TSV) gives each run its team, contribution, priority, type and description; every
bad line is named ``manifest.csv:LINE: what``."""

import gzip
import io

import pytest

from workbench.formats import FormatError
from workbench.formats.manifest import header_fields, read_manifest


def _problems(text: str, name: str = "manifest.csv") -> list[str]:
    with pytest.raises(FormatError) as refused:
        read_manifest(io.StringIO(text), name=name)
    return refused.value.problems


def test_a_csv_manifest_gives_each_run_what_its_line_says_and_nothing_for_empty_cells():
    rows = read_manifest(io.StringIO("tag,team,contributes,priority,type,description\n"
                                     "alpha,uni-a,yes,1,automatic,BM25 baseline\n"
                                     "beta,uni-a,no,2,Manual,\"with, a comma\"\n"
                                     "gamma,,,,,\n"), name="manifest.csv")
    assert [(r.tag, r.team, r.contributes, r.priority, r.type, r.description) for r in rows.values()] == [
        ("alpha", "uni-a", True, 1, "automatic", "BM25 baseline"),
        ("beta", "uni-a", False, 2, "manual", "with, a comma"),
        ("gamma", None, None, None, None, None)]


def test_a_tsv_manifest_with_any_subset_of_columns_in_any_order_is_read(tmp_path):
    path = tmp_path / "teams.tsv.gz"
    path.write_bytes(gzip.compress("\ufeffpriority\tTag\tteam\n3\talpha\tuni b\n".encode()))
    rows = read_manifest(path, name="teams.tsv.gz")
    assert (rows["alpha"].team, rows["alpha"].priority, rows["alpha"].contributes) == ("uni b", 3, None)


def test_every_bad_line_is_named_by_its_line_number():
    problems = _problems("tag,contributes,priority\nalpha,maybe,1\nbeta,yes,0\n\nalpha,no,2\ngamma,yes,two\n"
                         "delta,yes,1,extra\n,yes,1\n")
    assert problems == ["manifest.csv:2: contributes 'maybe' is not yes or no",
                        "manifest.csv:3: priority '0' is not a whole number of 1 or more",
                        "manifest.csv:5: run tag 'alpha' appears twice (first at line 2)",
                        "manifest.csv:6: priority 'two' is not a whole number of 1 or more",
                        "manifest.csv:7: 4 cells, the header names 3 columns",
                        "manifest.csv:8: no run tag"]


def test_a_header_without_tag_or_with_an_unknown_column_is_refused_at_line_1():
    assert _problems("team,priority\nuni-a,1\n") == [
        "manifest.csv:1: no 'tag' column: the header row names the columns, 'tag' first"]
    assert _problems("tag,teem\nalpha,uni-a\n", name="m.tsv")[0].startswith("m.tsv:1: unknown column 'teem'")
    assert _problems("") == ["manifest.csv:1: the manifest is empty: a header row (tag,team,contributes,"
                             "priority,type,description) and one line per run"]
    assert _problems("tag,team\n") == ["manifest.csv:2: no runs: one line per run after the header row"]


def test_a_spreadsheet_instead_of_a_csv_file_is_named_as_such():
    with pytest.raises(FormatError) as refused:
        read_manifest(io.BytesIO(b"PK\x03\x04\x14\x00\x06\x00 xl/workbook.xml"), name="teams.xlsx")
    assert refused.value.problems == [
        "teams.xlsx:1: not a CSV or TSV text file (a spreadsheet? save it as CSV, UTF-8)"]


def test_an_ir_metadata_header_declares_team_type_and_description():
    assert header_fields({"ir_metadata": {"actor": {"team": "uni-a"}, "method": {"automatic": False},
                                          "research goal": {"description": " dense retrieval "}}}) == {
        "team": "uni-a", "run_type": "manual", "description": "dense retrieval"}
    assert header_fields({"ir_metadata": {"team": 42, "type": "Feedback", "description": "x"}}) == {
        "team": "42", "run_type": "feedback", "description": "x"}
    assert header_fields({"ir_metadata": {"actor": {"team": True}, "type": "two words"}}) == {}
    assert header_fields(None) == {} and header_fields({"ir_metadata": ["not", "a", "mapping"]}) == {}

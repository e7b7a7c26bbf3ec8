"""The leaderboard's measures are a choice generated from the measure families' declarations: a select of the
families (each with its label), a typed input for the parameters of one that takes them, and the engine's own
checks on whatever is sent."""

from __future__ import annotations

import re

import pytest

from evaluation.engine.spec import SPECS
from tests.evaluation.tracks import MAP, build_track

URL = "/collections/robust/leaderboard/"


@pytest.fixture
def board(tmp_path, organizer, client):
    build_track(tmp_path)
    client.force_login(organizer)
    return client


def _rows(html: str) -> list[tuple[str, str, bool]]:
    """(chosen family, parameters typed, parameter input hidden) per measure row of the page."""
    found = []
    for row in re.findall(r'<div class="measure-row">(.*?)</div>', html, re.S):
        chosen = re.search(r'<option value="([^"]*)"[^>]* selected>', row)
        param = re.search(r'<input type="text" name="param" value="([^"]*)"[^>]*?(hidden)?>', row, re.S)
        found.append((chosen.group(1) if chosen else "", param.group(1), bool(param.group(2))))
    return found


def test_the_page_offers_every_family_that_ranks_runs_with_its_declared_label(board):
    html = board.get(URL).content.decode()
    fieldset = html.split('id="measure-choice"')[1].split("</fieldset>")[0]
    offered = set(re.findall(r'<option value="([^"]+)"', fieldset))
    assert offered == {name for name, spec in SPECS.items() if spec.ranks_runs}
    assert "runid" not in offered and "num_ret" not in offered and "gm_map" not in offered  # they rank nothing
    assert '>nDCG at k (ndcg_cut)</option>' in html and '>Mean average precision (map)</option>' in html
    # the defaults, one row each, then a blank row to add one; map takes no parameters: its input is hidden
    assert _rows(html) == [("map", "", True), ("ndcg_cut", "10", False), ("P", "10", False), ("bpref", "", True),
                           ("recall", "1000", False), ("", "", False)]


def test_rows_of_family_and_parameters_are_the_measures_evaluated(board):
    query = "family=map&param=&family=ndcg_cut&param=5&family=&param=&family=rbp&param=p%3D0.5&_export=json"
    answer = board.get(f"{URL}?{query}").json()
    assert answer["measures"] == ["map", "ndcg_cut_5", "rbp_p=0.5"]
    assert {r["run"]: r["measures"]["map"] for r in answer["runs"]} == pytest.approx(MAP)
    html = board.get(f"{URL}?{query.replace('&_export=json', '')}").content.decode()
    assert _rows(html)[:3] == [("map", "", True), ("ndcg_cut", "5", False), ("rbp", "p=0.5", False)]


def test_the_typed_request_still_works_and_bad_choices_get_one_line(board):
    assert board.get(URL, {"measures": "P.5 map", "_export": "json"}).json()["measures"] == ["P_5", "map"]
    refused = board.get(URL, {"family": "ndcg_cut", "param": "0"})
    assert refused.status_code == 400 and "ndcg_cut: negative cutoff detected" in refused.content.decode()
    unknown = board.get(URL, {"family": "no_such_measure", "param": ""})
    assert unknown.status_code == 400 and "illegal measure &#x27;no_such_measure&#x27;" in unknown.content.decode()

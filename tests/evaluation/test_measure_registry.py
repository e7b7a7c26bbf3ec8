"""The leaderboard's measure registry, its one JSON shape, and what evaluation offers the other apps."""

from __future__ import annotations

import json
import math
import sys

import pytest
from django.apps import apps

from evaluation import selectors
from evaluation.measures import BASE_MEASURES, DEFAULT_MEASURES, ROBUST_MEASURES
from evaluation.reusability import ranking_agreement_rows
from evaluation.scoring import EvaluationError, batches, measure_names
from tests import factories
from tests.evaluation.tracks import QRELS, build_track, run, write_qrels


@pytest.fixture
def track(db, tmp_path):
    return build_track(tmp_path)


def test_every_leaderboard_measure_is_computed_in_the_one_base_pass():
    assert set(measure_names([*DEFAULT_MEASURES, *ROBUST_MEASURES])) <= set(measure_names(BASE_MEASURES))
    assert len(batches(BASE_MEASURES)) == 1  # one engine call serves every page


def test_a_leaderboard_without_measures_shows_the_registry_defaults_and_robust_measures(track):
    board = selectors.leaderboard(track)
    assert board.measures == measure_names(DEFAULT_MEASURES)
    assert board.robust_measures == measure_names(ROBUST_MEASURES)


def test_the_page_and_the_command_print_the_same_leaderboard(client, track, organizer):
    client.force_login(organizer)
    page = client.get("/collections/robust/leaderboard/?measures=map&_export=json").json()
    command = json.loads(run("evaluate", "robust", "-m", "map"))
    assert {k: v for k, v in command.items() if k != "runs"} == {k: v for k, v in page.items() if k != "runs"}
    for on_page, printed in zip(page["runs"], command["runs"], strict=True):
        assert {k: v for k, v in printed.items() if k != "per_topic"} == on_page
    beta = page["runs"][0]
    assert beta["run"] == "beta" and beta["group"] and len(beta["ci95"]["map"]) == 2
    assert list(command["runs"][0]["per_topic"]) == ["301", "302"]


def test_an_interval_that_cannot_be_computed_is_written_as_null(db, tmp_path):
    one_topic = build_track(tmp_path, qrels={k: v for k, v in QRELS.items() if k[0] == "301"})
    board = selectors.leaderboard(one_topic, measures=["map"])
    assert all(math.isnan(r.ci["map"][0]) for r in board.runs)  # one topic: no interval
    record = board.as_dict()
    assert record["runs"][0]["ci95"]["map"] == [None, None]
    json.dumps(record, allow_nan=False)


def test_an_unknown_correction_is_a_clear_error(track):
    with pytest.raises(EvaluationError, match="unknown correction 'bogus'"):
        selectors.significance_matrix(track, measure="map", correction="bogus")


def test_ranking_agreement_rows_need_two_runs_and_two_assessors(db, track, tmp_path):
    assert ranking_agreement_rows(track) == []  # one assessor only
    assert ranking_agreement_rows(factories.collection_with_topics(slug="empty")) == []
    run("import_qrels", "robust", write_qrels(tmp_path / "other.txt", {("301", "a"): 0, ("302", "f"): 1}),
        "--assessor", "second")
    [row] = ranking_agreement_rows(track)
    assert (row["assessor_a"], row["assessor_b"], row["topics"], row["runs"]) == ("nist", "second", 2, 3)


def test_warming_up_imports_the_statistics_library():  # not matplotlib: no page draws with it
    apps.get_app_config("evaluation").warm_up()
    assert "scipy.stats" in sys.modules

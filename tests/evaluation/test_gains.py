"""A collection whose scale gives each grade a gain (0, 0.6, 1): the gain-based measures use those exact
gains, the binary ones still count grade >= relevant_from, and the numbers equal the command line's
``trec_eval --fractional-grades`` on the same judgments written as gains."""

from __future__ import annotations

import io

import pytest

from evaluation import selectors
from evaluation.engine.cli import main
from tests import factories
from tests.evaluation.tracks import RANKINGS, run, write_qrels

GRADED = {("301", "a"): 2, ("301", "b"): 0, ("301", "x"): 1, ("302", "e"): 0, ("302", "f"): 2, ("302", "g"): 1}
SCALE = [{"grade": 0, "label": "Not relevant"}, {"grade": 1, "label": "Relevant", "gain": 0.6},
         {"grade": 2, "label": "Highly relevant", "gain": 1.0}]


@pytest.fixture
def graded_track(db, tmp_path):
    collection = factories.collection_with_topics(grades=SCALE)
    for tag, ranking in RANKINGS.items():
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        run("import_runs", "robust", str(path))
        (tmp_path / "runs").mkdir(exist_ok=True)
        (tmp_path / "runs" / tag).write_text(factories.run_lines(tag, ranking))
    run("import_qrels", "robust", write_qrels(tmp_path / "qrels.txt", GRADED), "--assessor", "nist")
    return collection


def _cli(tmp_path, tag: str, *args) -> dict[str, float]:
    gains = {0: 0, 1: 0.6, 2: 1.0}
    write_qrels(tmp_path / "gains.txt", {key: gains[g] for key, g in GRADED.items()})
    out = io.StringIO()
    assert main([*args, "-m", "ndcg", "-m", "ndcg_cut.2", "-m", "map", "-m", "P.2", str(tmp_path / "gains.txt"),
                 str(tmp_path / "runs" / tag)], out, io.StringIO()) == 0
    return {name: float(value) for name, _, value in (line.split() for line in out.getvalue().splitlines())}


def test_the_leaderboard_uses_the_scale_s_gains_as_trec_eval_fractional_grades_does(graded_track, tmp_path):
    board = selectors.leaderboard(graded_track, measures=["ndcg", "ndcg_cut.2", "map", "P.2"])
    assert {r.tag for r in board.runs} == set(RANKINGS)
    for r in board.runs:
        expected = _cli(tmp_path, r.tag, "--fractional-grades", "-l", "0.6")
        for name in ("ndcg", "ndcg_cut_2", "map", "P_2"):
            assert r.measures[name] == pytest.approx(expected[name], abs=5e-5), (r.tag, name)
    # alpha ranks a (gain 1) first on 301 and e (0) then f (1) on 302; ideal 302: f (1), g (0.6)
    ideal_302 = 1 + 0.6 / 1.584962500721156
    assert board.per_topic["alpha"].loc["302", "ndcg"] == pytest.approx((1 / 1.584962500721156) / ideal_302)


def test_changing_the_gains_changes_the_scores_at_once(graded_track):
    before = selectors.leaderboard(graded_track, measures=["ndcg"]).per_topic["alpha"].loc["302", "ndcg"]
    graded_track.scale = [dict(item, gain={0: 0, 1: 0.1, 2: 1.0}[item["grade"]]) for item in SCALE]
    graded_track.save()
    after = selectors.leaderboard(graded_track, measures=["ndcg"]).per_topic["alpha"].loc["302", "ndcg"]
    assert after == pytest.approx((1 / 1.584962500721156) / (1 + 0.1 / 1.584962500721156)) and after != before

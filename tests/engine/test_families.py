"""RR@k, ERR/nERR@k, F@k and AP@k in both conventions, judged@k in both: by hand through the CLI, and equal
to ranx's mrr@k, f1@k and map@k where ranx has them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.engine.conftest import evaluate
from tests.engine.test_textbook import GRADES, _cli, _random_case


@pytest.fixture
def graded(tmp_path):
    qrels = [f"1 0 d{i} {g}\n" for i, g in enumerate(GRADES, 1)]
    run = [f"1 Q0 d{i} {i} {100 - i} run\n" for i in range(1, 11)]
    return _cli(tmp_path, qrels, run, "err_cut.5,10", "nerr_cut.10", "f_cut.5", "f_minkr_cut.5", "ap_minkr_cut.5",
                "map_cut.5", "judged.20", "judged_min.20", "rr_cut.1")


def _err(grades, k, g_max=3):
    total, go_on = 0.0, 1.0
    for r, g in enumerate(grades[:k], 1):
        stop = (2 ** g - 1) / 2 ** g_max
        total += go_on * stop / r
        go_on *= 1 - stop
    return total


def test_err_and_nerr_by_hand(graded):
    assert graded["err_cut_5"] == pytest.approx(_err(GRADES, 5), abs=5e-5)
    assert graded["err_cut_10"] == pytest.approx(_err(GRADES, 10), abs=5e-5)
    assert graded["nerr_cut_10"] == pytest.approx(_err(GRADES, 10) / _err(sorted(GRADES, reverse=True), 10), abs=5e-5)


def test_f_and_ap_at_k_in_both_conventions_by_hand(graded):
    # relevant (grade >= 1) at ranks 1, 2, 3, 6, 7, 8, 9: R = 7; three in the top 5
    p5, rec5, rec5_minkr = 3 / 5, 3 / 7, 3 / 5
    assert graded["f_cut_5"] == pytest.approx(2 * p5 * rec5 / (p5 + rec5), abs=5e-5)
    assert graded["f_minkr_cut_5"] == pytest.approx(2 * p5 * rec5_minkr / (p5 + rec5_minkr), abs=5e-5)
    assert graded["map_cut_5"] == pytest.approx(3 / 7, abs=5e-5)       # trec_eval's, divided by R
    assert graded["ap_minkr_cut_5"] == pytest.approx(3 / 5, abs=5e-5)  # divided by min(k, R)
    assert graded["judged_20"] == 0.5 and graded["judged_min_20"] == 1.0  # 10 judged of 10 retrieved
    assert graded["rr_cut_1"] == 1.0


def test_rr_at_k_is_zero_when_the_first_relevant_is_below_k():
    qrels = [("1", "a", 0), ("1", "b", 0), ("1", "c", 1)]
    run = [("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0)]
    values = evaluate(qrels, run, ["rr_cut.2,3"]).aggregate
    assert values["rr_cut_2"] == 0.0 and values["rr_cut_3"] == pytest.approx(1 / 3)


@pytest.mark.parametrize("seed", range(4))
def test_rr_f_and_ap_at_k_equal_ranx(seed):
    ranx = pytest.importorskip("ranx")
    qrels, run = _random_case(seed)
    ours = evaluate(qrels, run, ["rr_cut.10", "f_cut.10", "map_cut.10"]).per_topic
    ranx_qrels = ranx.Qrels({t: {d: g for q, d, g in qrels if q == t and g > 0} for t in {q for q, _, _ in qrels}})
    ranx_run = ranx.Run({t: {d: s for q, d, s in run if q == t} for t in {q for q, _, _ in run}})
    theirs = ranx.evaluate(ranx_qrels, ranx_run, ["mrr@10", "f1@10", "map@10"], return_mean=False)
    topics = sorted(ranx_run.keys())
    for column, metric in [("rr_cut_10", "mrr@10"), ("f_cut_10", "f1@10"), ("map_cut_10", "map@10")]:
        assert ours.loc[topics, column].to_numpy() == pytest.approx(np.asarray(theirs[metric]), abs=1e-9), metric
    assert not math.isnan(ours["rr_cut_10"].sum())

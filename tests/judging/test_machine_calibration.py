"""The calibration and agreement core of the machine judges (Django-free), on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judging.machine.calibration import agreement, auc, cross_validate, fit, routed_kappa, topic_z
from judging.machine.openai_chat import parse_grade


def test_auc_counts_the_pairs_a_probability_orders_right():
    # positives .9 and .3 against negatives .8 and .1: 3 of the 4 pairs in the right order
    assert auc([True, False, True, False], [0.9, 0.8, 0.3, 0.1]) == 0.75
    assert auc([True, False], [0.5, 0.5]) == 0.5  # a tie counts half
    assert np.isnan(auc([True, True], [0.1, 0.2]))


def test_z_scores_are_within_each_topic():
    z = topic_z([1.0, 3.0, 10.0, 30.0, 5.0], ["a", "a", "b", "b", "c"])
    assert np.allclose(z[:4], [-0.7071, 0.7071, -0.7071, 0.7071], atol=1e-4) and z[4] == 0


def _frame(rng, topics, flip=()):
    rows = []
    for t in topics:
        for i in range(20):
            relevant = i < 6
            score = (0.8 if relevant else 0.5) + rng.normal(0, 0.05)
            grade = int(relevant) ^ (t in flip)
            rows.append({"qid": t, "docno": f"{t}-{i}", "raw": score, "grade": grade})
    frame = pd.DataFrame(rows)
    frame["z"] = topic_z(frame["raw"], frame["qid"])
    return frame


def test_a_fitted_calibration_grades_held_out_topics_like_the_humans():
    frame = _frame(np.random.default_rng(1), [str(t) for t in range(1, 7)])
    out = cross_validate(frame, scale=(0, 1), relevant_from=1, folds=2)
    figures = agreement(out["grade"], out["predicted"], out["probability"], scale=(0, 1), relevant_from=1)
    assert figures["pairs"] == 120 and figures["kappa_binary"] > 0.9 and figures["auc"] > 0.95
    assert figures["confusion"][0][0] + figures["confusion"][1][1] > 115


def test_a_topic_s_own_grades_never_calibrate_its_predictions():
    topics = [str(t) for t in range(1, 7)]
    plain = cross_validate(_frame(np.random.default_rng(2), topics), scale=(0, 1), relevant_from=1, folds=2)
    flipped = cross_validate(_frame(np.random.default_rng(2), topics, flip={"1"}), scale=(0, 1), relevant_from=1,
                             folds=2)
    # flipping topic 1's human grades changes nothing predicted for topic 1 (it is held out where it is predicted)
    assert (plain[plain.qid == "1"]["predicted"].to_numpy() == flipped[flipped.qid == "1"]["predicted"].to_numpy()).all()


def test_grades_above_relevant_follow_the_humans_share():
    rng = np.random.default_rng(3)
    z = rng.normal(0, 1, 400)
    grades = np.where(z > 1.2, 2, np.where(z > 0.5, 1, 0))
    cal = fit(raw=z, z=z, grades=grades, scale=(0, 1, 2), relevant_from=1)
    predicted = cal.grade(cal.probability(z, z))
    assert abs((predicted == 2).mean() - (grades == 2).mean()) < 0.05
    assert (predicted >= 1).sum() > 0 and cal.trained_on == 400


def test_routing_everything_to_humans_agrees_fully_and_nothing_changes_nothing():
    human, machine = np.array([1, 0, 1, 0, 1, 0]), np.array([0, 0, 1, 1, 1, 0])
    assert routed_kappa(human, machine, np.arange(6), 1.0, relevant_from=1) == 1.0
    assert routed_kappa(human, machine, np.arange(6), 0.0, relevant_from=1) == pytest.approx(1 / 3)


@pytest.mark.parametrize(("reply", "grade"), [("M: 1\nT: 2\n##final score: 2", 2), ("##Final Score: **3**", 3),
                                              ("final score: 1 ... ##final score: 0", 0)])
def test_the_last_final_score_of_a_reply_is_its_grade(reply, grade):
    assert parse_grade(reply, [0, 1, 2, 3]) == grade


@pytest.mark.parametrize(("reply", "why"), [("I think it is relevant", "no '##final score"),
                                            ("##final score: 5", "not on the scale")])
def test_a_reply_without_a_grade_on_the_scale_is_refused(reply, why):
    with pytest.raises(ValueError, match=why):
        parse_grade(reply, [0, 1, 2, 3])

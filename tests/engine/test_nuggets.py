"""Nugget scores and citation support: hand-computed values, edge cases, and nuggetizer's own scorer as peer."""

from __future__ import annotations

import random

import numpy as np
import pytest

from evaluation.engine.nuggets import NuggetScores, mean_scores, nugget_scores, score_table, support_scores


def test_hand_computed_scores_count_partial_support_half_outside_strict():
    scores = nugget_scores(["vital", "vital", "okay", "okay"],
                           ["support", "partial_support", "support", "not_support"])
    assert scores == NuggetScores(strict_vital_score=0.5, strict_all_score=0.5, vital_score=0.75, all_score=0.625)


def test_topic_without_vital_nugget_scores_zero_on_vital_scores():
    scores = nugget_scores(["okay", "okay"], ["support", "partial_support"])
    assert (scores.strict_vital_score, scores.vital_score) == (0.0, 0.0)
    assert (scores.strict_all_score, scores.all_score) == (0.5, 0.75)


def test_empty_bank_and_unsupported_answer_score_zero():
    assert nugget_scores([], []).as_dict() == dict.fromkeys(NuggetScores.__dataclass_fields__, 0.0)
    assert nugget_scores(["vital", "okay"], ["not_support", "not_support"]).all_score == 0.0


def test_answer_without_rows_in_a_table_scores_zero():
    table = score_table(np.array([0, 0, 2]), ["vital", "okay", "vital"], ["support", "support", "partial_support"],
                        n_answers=3)
    assert table["strict_all_score"].tolist() == [1.0, 0.0, 0.0]
    assert table["vital_score"].tolist() == [1.0, 0.0, 0.5]


def test_unknown_labels_are_refused_with_one_line():
    with pytest.raises(ValueError, match="unknown assignment 'supported': expected one of support"):
        nugget_scores(["vital"], ["supported"])
    with pytest.raises(ValueError, match="unknown importance 'high'"):
        nugget_scores(["high"], ["support"])
    with pytest.raises(ValueError, match="2 importances but 1 assignments"):
        nugget_scores(["vital", "okay"], ["support"])


def test_mean_over_answers_is_the_run_score():
    one = nugget_scores(["vital"], ["support"])
    two = nugget_scores(["vital", "okay"], ["partial_support", "not_support"])
    assert mean_scores([one, two]).vital_score == pytest.approx(0.75)
    assert mean_scores([]).all_score == 0.0


def _generated_records(seed: int) -> list[dict]:
    """Many runs x topics x banks, nuggetizer's assign output: some banks without vital nuggets, some empty,
    some answers supporting nothing."""
    rng = random.Random(seed)
    records = []
    for run in range(6):
        for topic in range(25):
            size = rng.choice([0, 1, 3, 8, 20])
            vital_share = rng.choice([0.0, 0.3, 1.0])
            nuggets = [{"text": f"n{k}", "importance": "vital" if rng.random() < vital_share else "okay",
                        "assignment": rng.choice(["support", "partial_support", "not_support"])}
                       for k in range(size)]
            if topic % 7 == 0:
                for nugget in nuggets:
                    nugget["assignment"] = "not_support"
            records.append({"qid": str(topic), "run_id": f"run{run}", "nuggets": nuggets})
    return records


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_scores_equal_nuggetizer_on_generated_assignments(seed):
    metrics = pytest.importorskip("nuggetizer.core.metrics")  # pinned in requirements.txt
    records = _generated_records(seed)
    rows = [(k, n["importance"], n["assignment"]) for k, r in enumerate(records) for n in r["nuggets"]]
    answer, importance, assignment = zip(*rows, strict=True)
    table = score_table(np.array(answer), importance, assignment, n_answers=len(records))
    assert any(not any(n["importance"] == "vital" for n in r["nuggets"]) and r["nuggets"] for r in records)
    for k, record in enumerate(records):
        theirs = metrics.calculate_nugget_scores(record["qid"], record["nuggets"])
        ours = nugget_scores([n["importance"] for n in record["nuggets"]],
                             [n["assignment"] for n in record["nuggets"]])
        for name in ("strict_vital_score", "strict_all_score", "vital_score", "all_score"):
            assert getattr(ours, name) == pytest.approx(getattr(theirs, name), abs=1e-12), (k, name)
            assert table[name][k] == pytest.approx(getattr(theirs, name), abs=1e-12), (k, name)
    for run in {r["run_id"] for r in records}:
        mine = [r for r in records if r["run_id"] == run]
        theirs = metrics.calculate_global_metrics(mine)
        ours = mean_scores([nugget_scores([n["importance"] for n in r["nuggets"]],
                                          [n["assignment"] for n in r["nuggets"]]) for r in mine])
        assert ours.as_dict() == pytest.approx({k: v for k, v in theirs.items() if k != "qid"}, abs=1e-12)


def test_support_precision_and_recall_hand_computed():
    # answer 0: sentence 0 cites A (full) and B (none), sentence 1 cites nothing;
    # answer 1: sentence 2 cites C (partial), sentence 3 cites D (full) and E (partial);
    # answer 2: one sentence, no citation; answer 3: no sentence at all.
    sentence = np.array([0, 0, 2, 3, 3])
    judgment = ["full_support", "no_support", "partial_support", "full_support", "partial_support"]
    precision, recall = support_scores(sentence, judgment, np.array([0, 0, 1, 1, 2]), n_answers=4)
    assert precision.tolist() == [0.5, pytest.approx(2 / 3), 0.0, 0.0]
    assert recall.tolist() == [0.5, 0.75, 0.0, 0.0]


def test_support_refuses_unknown_judgment_and_sentence():
    with pytest.raises(ValueError, match="unknown support judgment 'yes'"):
        support_scores(np.array([0]), ["yes"], np.array([0]))
    with pytest.raises(ValueError, match="names a sentence that is not in sentence_answer"):
        support_scores(np.array([3]), ["full_support"], np.array([0]))

"""The engine's Python API: results shape, batches, input forms, measure parsing, 9.0.8's quirks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from evaluation.engine import Evaluator, MeasureError, Qrels, parse_measures
from tests.engine.conftest import QRELS_A, RUN_A, evaluate, qrels_frame, run_frame


def test_per_topic_frame_has_one_column_per_printed_value_and_topics_in_strcmp_order():
    qrels = QRELS_A + [("10", "a", 1), ("2", "b", 1)]
    run = RUN_A + [("2", "b", 1.0), ("10", "z", 1.0)]
    res = evaluate(qrels, run, ["P.5,10", "ndcg_cut.10", "iprec_at_recall.0", "gm_map"])
    assert list(res.per_topic.index) == ["1", "10", "2"]
    assert list(res.per_topic.columns) == ["iprec_at_recall_0.00", "P_5", "P_10", "ndcg_cut_10"]
    assert set(res.aggregate) == {"gm_map", "iprec_at_recall_0.00", "P_5", "P_10", "ndcg_cut_10"}


def test_batch_evaluation_equals_one_run_at_a_time():
    rng = np.random.default_rng(3)
    qrels = [(str(t), f"d{d}", int(rng.integers(-1, 3))) for t in range(6) for d in range(0, 40, 3)]
    runs = {}
    for k in range(4):
        rows = [(str(t), f"d{d}", float(rng.integers(0, 5))) for t in range(7) for d in range(30)
                if rng.random() < 0.7]
        runs[f"run{k}"] = run_frame(rows).sample(frac=1, random_state=k)
    ev = Evaluator(Qrels.from_frame(qrels_frame(qrels)), ["all_trec", "all_ext"])
    batch = ev.evaluate_many(runs)
    for tag, frame in runs.items():
        single = ev.evaluate(frame, tag=tag)
        pd.testing.assert_frame_equal(batch[tag].per_topic, single.per_topic)
        assert batch[tag].aggregate == single.aggregate


def test_rank_column_and_row_order_are_ignored():
    frame = run_frame(RUN_A)
    shuffled = frame.sample(frac=1, random_state=1).assign(rank=[5, 4, 3, 2, 1])
    qrels = Qrels.from_frame(qrels_frame(QRELS_A))
    ev = Evaluator(qrels, ["map", "P.2"])
    assert ev.evaluate(shuffled).aggregate == ev.evaluate(frame).aggregate


def test_categorical_qids_and_arrow_strings_are_accepted():
    frame = run_frame(RUN_A)
    frame["qid"] = frame["qid"].astype("category")
    frame["docno"] = frame["docno"].astype("string[pyarrow]")
    qrels = qrels_frame(QRELS_A)
    qrels["qid"] = pd.Categorical(qrels["qid"])
    res = Evaluator(Qrels.from_frame(qrels), ["map"]).evaluate(frame)
    assert res.aggregate["map"] == pytest.approx(1 / 3)


def test_a_judgment_given_twice_is_refused():
    with pytest.raises(ValueError, match="judged twice"):
        Qrels.from_frame(qrels_frame([("1", "a", 1), ("1", "a", 0)]))


def test_a_judged_document_retrieved_twice_is_refused():
    with pytest.raises(ValueError, match="more than once"):
        evaluate(QRELS_A, RUN_A + [("1", "d1", 0.5)], ["map"])


def test_measure_requests_parse_like_trec_eval():
    names = [m.names for m in parse_measures(["ndcg_cut.20,5", "P", "P.7", "utility.2,-1,0,0"])]
    assert names == [("P_7",), ("utility_2,-1,0,0",), ("ndcg_cut_5", "ndcg_cut_20")]
    assert parse_measures(None)[0].name == "runid"
    assert [m.name for m in parse_measures(["all_trec"])][-1] == "num_nonrel_judged_ret"
    for bad in ["nonsense", "P.", "P.0", "P.5,5", "ndcg.1=2=3", "utility.1,2"]:
        with pytest.raises(MeasureError):
            parse_measures([bad])


def test_complete_averaging_counts_every_qrels_line_with_positive_grade_for_num_rel():
    qrels = [("1", "a", 1), ("1", "b", 2), ("2", "c", 1)]
    res = evaluate(qrels, [("1", "a", 1.0)], ["num_rel"], relevance_level=2, complete=True)
    assert res.aggregate["num_rel"] == 3    # 9.0.8's m_num_rel.c under -c ignores -l and run topics


def test_gains_closer_than_one_keep_trec_evals_merge_sort_order():
    # 9.0.8 sorts gains with (int)(g1 - g2): 0.5, 0.7 and 0 compare equal and keep their order, so the
    # ideal ranking walks 2 (grade 2), then stops at grade 0 (gain 0, has a document): grades 1 and 3,
    # though positive, never enter the ideal
    qrels = [("1", "a", 3), ("1", "b", 2), ("1", "c", 1), ("1", "d", 0)]
    run = [("1", "a", 4.0), ("1", "b", 3.0), ("1", "c", 2.0)]
    agg = evaluate(qrels, run, ["ndcg.1=0.5,3=0.7"]).aggregate
    dcg = 0.7 + 2 / math.log2(3) + 0.5 / 2
    assert agg["ndcg_1=0.5,3=0.7"] == pytest.approx(dcg / 2)


def test_minus_nan_is_printed_for_zero_over_zero_like_c():
    from evaluation.engine.cli import format_value

    with np.errstate(invalid="ignore"):
        assert format_value(np.float64(0) / np.float64(0), "float") == "  -nan"   # x86's default NaN
    assert format_value(math.inf, "float") == "   inf"
    assert format_value(3, "long") == "3" and format_value("01", "string") == "'01'"


def test_judged_only_gives_nan_interpolated_precision_when_nothing_judged_was_retrieved():
    with np.errstate(invalid="ignore"):
        agg = evaluate(QRELS_A, [("1", "x", 1.0)], ["iprec_at_recall.0"], judged_only=True).aggregate
    assert math.isnan(agg["iprec_at_recall_0.00"])   # 9.0.8 divides 0 by 0 retrieved (pytrec_eval agrees)

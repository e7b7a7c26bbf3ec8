"""Qrels.without (leave-one-out's qrels): the same scores as qrels built from the remaining lines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.engine import Evaluator, Qrels

MEASURES = ["map", "ndcg_cut.10", "ndcg", "bpref", "P.5", "recip_rank", "infAP", "num_rel", "num_rel_ret",
            "Rprec", "recall.100", "map_condensed", "judged.10", "num_nonrel_judged_ret", "gm_map"]


def _subset_qrels(q: Qrels, keep: np.ndarray) -> Qrels:
    keys = q.keys[keep]
    return Qrels.from_frame(pd.DataFrame({
        "qid": [q.topics[k // q.n_docs] for k in keys],
        "docno": [q.vocabulary[int(k % q.n_docs)].as_py() for k in keys],
        "rel": q.grades[keep]}))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), share=st.floats(0.0, 0.9), graded=st.booleans())
def test_without_scores_like_qrels_of_the_remaining_lines(seed: int, share: float, graded: bool) -> None:
    rng = np.random.default_rng(seed)
    topics = ["1", "2", "10"]
    q = pd.DataFrame({"qid": np.repeat(topics, 40), "docno": [f"d{i}" for i in rng.integers(0, 80, 120)],
                      "rel": rng.integers(-1 if graded else 0, 4 if graded else 2, 120)})
    q = q.drop_duplicates(["qid", "docno"])
    run = pd.DataFrame({"qid": np.repeat(topics, 50),
                        "docno": [f"d{i}" for t in topics for i in rng.permutation(100)[:50]],
                        "score": rng.integers(0, 20, 150).astype(float)})  # many ties
    full = Qrels.from_frame(q)
    drop = rng.random(len(full.keys)) < share
    for t in range(len(full.topics)):  # every topic keeps a judgment (a topic left empty is tested below)
        mine = np.flatnonzero(full.keys // full.n_docs == t)
        drop[mine[0]] = False
    fast = Evaluator(full.without(drop), MEASURES).evaluate(run)
    slow = Evaluator(_subset_qrels(full, ~drop), MEASURES).evaluate(run)
    assert fast.aggregate == slow.aggregate
    pd.testing.assert_frame_equal(fast.per_topic, slow.per_topic)


def test_a_topic_without_judgments_left_stays_with_nothing_relevant() -> None:
    full = Qrels.from_frame({"qid": ["1", "1", "2"], "docno": ["a", "b", "a"], "rel": [1, 0, 1]})
    child = full.without(np.array([False, False, True]))
    assert child.topics == ["1", "2"]
    assert child.num_rel(1).tolist() == [1, 0]
    result = Evaluator(child, ["map", "num_rel"]).evaluate(
        pd.DataFrame({"qid": ["1", "2"], "docno": ["a", "a"], "score": [1.0, 1.0]}))
    assert result.per_topic["map"].tolist() == [1.0, 0.0]
    assert full.num_rel(1).tolist() == [1, 1]  # the parent is untouched


def test_without_refuses_flags_of_the_wrong_length() -> None:
    full = Qrels.from_frame({"qid": ["1"], "docno": ["a"], "rel": [1]})
    with pytest.raises(ValueError, match="1 judgments"):
        full.without(np.array([True, False]))

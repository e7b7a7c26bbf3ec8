"""Rank-fusion pools (RRF, Borda) judged in fused order until the budget is spent."""

import pandas as pd
import pytest

from pooling.strategies import allocate_budget, borda_pool, rrf_pool


def make_run(rows):
    frame = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    frame["rank"] = 1
    return frame


RUNS = {
    "r1": make_run([("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0)]),
    "r2": make_run([("1", "b", 3.0), ("1", "c", 2.0), ("1", "d", 1.0)]),
}


def order(result, qid="1"):
    e = result.entries
    return e.loc[e["qid"] == qid].sort_values("pool_rank")["docno"].tolist()


def test_rrf_orders_by_sum_of_reciprocal_ranks():
    # b = 1/62 + 1/61, c = 1/63 + 1/62, a = 1/61, d = 1/63
    assert order(rrf_pool(RUNS)) == ["b", "c", "a", "d"]


def test_borda_gives_depth_minus_rank_plus_one_points():
    # depth 3: a = 3, b = 2 + 3 = 5, c = 1 + 2 = 3, d = 1; a and c tie at 3, a has the better min_depth
    assert order(borda_pool(RUNS, depth=3)) == ["b", "a", "c", "d"]


def test_budget_per_topic_keeps_the_first_documents_in_fused_order():
    result = rrf_pool(RUNS, 2)
    assert order(result) == ["b", "c"]
    assert set(result.provenance["docno"]) == {"b", "c"}


def test_total_budget_is_split_evenly_across_topics():
    runs = {"r": make_run([("1", "a", 3.0), ("1", "b", 2.0), ("2", "x", 3.0), ("2", "y", 2.0),
                           ("2", "z", 1.0), ("3", "p", 1.0)])}
    result = rrf_pool(runs, total_budget=5)
    assert result.size_per_topic().to_dict() == {"1": 2, "2": 2, "3": 1}


def test_allocation_gives_leftover_to_topics_with_room():
    assert allocate_budget(10, {"1": 2, "2": 100, "3": 100}) == {"1": 2, "2": 4, "3": 4}
    assert allocate_budget(5, {"1": 10, "2": 10}) == {"1": 3, "2": 2}
    assert allocate_budget(100, {"1": 1, "2": 2}) == {"1": 1, "2": 2}


def test_budget_and_total_budget_together_are_refused():
    with pytest.raises(ValueError, match="not both"):
        rrf_pool(RUNS, 2, total_budget=4)

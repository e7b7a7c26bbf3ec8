"""Judging order (seeded shuffle or pool order) and pool extension (only new pairs, none dropped)."""

import pandas as pd

from pooling.strategies import assign_judging_order, depth_pool, new_entries, rrf_pool


def make_run(qid, docnos):
    n = len(docnos)
    return pd.DataFrame({"qid": qid, "docno": docnos, "score": [float(n - i) for i in range(n)], "rank": 1})


def runs(n=50):
    return {"a": make_run("1", [f"a{i:02d}" for i in range(n)]),
            "b": make_run("1", [f"b{i:02d}" for i in range(n)])}


def queue(entries):
    return entries.sort_values("judging_order")["docno"].tolist()


def test_seeded_shuffle_is_reproducible_and_not_rank_order():
    entries = depth_pool(runs(), 25).entries
    first = queue(assign_judging_order(entries, seed=11))
    assert first == queue(assign_judging_order(entries, seed=11))
    assert first != queue(assign_judging_order(entries, seed=12))
    by_rank = entries.sort_values("pool_rank")["docno"].tolist()
    assert sorted(first) == sorted(by_rank)
    assert first != by_rank
    assert first[:5] != by_rank[:5]


def test_pool_order_follows_pool_rank():
    entries = depth_pool(runs(), 3).entries
    ordered = assign_judging_order(entries, order="pool")
    assert ordered["judging_order"].tolist() == ordered["pool_rank"].tolist() == list(range(1, 7))


def test_shuffle_does_not_depend_on_the_input_row_order():
    entries = depth_pool(runs(), 10).entries
    shuffled_rows = entries.sample(frac=1.0, random_state=3)
    assert queue(assign_judging_order(entries, seed=5)) == queue(assign_judging_order(shuffled_rows, seed=5))


def test_deeper_pool_adds_only_new_pairs_after_the_existing_queue():
    old = assign_judging_order(depth_pool(runs(), 5).entries, seed=1)
    deeper = depth_pool(runs(), 8)
    added = new_entries(old, deeper)
    assert len(added) == 6
    assert not set(zip(added.entries["qid"], added.entries["docno"], strict=True)) & \
        set(zip(old["qid"], old["docno"], strict=True))
    assert (added.entries["min_depth"] > 5).all()
    assert set(added.provenance["docno"]) == set(added.entries["docno"])
    numbered = assign_judging_order(added.entries, seed=1, start=old.groupby("qid")["judging_order"].max())
    assert sorted(numbered["judging_order"]) == list(range(11, 17))


def test_adding_documents_keeps_the_relative_order_of_the_existing_ones():
    small = queue(assign_judging_order(depth_pool(runs(), 10).entries, seed=9))
    large = queue(assign_judging_order(depth_pool(runs(), 20).entries, seed=9))
    assert [d for d in large if d in set(small)] == small


def test_more_budget_adds_only_documents_not_yet_pooled():
    old = rrf_pool(runs(), 4).entries
    added = new_entries(old, rrf_pool(runs(), 10))
    assert len(added) == 6
    assert set(old["docno"]).isdisjoint(added.entries["docno"])


def test_a_pool_with_fewer_runs_adds_nothing_and_drops_nothing():
    old = depth_pool(runs(), 5).entries
    assert len(new_entries(old, depth_pool(runs(), 5, tags=["a"]))) == 0

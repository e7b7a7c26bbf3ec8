"""Depth-k pooling and the ranking rule (score descending, ties in file order, rank column ignored)."""

import pandas as pd
import pytest

from pooling.strategies import depth_pool, provenance_dicts, ranked_entries, select_runs


def make_run(rows, rank=None):
    """rows: (qid, docno, score) in file order; rank defaults to a deliberately wrong column."""
    frame = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    frame["rank"] = rank if rank is not None else list(range(len(rows), 0, -1))
    return frame


def pooled(result, qid="1"):
    entries = result.entries
    return entries.loc[entries["qid"] == qid].sort_values("pool_rank")["docno"].tolist()


def test_tied_scores_keep_file_order_not_docno_order():
    run = make_run([("1", "z", 5.0), ("1", "a", 5.0), ("1", "m", 5.0)])
    ranked = ranked_entries({"r": run})
    assert ranked["docno"].tolist() == ["z", "a", "m"]
    assert set(depth_pool({"r": run}, 2).pairs()["docno"]) == {"z", "a"}


def test_rank_column_is_ignored_even_when_it_contradicts_scores():
    run = make_run([("1", "low", 1.0), ("1", "high", 9.0), ("1", "mid", 5.0)], rank=[1, 2, 3])
    assert pooled(depth_pool({"r": run}, 1)) == ["high"]
    assert ranked_entries({"r": run})["docno"].tolist() == ["high", "mid", "low"]


def test_pool_is_the_union_of_each_runs_top_k_with_its_best_rank():
    r1 = make_run([("1", "a", 3.0), ("1", "c", 2.0), ("1", "b", 1.0)])
    r2 = make_run([("1", "c", 9.0), ("1", "d", 8.0), ("1", "e", 7.0)])
    result = depth_pool({"r1": r1, "r2": r2}, 2)
    entries = result.entries.set_index("docno")
    assert sorted(entries.index) == ["a", "c", "d"]
    assert entries["min_depth"].to_dict() == {"c": 1, "a": 1, "d": 2}
    assert entries.loc["c", "n_runs"] == 2
    assert result.provenance_dicts()[("1", "c")] == {"r1": 2, "r2": 1}
    # pool_rank: min_depth first, then fused score (c is ranked by two runs, so before a)
    assert pooled(result) == ["c", "a", "d"]


def test_provenance_dicts_give_every_run_and_rank():
    provenance = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["d", "d", "d"], "tag": ["a", "b", "a"],
                               "rank": [3, 1, 2]})
    assert provenance_dicts(provenance) == {("1", "d"): {"a": 3, "b": 1}, ("2", "d"): {"a": 2}}


def test_depth_can_differ_per_topic():
    run = make_run([("1", "a", 3.0), ("1", "b", 2.0), ("2", "x", 3.0), ("2", "y", 2.0), ("2", "z", 1.0)])
    result = depth_pool({"r": run}, {"1": 1, "2": 3})
    assert pooled(result, "1") == ["a"]
    assert pooled(result, "2") == ["x", "y", "z"]


def test_a_depth_mapping_that_misses_a_topic_is_refused():
    run = make_run([("1", "a", 3.0), ("2", "x", 3.0)])
    with pytest.raises(ValueError, match="topic"):
        depth_pool({"r": run}, {"1": 5})


def test_only_the_chosen_runs_contribute():
    r1 = make_run([("1", "a", 1.0)])
    r2 = make_run([("1", "b", 1.0)])
    assert pooled(depth_pool({"r1": r1, "r2": r2}, 5, tags=["r2"])) == ["b"]
    with pytest.raises(ValueError, match="unknown run tag"):
        depth_pool({"r1": r1}, 5, tags=["nope"])


def test_each_team_contributes_its_first_runs_by_declared_priority():
    tags = ["a1", "a2", "a3", "b1"]
    teams = {"a1": "A", "a2": "A", "a3": "A", "b1": "B"}
    assert select_runs(tags, teams=teams, priorities={"a1": 3, "a2": 1, "a3": 2}, runs_per_team=2) == \
        ["a2", "a3", "b1"]
    runs = {t: make_run([("1", f"doc-{t}", 1.0)]) for t in tags}
    result = depth_pool(runs, 1, teams=teams, priorities={"a1": 3, "a2": 1, "a3": 2}, runs_per_team=1)
    assert sorted(result.pairs()["docno"]) == ["doc-a2", "doc-b1"]


def test_runs_without_priority_follow_submission_order_after_prioritised_ones():
    teams = {"x": "T", "y": "T", "z": "T"}
    assert select_runs(["x", "y", "z"], teams=teams, priorities={"z": 1}, runs_per_team=2) == ["x", "z"]


def test_topics_interleaved_in_the_file_are_ranked_like_a_sorted_file():
    rows = [("1", "a", 3.0), ("2", "x", 1.0), ("1", "b", 2.0), ("2", "y", 5.0), ("1", "c", 9.0)]
    ranked = ranked_entries({"r": make_run(rows)})
    assert ranked[["qid", "docno", "rank"]].values.tolist() == [
        ["1", "c", 1], ["1", "a", 2], ["1", "b", 3], ["2", "y", 1], ["2", "x", 2]]


def test_out_of_order_block_is_sorted_and_ties_still_follow_the_file():
    rows = [("1", "a", 1.0), ("1", "b", 2.0), ("1", "c", 2.0), ("2", "x", 5.0), ("2", "y", 4.0)]
    ranked = ranked_entries({"r": make_run(rows)})
    assert ranked["docno"].tolist() == ["b", "c", "a", "x", "y"]


def test_numeric_topics_come_in_numeric_order():
    run = make_run([("10", "a", 1.0), ("9", "b", 1.0), ("100", "c", 1.0)])
    assert depth_pool({"r": run}, 1).entries["qid"].tolist() == ["9", "10", "100"]


def test_a_document_listed_twice_keeps_its_best_rank():
    run = make_run([("1", "a", 3.0), ("1", "b", 2.0), ("1", "a", 1.0)])
    ranked = ranked_entries({"r": run})
    assert ranked[["docno", "rank"]].values.tolist() == [["a", 1], ["b", 2]]


def test_a_score_that_is_not_a_number_names_run_and_row():
    run = make_run([("1", "a", 1.0), ("1", "b", float("nan"))])
    with pytest.raises(ValueError, match=r"run 'bad': row 2"):
        depth_pool({"bad": run}, 5)


def test_categorical_qids_pool_like_strings():
    rows = [("1", "a", 3.0), ("1", "b", 2.0), ("2", "x", 3.0)]
    as_str = make_run(rows)
    as_cat = as_str.assign(qid=as_str["qid"].astype("category"))
    assert depth_pool({"r": as_cat}, 1).pairs().values.tolist() == \
        depth_pool({"r": as_str}, 1).pairs().values.tolist() == [["1", "a"], ["2", "x"]]


def test_runs_without_rows_pool_nothing_and_do_not_fail():
    from pooling.strategies import fusion_pool, stratified_pool

    empty = make_run([])
    for result in (depth_pool({"r": empty}, 5), fusion_pool({"r": empty}, 5), stratified_pool({"r": empty})):
        assert len(result) == 0 and result.provenance.empty

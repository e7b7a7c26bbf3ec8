"""Pool statistics: size per topic, unique contributions, overlap, judging progress, relevant per depth."""

import pandas as pd

from pooling.strategies import (
    depth_pool,
    judging_progress,
    overlap_matrix,
    pool_size,
    relevant_by_depth,
    unique_contributions,
)


def make_run(rows):
    frame = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    frame["rank"] = 1
    return frame


RUNS = {
    "r1": make_run([("1", "a", 3.0), ("1", "b", 2.0), ("2", "x", 1.0)]),
    "r2": make_run([("1", "b", 3.0), ("1", "c", 2.0), ("2", "x", 1.0)]),
}
QRELS = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "c", "x"], "relevance": [1, 0, 2]})


def test_pool_size_per_topic():
    assert pool_size(depth_pool(RUNS, 2).entries).to_dict() == {"1": 3, "2": 1}


def test_unique_contributions_count_documents_only_that_run_retrieved():
    stats = unique_contributions(depth_pool(RUNS, 2).provenance, QRELS).set_index("tag")
    assert stats.loc["r1"].to_dict() == {"contributed": 3, "unique": 1, "relevant": 2, "unique_relevant": 1}
    assert stats.loc["r2"].to_dict() == {"contributed": 3, "unique": 1, "relevant": 1, "unique_relevant": 0}


def test_overlap_matrix_counts_shared_pairs():
    overlap = overlap_matrix(depth_pool(RUNS, 2).provenance)
    assert overlap.loc["r1", "r2"] == 2  # b for topic 1, x for topic 2
    assert overlap.loc["r1", "r1"] == 3
    jaccard = overlap_matrix(depth_pool(RUNS, 2).provenance, normalise="jaccard")
    assert jaccard.loc["r1", "r2"] == 2 / 4


def test_judging_progress_reports_judged_fraction_and_relevant():
    progress = judging_progress(depth_pool(RUNS, 2).entries, QRELS).set_index("qid")
    assert progress.loc["1"].to_dict() == {"pool_size": 3, "judged": 2, "judged_fraction": 2 / 3, "relevant": 1}
    assert progress.loc["2", "relevant"] == 1


def test_relevant_by_depth_shows_what_each_depth_would_have_found():
    table = relevant_by_depth(depth_pool(RUNS, 2).provenance, QRELS, depths=(1, 2)).set_index("depth")
    assert table.loc[1, "pool_size"] == 3  # a, b (topic 1) and x (topic 2)
    assert table.loc[1, "relevant"] == 2
    assert table.loc[2, "pool_size"] == 4
    assert table.loc[2, "judged"] == 3


def test_statistics_of_a_coded_provenance_equal_those_of_its_strings():
    """The pool page reads provenance as categoricals (its codes): every count is the strings' count, on a
    provenance with a run listing a document twice and a document two runs share."""
    import numpy as np

    rng = np.random.default_rng(3)
    rows = [(str(q), f"d{rng.integers(0, 40)}", f"run{r}", int(k)) for r in range(6) for q in (1, 2, 10)
            for k in range(1, 30)]
    strings = pd.DataFrame(rows, columns=["qid", "docno", "tag", "rank"])
    coded = strings.astype({"qid": "category", "docno": "category", "tag": "category"})
    qrels = pd.DataFrame({"qid": ["1", "2", "10"], "docno": ["d1", "d2", "d3"], "relevance": [1, 2, 0]})
    pd.testing.assert_frame_equal(unique_contributions(coded, qrels), unique_contributions(strings, qrels))
    pd.testing.assert_frame_equal(overlap_matrix(coded), overlap_matrix(strings))
    pd.testing.assert_frame_equal(relevant_by_depth(coded, qrels), relevant_by_depth(strings, qrels))
    assert unique_contributions(strings)["contributed"].sum() == len(strings.drop_duplicates(["qid", "docno", "tag"]))

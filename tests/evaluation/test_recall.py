"""Estimates of the number of relevant documents: the accumulation curve over pool depth and
Horvitz-Thompson from a sampled pool, each on a case with a known answer; recall of runs against both."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation import selectors
from evaluation.engine.recall import power_law_tail
from pooling.models import PoolEntry
from tests import factories
from tests.evaluation.tracks import run, write_qrels


def test_a_power_law_curve_is_recovered_and_its_tail_summed():
    depths = np.arange(1, 11)
    fit = power_law_tail(12.0 / depths, max_depth=1000)  # one new document per depth: N_d itself
    assert fit.slope == pytest.approx(-1.0, abs=1e-9)
    assert fit.tail == pytest.approx(12 * sum(1 / d for d in range(11, 1001)), rel=1e-9)


def test_a_rate_that_grows_with_depth_is_held_constant():
    fit = power_law_tail([1, 2, 3, 4], max_depth=10)
    assert fit.slope == 0.0
    assert fit.tail == pytest.approx(2.5 * 6)  # mean rate 2.5 for depths 5..10


def test_everything_found_at_the_top_leaves_no_tail():
    assert power_law_tail([5, 0, 0, 0], max_depth=100).tail == pytest.approx(0.0, abs=1e-9)


def write_runs(tmp_path, rankings, *, no_pool=()):
    for tag, ranking in rankings.items():
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        run("import_runs", "robust", str(path), *(["--no-pool"] if tag in no_pool else []))


def test_accumulation_curve_estimate_on_a_depth_pool(db, tmp_path):
    """Depth-2 pool: r1 [R1 N1 ...], r2 [R2 R3 ...], 10 documents each. New relevant per depth N = [2, 1]
    fits mu_d = 2/d exactly; extrapolated to depth 10: 3 + 2 (1/3 + ... + 1/10)."""
    collection = factories.collection_with_topics()
    write_runs(tmp_path, {"r1": {"301": ["R1", "N1", *[f"u{i}" for i in range(8)]]},
                          "r2": {"301": ["R2", "R3", *[f"v{i}" for i in range(8)]]}})
    run("build_pool", "robust", "--depth", "2")
    run("import_qrels", "robust", write_qrels(tmp_path / "q.txt", {("301", "R1"): 1, ("301", "N1"): 0,
                                                                    ("301", "R2"): 1, ("301", "R3"): 1}))
    row = selectors.recall_estimates(collection).set_index("qid").loc["301"]
    assert row["known_relevant"] == 3 and row["complete_depth"] == 2
    assert row["method"] == "accumulation curve"
    assert row["estimate"] == pytest.approx(3 + 2 * sum(1 / d for d in range(3, 11)))
    assert row["ci_low"] == 3 and row["ci_high"] > row["estimate"]


def sampled_collection(tmp_path):
    """Stratum 1 = rank 1 (a1, b1: all judged), stratum 2 = ranks 2-4 (six documents, half sampled)."""
    collection = factories.collection_with_topics()
    write_runs(tmp_path, {"alpha": {"301": ["a1", "a2", "a3", "a4"]}, "beta": {"301": ["b1", "b2", "b3", "b4"]}})
    run("build_pool", "robust", "--strategy", "sampled", "--strata", "1-1:1", "2-4:0.5", "--seed", "3")
    sampled = list(PoolEntry.objects.filter(stratum=2).order_by("judging_order").values_list("docno", flat=True))
    return collection, sampled


def test_horvitz_thompson_estimate_from_a_sampled_pool(db, tmp_path):
    collection, sampled = sampled_collection(tmp_path)
    assert len(sampled) == 3
    # a1 relevant, b1 not; every sampled document of stratum 2 relevant: R_hat = 1 + 3 / (3/6) = 7
    qrels = {("301", "a1"): 1, ("301", "b1"): 0, **{("301", d): 1 for d in sampled}}
    run("import_qrels", "robust", write_qrels(tmp_path / "q.txt", qrels))
    row = selectors.recall_estimates(collection).set_index("qid").loc["301"]
    assert row["method"].startswith("horvitz-thompson")
    assert (row["known_relevant"], row["estimate"], row["ci_low"], row["ci_high"]) == (4, 7.0, 7.0, 7.0)


def test_a_partly_judged_stratum_counts_its_judged_documents_as_the_sample(db, tmp_path):
    collection, sampled = sampled_collection(tmp_path)
    # only two of the three sampled documents judged (both relevant): each stands for 6 / 2 = 3
    qrels = {("301", "a1"): 1, ("301", "b1"): 0, **{("301", d): 1 for d in sampled[:2]}}
    run("import_qrels", "robust", write_qrels(tmp_path / "q.txt", qrels))
    row = selectors.recall_estimates(collection).set_index("qid").loc["301"]
    assert row["estimate"] == pytest.approx(1 + 2 * 3)


def test_a_stratum_without_any_judgment_gives_no_estimate(db, tmp_path):
    collection, _ = sampled_collection(tmp_path)
    run("import_qrels", "robust", write_qrels(tmp_path / "q.txt", {("301", "a1"): 1, ("301", "b1"): 0}))
    row = selectors.recall_estimates(collection).set_index("qid").loc["301"]
    assert row["method"].startswith("known only") and row["estimate"] == 1


def test_infap_is_offered_where_the_pool_was_sampled(db, tmp_path):
    collection, sampled = sampled_collection(tmp_path)
    qrels = {("301", "a1"): 1, ("301", "b1"): 0, **{("301", d): 1 for d in sampled}}
    run("import_qrels", "robust", write_qrels(tmp_path / "q.txt", qrels))
    board = selectors.leaderboard(collection, measures=["map"])
    assert "infAP" in board.robust_measures
    assert all(0 <= r.robust["infAP"] <= 1 for r in board.runs)


def test_run_recall_is_reported_against_known_and_estimated_totals(db, tmp_path):
    collection, sampled = sampled_collection(tmp_path)
    qrels = {("301", "a1"): 1, ("301", "b1"): 0, **{("301", d): 1 for d in sampled}}
    run("import_qrels", "robust", write_qrels(tmp_path / "q.txt", qrels))
    table = selectors.run_recall(collection).set_index("run")
    found = {"alpha": 1 + sum(d.startswith("a") for d in sampled), "beta": sum(d.startswith("b") for d in sampled)}
    for tag in ("alpha", "beta"):
        assert table.loc[tag, "relevant_retrieved"] == found[tag]
        assert table.loc[tag, "recall_known"] == pytest.approx(found[tag] / 4)
        assert table.loc[tag, "recall_estimated"] == pytest.approx(found[tag] / 7)


def test_the_page_estimates_equal_the_curves_computed_from_the_ranked_entries(db, tmp_path):
    """The selector finds best ranks and grades on integer codes; the engine's frame-based
    ``depth_curves`` over ``ranked_entries`` is the reference (several topics, documents shared between
    runs at different ranks, a topic with judgments and no run, unjudged documents below the pool)."""
    from evaluation import scoring
    from evaluation.engine.recall import depth_curves
    from evaluation.recall_estimates import RECALL_COLUMNS, _run_depths
    from pooling import strategies as S

    rng = np.random.default_rng(5)
    collection = factories.collection_with_topics()
    docs = [f"doc{i}" for i in range(60)]
    rankings = {f"r{k}": {q: list(rng.choice(docs, size=int(rng.integers(15, 40)), replace=False))
                          for q in ("301", "302")} for k in range(4)}
    write_runs(tmp_path, rankings, no_pool={"r3"})
    run("build_pool", "robust", "--depth", "6")
    judged = {(q, d): int(rng.random() < 0.4) for q in ("301", "302") for d in docs[:45]}
    judged.update({(q, d): int(rng.random() < 0.4) for tag in ("r0", "r1", "r2") for q, ranking in
                   rankings[tag].items() for d in ranking[:8] if (q, d) not in judged})
    judged[("303", "doc1")] = 1
    run("import_qrels", "robust", write_qrels(tmp_path / "q.txt", judged))
    page = selectors.recall_estimates(collection)
    tags = ["r0", "r1", "r2"]
    qrels = scoring.qrels_frame(collection)
    expected = depth_curves(S.ranked_entries(scoring.frames(collection, tags), 100), qrels,
                            run_depth=_run_depths(collection, tags))[RECALL_COLUMNS]
    expected = expected.set_index("qid").loc[S.sorted_topics(expected["qid"])].reset_index()
    assert list(page["qid"]) == ["301", "302", "303"]
    assert page["method"].tolist() == expected["method"].tolist()
    assert page[["known_relevant", "estimate", "ci_low", "ci_high", "complete_depth"]].to_numpy(dtype=float) == \
        pytest.approx(expected[["known_relevant", "estimate", "ci_low", "ci_high", "complete_depth"]]
                      .to_numpy(dtype=float), nan_ok=True)
    assert page["method"].str.startswith("accumulation").sum() >= 1


def test_xinfap_of_the_own_sample_equals_sample_eval_s_definition_on_the_released_sample(db, tmp_path):
    import io
    import zipfile

    from django.core.management import call_command

    from evaluation.release import release_bundle

    collection, sampled = sampled_collection(tmp_path)
    # a1 relevant (grade 1), b1 not; two of the three sampled documents of stratum 2 judged relevant
    qrels = {("301", "a1"): 1, ("301", "b1"): 0, **{("301", d): 1 for d in sampled[:2]}}
    run("import_qrels", "robust", write_qrels(tmp_path / "q.txt", qrels))
    board = selectors.leaderboard(collection, measures=["map"])
    assert board.robust_measures[-3:] == ["infAP", "xinfAP", "infNDCG"]
    released = zipfile.ZipFile(io.BytesIO(release_bundle(collection).data))
    sample = released.read("robust/qrels.sampled.txt").decode()
    # stratum 1 = {a1, b1} all judged; stratum 2 = the six others, two sampled (judged), four not
    assert sorted(line.split()[3:] for line in sample.splitlines()).count(["2", "-1"]) == 4
    assert "qrels.sampled.txt" in released.read("robust/README.md").decode()
    (tmp_path / "sampled.txt").write_text(sample)
    for r in board.runs:
        out = io.StringIO()
        call_command("xinfap", str(tmp_path / "sampled.txt"), str(tmp_path / f"{r.tag}.run"), stdout=out)
        lines = dict(line.split("\t\tall\t\t") for line in out.getvalue().splitlines() if "\t\tall\t\t" in line)
        assert f"{r.robust['xinfAP']:6.4f}" == lines["infAP"] and f"{r.robust['infNDCG']:6.4f}" == lines["infNDCG"]
    assert any(r.robust["xinfAP"] > 0 for r in board.runs)

"""Leaderboards from the database: trec_eval's numbers, pool-bias flags, reports and the evaluate command.

The track built here (hand-checked):

    pool: depth 2 over alpha and beta (late does not contribute)
    301: alpha [a b c d]  beta [b x a]  late [z a]     qrels a=1 b=0 x=1
    302: alpha [e f]      beta [f g]    late [h f]     qrels e=0 f=1 g=0

    AP      301          302     MAP
    alpha   1/2          1/2     0.5
    beta    (1/2+2/3)/2  1       0.791667
    late    (1/2)/2      1/2     0.375
"""

from __future__ import annotations

import csv
import json
from io import StringIO

import pytest
from django.core.management.base import CommandError

from evaluation import selectors
from evaluation.scoring import EvaluationError
from judging.models import Judgment
from tests import factories
from tests.evaluation.tracks import MAP, QRELS, RANKINGS, build_track, run, write_qrels  # noqa: E402, F401


@pytest.fixture
def track(db, tmp_path):
    return build_track(tmp_path)


def test_map_of_each_run_is_the_hand_computed_value(track):
    board = selectors.leaderboard(track, measures=["map"], judged_threshold=0.15)
    assert [r.tag for r in board.runs] == ["beta", "alpha", "late"]
    for r in board.runs:
        assert r.measures["map"] == pytest.approx(MAP[r.tag])
    assert [r.rank for r in board.runs] == [1, 2, 3]
    assert board.per_topic["beta"].loc["301", "map"] == pytest.approx((1 / 2 + 2 / 3) / 2)


def test_measures_keep_trec_eval_names_in_the_order_asked(track):
    board = selectors.leaderboard(track, measures=["P.2", "map", "ndcg_cut.10"])
    assert board.measures == ["P_2", "map", "ndcg_cut_10"]
    beta = next(r for r in board.runs if r.tag == "beta")
    assert beta.measures["P_2"] == pytest.approx((1 / 2 + 1 / 2) / 2)
    # every run has P_2 = 0.5: a tie shares the rank and is listed by tag
    assert [(r.tag, r.rank) for r in board.runs] == [("alpha", 1), ("beta", 1), ("late", 1)]


def test_the_run_that_did_not_contribute_is_flagged_with_its_reasons(track):
    board = selectors.leaderboard(track, measures=["map"], judged_threshold=0.15)
    flags = {r.tag: r.flags for r in board.runs}
    assert flags["alpha"] == [] and flags["beta"] == []
    assert flags["late"] == ["did not contribute to the pool", "judged@10 = 0.10 < 0.15"]
    contributed = {r.tag: r.contributed for r in board.runs}
    assert contributed == {"alpha": True, "beta": True, "late": False}


def test_judged_at_the_pool_depth_is_reported_beside_judged_at_10(track):
    board = selectors.leaderboard(track, measures=["map"])
    late = next(r for r in board.runs if r.tag == "late")
    assert late.judged_at_10 == pytest.approx(0.1)
    assert late.judged_at_k == {2: pytest.approx(0.5), 10: pytest.approx(0.1)}
    assert all("judged@10" in " ".join(r.flags) for r in board.runs), "0.8 is the default threshold"


def test_robust_measures_are_offered_beside_the_chosen_ones(track):
    board = selectors.leaderboard(track, measures=["map"])
    assert board.robust_measures == ["bpref", "map_condensed", "ndcg_cut_condensed_10"]
    alpha = next(r for r in board.runs if r.tag == "alpha")
    # condensed list of alpha: 301 [a b] (c, d unjudged are dropped) -> AP 1/2; 302 [e f] -> 1/2
    assert alpha.robust["map_condensed"] == pytest.approx(0.5)


def test_confidence_intervals_are_t_intervals_of_the_topic_mean(track):
    board = selectors.leaderboard(track, measures=["map"])
    beta = next(r for r in board.runs if r.tag == "beta")
    values = [(1 / 2 + 2 / 3) / 2, 1.0]
    mean, half = sum(values) / 2, 12.7062047 * abs(values[0] - values[1]) / 2 ** 0.5 / 2 ** 0.5
    assert beta.ci["map"] == (pytest.approx(mean - half), pytest.approx(mean + half))
    assert board.ci_method == "t"


def test_a_new_judgment_changes_the_leaderboard_at_once(track, tmp_path):
    before = selectors.leaderboard(track, measures=["map"])
    run("import_qrels", "robust", write_qrels(tmp_path / "more.txt", {**QRELS, ("301", "c"): 1}),
        "--assessor", "nist")
    after = selectors.leaderboard(track, measures=["map"])
    alpha_before = next(r for r in before.runs if r.tag == "alpha").measures["map"]
    alpha_after = next(r for r in after.runs if r.tag == "alpha").measures["map"]
    # 301 now has R = 3 and alpha finds a (1/1) and c (2/3): AP = (1 + 2/3) / 3
    assert alpha_before == pytest.approx(0.5)
    assert alpha_after == pytest.approx(((1 + 2 / 3) / 3 + 0.5) / 2)


def test_a_second_request_reuses_the_computed_leaderboard(track, django_assert_max_num_queries):
    first = selectors.leaderboard(track, measures=["map"])
    with django_assert_max_num_queries(6):  # the version: last judgment, topics, runs, pools, entries per pool
        again = selectors.leaderboard(track, measures=["map"])
    assert again is first


def test_a_cold_report_reads_the_collection_version_once(track):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        selectors.leave_one_out(track)
    versions = [q for q in queries.captured_queries if 'MAX("judging_judgment"."id")' in q["sql"]]
    assert len(versions) == 1, "one state of the collection for the whole call"


def test_a_judgment_after_a_call_is_seen_by_the_next_call(track, tmp_path):
    selectors.leave_one_out(track)
    before = selectors.leaderboard(track, measures=["map"])
    run("import_qrels", "robust", write_qrels(tmp_path / "more.txt", {**QRELS, ("301", "c"): 1}),
        "--assessor", "nist")
    after = selectors.leaderboard(track, measures=["map"])
    assert after is not before  # the version is pinned within a call only


def test_run_report_compares_each_topic_with_the_best_median_and_worst(track):
    report = selectors.run_report(track, "alpha", measure="map")
    row = report.set_index("qid").loc["301"]
    assert row["score"] == pytest.approx(0.5)
    assert row["best"] == pytest.approx((1 / 2 + 2 / 3) / 2) and row["best_run"] == "beta"
    assert row["worst"] == pytest.approx(0.25) and row["median"] == pytest.approx(0.5)


def test_topic_report_counts_the_pool_and_the_relevant_found_per_depth(track):
    report = selectors.topic_report(track, "301", measures=["map"])
    assert report["pool_size"] == 3 and report["relevant"] == 2
    assert report["judged_in_pool"] == 3 and report["judgments"] == 3
    by_depth = report["relevant_by_depth"].set_index("depth")
    assert by_depth.loc[1, "relevant"] == 1       # a (alpha's first); beta's first is b
    assert by_depth.loc[5, "relevant"] == 2
    assert list(report["runs"]["run"]) == ["beta", "alpha", "late"]


def test_precision_recall_curves_are_interpolated_precision_at_eleven_levels(track):
    curves = selectors.pr_curves(track, ["beta"])
    beta = curves.set_index("recall")["precision"]
    # 301: x at 2, a at 3 -> iprec 2/3 up to recall 1; 302: f at 1 -> 1 everywhere
    assert len(beta) == 11
    assert beta[0.0] == pytest.approx((2 / 3 + 1) / 2) and beta[1.0] == pytest.approx((2 / 3 + 1) / 2)


def test_significance_matrix_has_one_row_per_pair_with_adjusted_p_values(track):
    matrix = selectors.significance_matrix(track, measure="map")
    assert len(matrix) == 3
    assert list(matrix.iloc[0][["run_a", "run_b"]]) == ["beta", "alpha"]
    assert (matrix["p_adjusted"] >= matrix["p_value"]).all()
    assert matrix.loc[0, "mean_diff"] == pytest.approx(MAP["beta"] - MAP["alpha"])


def test_majority_and_assessor_qrels_can_be_chosen(track, tmp_path):
    run("import_qrels", "robust", write_qrels(tmp_path / "other.txt", {("301", "a"): 0, ("302", "f"): 1}),
        "--assessor", "second")
    own = selectors.leaderboard(track, measures=["map"], assessor="second")
    # second: 301 has no relevant document (AP 0), 302 f relevant
    assert next(r for r in own.runs if r.tag == "alpha").measures["map"] == pytest.approx(0.25)
    assert own.qrels_policy == "assessor second"


def test_no_judgments_is_a_clear_error(db):
    collection = factories.collection_with_topics()
    with pytest.raises(EvaluationError, match="no runs|no judgments"):
        selectors.leaderboard(collection)


# ---------------------------------------------------------------------------------------- the command
def test_evaluate_prints_json_with_trec_eval_names_flags_and_per_topic_scores(track):
    out = json.loads(run("evaluate", "robust", "-m", "map", "-m", "ndcg_cut.10", "--judged-threshold", "0.15"))
    assert out["collection"] == "robust" and out["measures"] == ["map", "ndcg_cut_10"]
    runs = {r["run"]: r for r in out["runs"]}
    assert runs["beta"]["measures"]["map"] == pytest.approx(MAP["beta"])
    assert runs["late"]["contributed"] is False and runs["late"]["flags"][0] == "did not contribute to the pool"
    assert runs["alpha"]["judged_at_10"] == pytest.approx(0.2)
    assert runs["alpha"]["per_topic"]["301"]["map"] == pytest.approx(0.5)


def test_the_per_topic_values_of_the_json_are_those_of_each_runs_frame(track):
    """Each run's per-topic values in the JSON (read from its arrays) are its frame's rows, in natural
    topic order, with the measures and judged@10 only, as Python numbers."""
    board = selectors.leaderboard(track, measures=["map", "P.10", "ndcg_cut.10", "num_ret"])
    data = board.as_dict(per_topic=True)
    for row in data["runs"]:
        frame = board.per_topic[row["run"]]
        columns = [c for c in [*board.measures, "judged_10"] if c in frame.columns]
        expected = {str(q): {c: (None if frame.at[q, c] != frame.at[q, c] else frame.at[q, c].item())
                             for c in columns} for q in board.topics if q in frame.index}
        assert row["per_topic"] == expected and list(row["per_topic"]) == list(expected)
        assert "judged_10" in columns and {type(v) for t in expected.values() for v in t.values()} <= {int, float}


def test_evaluate_writes_one_csv_row_per_run(track):
    rows = list(csv.DictReader(StringIO(run("evaluate", "robust", "-m", "map", "--format", "csv"))))
    assert [r["run"] for r in rows] == ["beta", "alpha", "late"]
    assert rows[0]["map"] == "0.7917" and rows[2]["contributed"] == "no"
    assert "did not contribute" in rows[2]["flags"]


def test_evaluate_prints_trec_eval_lines_per_run(track):
    lines = run("evaluate", "robust", "-m", "map", "-m", "P.2", "--format", "trec", "--runs", "alpha").splitlines()
    assert lines == ["runid                 \tall\talpha", "map                   \tall\t0.5000",
                     "P_2                   \tall\t0.5000"]


@pytest.mark.parametrize("args, message", [
    (["nope"], "no collection 'nope'"),
    (["robust", "-m", "mapp"], "illegal measure 'mapp'"),
    (["robust", "--runs", "ghost"], "no run 'ghost'"),
    (["robust", "--qrels", "nobody"], "--qrels 'nobody': not a policy"),
])
def test_evaluate_refuses_bad_requests_with_one_line(track, args, message):
    with pytest.raises(CommandError, match=message) as caught:
        run("evaluate", *args)
    assert "\n" not in str(caught.value)


def test_an_unknown_assessor_is_refused_naming_each_known_one_once(track):
    with pytest.raises(CommandError) as caught:
        run("evaluate", "robust", "--qrels", "nobody")
    assert str(caught.value).endswith("an assessor of 'robust' (nist)")


def test_evaluate_without_judgments_says_so(db, tmp_path):
    factories.collection_with_topics()
    path = tmp_path / "alpha.run"
    path.write_text(factories.run_lines("alpha", RANKINGS["alpha"]))
    run("import_runs", "robust", str(path))
    with pytest.raises(CommandError, match="no judgments in collection 'robust'"):
        run("evaluate", "robust")
    assert not Judgment.objects.exists()


def test_a_nickname_reports_its_values_without_the_run_id(track):
    board = selectors.leaderboard(track, measures=["official"])
    assert "runid" not in board.measures and board.measures[:2] == ["num_q", "num_ret"]
    assert next(r for r in board.runs if r.tag == "alpha").measures["map"] == pytest.approx(0.5)


def test_a_run_imported_after_the_pool_was_built_did_not_contribute(track, tmp_path):
    path = tmp_path / "newcomer.run"
    path.write_text(factories.run_lines("newcomer", {"301": ["a", "x"], "302": ["f"]}))
    run("import_runs", "robust", str(path))  # declared as contributing, but the pool exists already
    board = selectors.leaderboard(track, measures=["map"])
    newcomer = next(r for r in board.runs if r.tag == "newcomer")
    assert not newcomer.contributed and "did not contribute to the pool" in newcomer.flags


def test_a_judged_flag_shows_enough_digits_to_be_below_its_threshold():
    from evaluation.leaderboard import _below

    assert _below(0.10, 0.15) == "0.10"
    assert _below(0.79999, 0.8) == "0.79999"  # not "0.80 < 0.80"


def test_a_judged_fraction_below_its_threshold_by_float_noise_only_is_not_flagged(track):
    from evaluation.selectors import leaderboard

    judged = {r.tag: r.judged_at_10 for r in leaderboard(track).runs}
    board = leaderboard(track, judged_threshold=judged["late"] + 1e-12)
    late = next(r for r in board.runs if r.tag == "late")
    assert not any(flag.startswith("judged@10") for flag in late.flags)

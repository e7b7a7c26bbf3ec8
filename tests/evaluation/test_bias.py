"""Leave-one-out: how a run's score and rank change when the documents only it pooled are taken away.

Track of test_evaluate (depth-2 pool over alpha and beta): alpha alone pooled 301/a (relevant) and 302/e;
beta alone pooled 301/x (relevant) and 302/g. Without its unique documents:

    alpha  301: a unjudged -> AP 0      302: f at 2 -> 1/2     MAP 0.25   (was 0.5; late 0.375 passes it)
    beta   301: a at 3, R=1 -> 1/3      302: f at 1 -> 1       MAP 2/3    (was 0.7917; still first)
"""

from __future__ import annotations

import pytest

from evaluation import selectors
from evaluation.scoring import EvaluationError
from tests.evaluation.tracks import build_track, run, write_qrels


@pytest.fixture
def track(db, tmp_path):
    return build_track(tmp_path, teams={"alpha": "A", "beta": "B", "late": "A"})


def test_a_runs_unique_relevant_document_is_what_its_score_loses(track):
    loo = selectors.leave_one_out(track, measure="map")
    table = loo.table.set_index("run")
    assert list(table.index) == ["alpha", "beta"], "only contributing runs are left out"
    assert table.loc["alpha", "unique_judged"] == 2 and table.loc["alpha", "unique_relevant"] == 1
    assert table.loc["alpha", "score"] == pytest.approx(0.5)
    assert table.loc["alpha", "score_loo"] == pytest.approx(0.25)
    assert table.loc["beta", "score_loo"] == pytest.approx(2 / 3)
    assert table.loc["alpha", "change_pct"] == pytest.approx(-50.0)


def test_leaving_a_run_out_can_cost_it_a_rank(track):
    loo = selectors.leave_one_out(track, measure="map")
    table = loo.table.set_index("run")
    assert (table.loc["alpha", "rank"], table.loc["alpha", "rank_loo"], table.loc["alpha", "rank_change"]) == (2, 3, 1)
    assert table.loc["beta", "rank_change"] == 0
    assert loo.max_rank_change == 1


def test_the_collection_summary_gives_drops_and_ranking_correlations(track):
    loo = selectors.leave_one_out(track, measure="map")
    assert loo.max_drop == pytest.approx(0.25)
    assert loo.mean_drop == pytest.approx((0.25 + (0.791667 - 2 / 3)) / 2, abs=1e-6)
    # full ranking beta > alpha > late; left out: beta > late > alpha (one swapped pair of three)
    assert loo.tau == pytest.approx(1 / 3)
    assert loo.tau_ap == pytest.approx(0.5)
    assert loo.runs == 3 and "provenance of pool main" in loo.source


def test_leaving_a_team_out_rescores_every_run_of_the_team(track):
    loo = selectors.leave_one_out(track, measure="map", by="team")
    table = loo.table.set_index("run")
    assert set(table.index) == {"alpha", "late", "beta"}
    assert table.loc["late", "unit"] == "A" and not table.loc["late", "contributed"]
    # team A's unique documents are alpha's: late loses nothing relevant it found... except 301/a
    assert table.loc["late", "score_loo"] == pytest.approx((0 + 0.5) / 2)


def test_without_a_stored_pool_contributions_come_from_the_runs_top_documents(db, tmp_path):
    collection = build_track(tmp_path, pool_depth=None)
    loo = selectors.leave_one_out(collection, measure="map", depth=2)
    assert "top 2 of the contributing runs" in loo.source
    assert loo.table.set_index("run").loc["alpha", "score_loo"] == pytest.approx(0.25)


def test_a_run_whose_unique_documents_are_not_relevant_keeps_its_precision(db, tmp_path):
    from tests.evaluation.tracks import QRELS

    collection = build_track(tmp_path, qrels={**QRELS, ("301", "x"): 0})
    loo = selectors.leave_one_out(collection, measure="P.5")
    beta = loo.table.set_index("run").loc["beta"]
    assert (beta["unique_judged"], beta["unique_relevant"]) == (2, 0)
    assert beta["score_loo"] == pytest.approx(beta["score"]) and beta["rank_change"] == 0


def test_leave_one_out_refuses_an_unknown_grouping(track):
    with pytest.raises(EvaluationError, match="choose 'run' or 'team'"):
        selectors.leave_one_out(track, by="topic")


def test_rankings_under_two_assessors_are_correlated_on_their_shared_topics(track, tmp_path):
    # a second assessor who judges 302 the other way round: f not relevant, g and e relevant
    run("import_qrels", "robust", write_qrels(tmp_path / "q2.txt", {("302", "e"): 1, ("302", "f"): 0,
                                                                      ("302", "g"): 1}), "--assessor", "second")
    table = selectors.assessor_ranking_agreement(track, measure="map")
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["assessor_a"], row["assessor_b"], row["topics"], row["runs"]) == ("nist", "second", 1, 3)
    # on 302, nist: alpha 1/2, beta 1, late 1/2; second (R=2): alpha 1/2, beta 1/4, late 0
    # tau-b: beta/alpha discordant, beta/late concordant, alpha/late tied under nist -> 0
    assert row["tau"] == pytest.approx(0.0, abs=1e-12)
    # tau_ap (nist as reference), second's order alpha > beta > late: C(beta) = 0, C(late) = 1/2 + 1
    assert row["tau_ap"] == pytest.approx(-0.25)


@pytest.mark.parametrize("measure", ["map", "bpref", "ndcg_cut.10", "P.5", "map_condensed"])
def test_leave_one_out_equals_evaluating_against_qrels_without_the_unique_documents(track, measure):
    """The fast path (one ranking, judgments dropped) against the slow one: each run evaluated from its
    file against qrels with its unique judged documents deleted."""
    from evaluation import scoring
    from evaluation.reusability import contribution_provenance, unique_judged

    loo = selectors.leave_one_out(track, measure=measure).table.set_index("run")
    qrels = scoring.qrels_frame(track)
    provenance, _ = contribution_provenance(track)
    uniques = unique_judged(provenance, qrels, {t: t for t in provenance["tag"].unique()})
    name = scoring.measure_names([measure])[0]
    for tag in loo.index:
        gone = set(zip(uniques.loc[uniques["unit"] == tag, "qid"], uniques.loc[uniques["unit"] == tag, "docno"],
                       strict=True))
        kept = qrels[[(q, d) not in gone for q, d in zip(qrels["qid"], qrels["docno"], strict=True)]]
        slow = scoring.evaluate_frames(kept, {tag: scoring.frames(track, [tag])[tag]}, [measure],
                                        track.relevant_from)[tag]
        full_topics = scoring.evaluate(track, [measure])[tag].per_topic.index
        expected = slow.per_topic[name].reindex(full_topics).fillna(0.0).mean()
        assert loo.loc[tag, "score_loo"] == pytest.approx(expected, abs=1e-12), tag

"""Adaptive pools: Move-to-Front, MaxMean and the Bayesian bandit choose from the judgments so far."""

import pandas as pd
import pytest

from pooling.strategies import BayesianBandit, MaxMean, MoveToFront, adaptive_pool, replay


def make_run(qid, docnos):
    n = len(docnos)
    return pd.DataFrame({"qid": qid, "docno": docnos, "score": [float(n - i) for i in range(n)], "rank": 1})


RUNS = {
    "good": make_run("1", ["g1", "g2", "g3", "g4"]),
    "poor": make_run("1", ["p1", "p2", "p3", "p4"]),
    "other": make_run("1", ["o1", "o2", "o3", "o4"]),
}


def run_of(docno):
    return {"g": "good", "p": "poor", "o": "other"}[docno[0]]


@pytest.mark.parametrize("cls", [MoveToFront, MaxMean])
@pytest.mark.parametrize("seed", range(5))
def test_the_run_that_just_found_a_relevant_document_is_asked_again(cls, seed):
    pool = cls(RUNS, seed=seed)
    first = pool.next_document("1")
    pool.record("1", first, True)
    second = pool.next_document("1")
    assert run_of(second) == run_of(first)
    assert int(second[1]) == int(first[1]) + 1


@pytest.mark.parametrize("seed", range(5))
def test_move_to_front_leaves_a_run_after_a_non_relevant_document(seed):
    pool = MoveToFront(RUNS, seed=seed)
    first = pool.next_document("1")
    pool.record("1", first, False)
    assert run_of(pool.next_document("1")) != run_of(first)


@pytest.mark.parametrize("seed", range(5))
def test_maxmean_exhausts_the_run_that_keeps_finding_relevant_documents(seed):
    # poor and other fail once (posterior mean 1/3), good succeeds (2/3 and up): at most one pull each
    # on the others, then every document of good
    judged = replay(MaxMean(RUNS, 6, seed=seed), lambda q, d: run_of(d) == "good")
    assert {"g1", "g2", "g3", "g4"} <= set(judged["docno"])
    assert judged["relevant"].sum() == 4


def test_next_document_repeats_until_recorded_and_never_offers_a_judged_document():
    pool = MaxMean(RUNS, seed=1)
    docno = pool.next_document("1")
    assert pool.next_document("1") == docno
    pool.record("1", "g2", True)  # judged elsewhere (e.g. an earlier round)
    seen = [pool.next_document("1")]
    pool.record("1", seen[0], False)
    while (d := pool.next_document("1")) is not None:
        seen.append(d)
        pool.record("1", d, False)
    assert "g2" not in seen
    assert len(seen) + 1 == 12


def test_budget_stops_the_queue():
    pool = adaptive_pool("bandit", RUNS, 3, seed=0)
    judged = replay(pool, lambda q, d: d.startswith("g"))
    assert len(judged) == 3
    assert pool.next_document("1") is None


def test_a_document_shared_by_runs_is_judged_once():
    runs = {"a": make_run("1", ["x", "y"]), "b": make_run("1", ["x", "z"])}
    judged = replay(MoveToFront(runs), lambda q, d: True)
    assert sorted(judged["docno"]) == ["x", "y", "z"]


def test_shared_credit_rewards_every_run_that_retrieved_the_document():
    runs = {"a": make_run("1", ["x", "a2"]), "b": make_run("1", ["x", "b2"]), "c": make_run("1", ["c1", "c2"])}
    pool = MaxMean(runs, shared=True)
    pool.record("1", "x", True)
    topic = pool._topic("1")
    assert dict(zip(topic.tags, topic.rel, strict=True)) == {"a": 1.0, "b": 1.0, "c": 0.0}


def test_bayesian_bandit_is_reproducible_with_its_seed():
    runs = {f"r{i}": make_run("1", [f"d{i}-{j}" for j in range(10)]) for i in range(6)}
    oracle = lambda q, d: d.endswith(("0", "1"))  # noqa: E731
    first = replay(BayesianBandit(runs, 20, seed=3), oracle)["docno"].tolist()
    again = replay(BayesianBandit(runs, 20, seed=3), oracle)["docno"].tolist()
    other = replay(BayesianBandit(runs, 20, seed=4), oracle)["docno"].tolist()
    assert first == again
    assert first != other


def test_result_lists_judged_documents_in_judging_order_with_provenance():
    pool = MoveToFront(RUNS, 2, seed=0)
    judged = replay(pool, lambda q, d: True)
    result = pool.result()
    assert result.entries["docno"].tolist() == judged["docno"].tolist()
    assert result.entries["pool_rank"].tolist() == [1, 2]
    assert set(result.provenance["docno"]) == set(judged["docno"])


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="unknown adaptive strategy"):
        adaptive_pool("nope", RUNS)

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


def offered(pool, relevant, *, qid="1"):
    """Judge every document the pool offers (``relevant``: the set of relevant docnos); their order."""
    return replay(pool, lambda q, d: d in relevant).query("tag.notna()")["docno"].tolist()


# Move-to-Front (Cormack, Palmer and Clarke 1998, Section 6): a relevant document sets the run's
# priority back to the maximum (0), a non-relevant one lowers it by one; equal priorities go to the run
# that found a relevant document most recently, else at random.
MTF_RUNS = {"a": make_run("1", ["a1", "a2", "a3", "a4"]), "b": make_run("1", ["b1", "b2", "b3"])}


@pytest.mark.parametrize("seed", range(12))
def test_move_to_front_resets_a_run_to_the_maximum_priority_after_a_relevant_document(seed):
    # a: miss, hit, miss, hit; b: misses. Hand-computed, for each way the ties at the start can fall:
    # after a2 (hit) a is back at 0, after a3 (miss) at -1, level with b (at -1 or lower) but ahead of it
    # because a found a relevant document more recently, so a4 follows a3 at once. (Keeping a's priority
    # at the count of all its misses, -2, would send the queue to b, still at -1, between a3 and a4.)
    order = offered(MoveToFront(MTF_RUNS, seed=seed), {"a2", "a4"})
    assert order in (["a1", "b1", "a2", "a3", "a4", "b2", "b3"],
                     ["a1", "b1", "b2", "a2", "a3", "a4", "b3"],
                     ["b1", "a1", "a2", "a3", "a4", "b2", "b3"],
                     ["b1", "a1", "b2", "a2", "a3", "a4", "b3"])


@pytest.mark.parametrize("seed", range(12))
def test_move_to_front_counts_a_document_judged_relevant_earlier_when_a_run_reaches_it(seed):
    # x was judged relevant before the pool was extended. When a reaches it (after missing with a1), a is
    # moved to the front at no cost: a3 (miss) leaves it at -1, ahead of b at -1 or -2, so a4 follows a3.
    runs = {"a": make_run("1", ["a1", "x", "a3", "a4"]), "b": make_run("1", ["b1", "b2", "b3", "b4"])}
    pool = MoveToFront(runs, seed=seed)
    pool.record("1", "x", True)
    order = offered(pool, set())
    assert order in (["a1", "b1", "a3", "a4", "b2", "b3", "b4"],
                     ["a1", "b1", "b2", "a3", "a4", "b3", "b4"],
                     ["b1", "a1", "a3", "a4", "b2", "b3", "b4"],
                     ["b1", "a1", "b2", "a3", "a4", "b3", "b4"])
    assert pool.remaining("1") == 0 and len(pool.judged("1")) == 8  # x cost one judgment, once


@pytest.mark.parametrize("seed", range(12))
def test_move_to_front_counts_a_document_judged_non_relevant_earlier_as_a_miss(seed):
    # x is already judged non-relevant: a run whose next document is x drops to -1 without a judgment,
    # so the first document offered always comes from b or c, never a2.
    runs = {"a": make_run("1", ["x", "a2"]), "b": make_run("1", ["b1", "b2"]), "c": make_run("1", ["c1", "c2"])}
    pool = MoveToFront(runs, seed=seed)
    pool.record("1", "x", False)
    assert pool.next_document("1") in {"b1", "c1"}


# MaxMean (Losada, Parapar and Barreiro 2016/2017): Beta(1, 1) prior, posterior mean
# (1 + rel) / (2 + rel + nrel) of the pulled run's rewards; ties at random.
@pytest.mark.parametrize("seed", range(12))
def test_maxmean_follows_the_beta_posterior_means(seed):
    # a: hit, miss, hit, hit; b: misses. a1 hit -> a 2/3 > b 1/2; a2 miss -> a 2/4 = 1/2, level with an
    # untried b (1/2) but above b after one miss (1/3). Hand-computed orders for every tie outcome:
    runs = {"a": make_run("1", ["a1", "a2", "a3", "a4"]), "b": make_run("1", ["b1", "b2", "b3", "b4"])}
    order = offered(MaxMean(runs, seed=seed), {"a1", "a3", "a4"})
    assert order in (["a1", "a2", "a3", "a4", "b1", "b2", "b3", "b4"],
                     ["a1", "a2", "b1", "a3", "a4", "b2", "b3", "b4"],
                     ["b1", "a1", "a2", "a3", "a4", "b2", "b3", "b4"])


SHARED_RUNS = {"a": make_run("1", ["x", "a2"]), "b": make_run("1", ["x", "b2"]), "c": make_run("1", ["c1", "c2"])}


@pytest.mark.parametrize("seed", range(12))
def test_maxmean_credits_a_judgment_to_the_pulled_run_only(seed):
    # x (retrieved by a and b) is non-relevant, the rest relevant. Pulling a for x leaves b untried (1/2):
    # b is skipped past x to b2 and competes with c (1/2) while a (1/3) waits.
    order = offered(MaxMean(SHARED_RUNS, seed=seed), {"a2", "b2", "c1", "c2"})
    assert order in (["x", "b2", "c1", "c2", "a2"], ["x", "c1", "c2", "b2", "a2"],
                     ["x", "a2", "c1", "c2", "b2"], ["x", "c1", "c2", "a2", "b2"],
                     ["c1", "c2", "x", "b2", "a2"], ["c1", "c2", "x", "a2", "b2"])


@pytest.mark.parametrize("seed", range(12))
def test_maxmean_shared_credits_every_run_that_retrieved_the_document(seed):
    # with shared=True the miss on x drops both a and b to 1/3, so c (1/2) goes next whenever it is left
    order = offered(MaxMean(SHARED_RUNS, seed=seed, shared=True), {"a2", "b2", "c1", "c2"})
    assert order in (["x", "c1", "c2", "a2", "b2"], ["x", "c1", "c2", "b2", "a2"],
                     ["c1", "c2", "x", "a2", "b2"], ["c1", "c2", "x", "b2", "a2"])


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

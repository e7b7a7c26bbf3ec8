"""Stratified sampling below a fully judged depth and the Horvitz-Thompson estimate of R."""

import numpy as np
import pandas as pd
import pytest

from pooling.strategies import Stratum, estimate_relevant, stratified_pool


def make_runs(n_topics=2, n_docs=100):
    """One run per topic block: documents d0..d99 ranked in order, so min_depth(dk) = k + 1."""
    rows = [(str(q), f"d{k}", float(n_docs - k)) for q in range(1, n_topics + 1) for k in range(n_docs)]
    frame = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    frame["rank"] = 0
    return {"r": frame}


STRATA = [Stratum(1, 10, 1.0), Stratum(11, 100, 0.1)]


def test_top_stratum_is_judged_in_full_and_the_rest_is_sampled_at_its_rate():
    entries = stratified_pool(make_runs(), STRATA, seed=1).entries
    topic = entries[entries["qid"] == "1"]
    top = topic[topic["stratum"] == 1]
    rest = topic[topic["stratum"] == 2]
    assert sorted(top["docno"], key=lambda d: int(d[1:])) == [f"d{k}" for k in range(10)]
    assert (top["inclusion_probability"] == 1.0).all()
    assert len(rest) == 9  # round(0.1 * 90)
    assert np.allclose(rest["inclusion_probability"], 9 / 90)
    assert (rest["min_depth"] > 10).all()


def test_stratum_sizes_are_recorded_for_inferred_measures():
    result = stratified_pool(make_runs(), STRATA, seed=1)
    assert result.params["stratum_sizes"] == {"1": [10, 90], "2": [10, 90]}


def test_the_sample_is_reproducible_and_depends_on_the_seed():
    a = stratified_pool(make_runs(), STRATA, seed=7).pairs()
    b = stratified_pool(make_runs(), STRATA, seed=7).pairs()
    c = stratified_pool(make_runs(), STRATA, seed=8).pairs()
    assert a.equals(b)
    assert not a.equals(c)


def test_overlapping_strata_are_refused():
    with pytest.raises(ValueError, match="overlap"):
        stratified_pool(make_runs(), [Stratum(1, 10, 1.0), Stratum(5, 20, 0.5)])


def test_horvitz_thompson_weights_each_relevant_document_by_its_inclusion_probability():
    judged = pd.DataFrame({"qid": ["1"] * 9, "stratum": [2] * 9, "inclusion_probability": [0.1] * 9,
                           "relevant": [1, 1, 1, 0, 0, 0, 0, 0, 0]})
    estimate = estimate_relevant(judged)
    assert estimate.total == pytest.approx(30.0)
    # Var = N^2 (1 - n/N) s^2 / n with N = 90, n = 9, p = 1/3, s^2 = 9/8 * 2/9 = 1/4
    assert estimate.std_error == pytest.approx(np.sqrt(90**2 * 0.9 * 0.25 / 9))


def test_fully_judged_strata_are_counted_exactly():
    judged = pd.DataFrame({"qid": ["1"] * 4, "inclusion_probability": [1.0] * 4, "relevant": [2, 0, 1, 0]})
    estimate = estimate_relevant(judged)
    assert estimate.total == 2.0
    assert estimate.std_error == 0.0
    assert estimate.per_topic["relevant_found"].tolist() == [2]


def test_horvitz_thompson_is_unbiased_on_a_simulated_population():
    rng = np.random.default_rng(0)
    strata = [(10, 1.0), (30, 0.3), (60, 0.1)]  # (size, rate) per stratum, relevance thinning out
    truth = {q: [rng.random(size) < p for (size, _), p in zip(strata, (0.7, 0.3, 0.08), strict=True)]
             for q in ("1", "2", "3")}
    true_r = sum(int(r.sum()) for topic in truth.values() for r in topic)
    estimates, covered = [], 0
    for _ in range(200):
        rows = []
        for qid, topic in truth.items():
            for h, ((size, rate), relevant) in enumerate(zip(strata, topic, strict=True)):
                n = max(1, round(rate * size))
                picked = rng.choice(size, n, replace=False)
                rows += [(qid, h, n / size, bool(relevant[i])) for i in picked]
        sample = pd.DataFrame(rows, columns=["qid", "stratum", "inclusion_probability", "relevant"])
        estimate = estimate_relevant(sample)
        estimates.append(estimate.total)
        covered += estimate.ci_low <= true_r <= estimate.ci_high
    standard_error_of_mean = np.std(estimates) / np.sqrt(len(estimates))
    assert abs(np.mean(estimates) - true_r) < 4 * standard_error_of_mean
    # the normal-approximation interval undercovers a little with 6-9 documents per sampled stratum
    assert 0.8 <= covered / 200 <= 1.0


def test_stratified_pool_records_the_probabilities_the_estimator_needs():
    runs = make_runs(n_topics=1)
    relevant = {f"d{k}" for k in range(0, 100, 4)}  # 25 relevant documents
    estimates = []
    for seed in range(40):
        entries = stratified_pool(runs, [Stratum(1, 10, 1.0), Stratum(11, 100, 0.2)], seed=seed).entries
        estimates.append(estimate_relevant(entries.assign(relevant=entries["docno"].isin(relevant))).total)
    assert abs(np.mean(estimates) - 25) < 2


def test_inclusion_probability_must_be_constant_within_a_stratum():
    judged = pd.DataFrame({"qid": ["1", "1"], "stratum": [1, 1], "inclusion_probability": [0.5, 0.25],
                           "relevant": [1, 0]})
    with pytest.raises(ValueError, match="differs"):
        estimate_relevant(judged)

"""Two qrels compared as a meta-evaluator would (evaluation.engine.qrels_compare), on generated qrels and runs:
kappa as scikit-learn computes it, Kendall's tau as scipy does, tau_AP from the paper's formula written here,
the runs' MAP as a plain average precision computes it, and the significant pairs that swap or tie."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from evaluation.engine.qrels_compare import compare_qrels, ranking_agreement

TOPICS, DOCS, RUNS = 8, 40, 12


@pytest.fixture(scope="module")
def track():
    rng = np.random.default_rng(41)
    rows = [(str(t), f"D{t}-{d}", int(rng.choice([0, 0, 0, 1, 2]))) for t in range(1, TOPICS + 1) for d in range(DOCS)]
    a = pd.DataFrame(rows, columns=["qid", "docno", "rel"])
    b = a.copy()
    flip = rng.random(len(b)) < 0.3  # a judge that disagrees on about a third of the pairs
    b.loc[flip, "rel"] = rng.choice([0, 1, 2], size=int(flip.sum()))
    b = b.drop(index=[0, 1])  # and did not judge two pairs
    runs = {}
    for r in range(RUNS):
        skill = r / RUNS
        lines = []
        for t in range(1, TOPICS + 1):
            gains = a[a["qid"] == str(t)]["rel"].to_numpy()
            score = rng.random(DOCS) + skill * gains
            lines += [(str(t), f"D{t}-{d}", float(score[d])) for d in range(DOCS)]
        runs[f"run{r:02d}"] = pd.DataFrame(lines, columns=["qid", "docno", "score"])
    return a, b, runs


def _ap(qrels: pd.DataFrame, run: pd.DataFrame, qid: str) -> float:
    relevant = set(qrels[(qrels["qid"] == qid) & (qrels["rel"] >= 1)]["docno"])
    ranked = run[run["qid"] == qid].sort_values("score", ascending=False)["docno"].tolist()
    hits, total = 0, 0.0
    for rank, docno in enumerate(ranked, 1):
        if docno in relevant:
            hits += 1
            total += hits / rank
    return total / len(relevant) if relevant else 0.0


def _tau_ap_from_the_paper(truth: dict, estimate: dict) -> float:
    """Yilmaz, Aslam & Robertson (2008), eq. 2: rank by the estimate; C(i) = the systems above rank i that
    the truth also ranks above it; tau_AP = 2/(N-1) * sum_{i=2..N} C(i)/(i-1) - 1."""
    order = sorted(estimate, key=lambda s: -estimate[s])
    n = len(order)
    total = 0.0
    for i in range(1, n):
        correct = sum(1 for above in order[:i] if truth[above] > truth[order[i]])
        total += correct / i
    return 2 / (n - 1) * total - 1


def test_kappa_is_scikit_learns_on_the_pairs_both_judged(track):
    a, b, runs = track
    labels = compare_qrels(a, b, runs, relevant_from=1, grades=[0, 1, 2]).labels
    both = a.merge(b, on=["qid", "docno"], suffixes=("_a", "_b"))
    assert labels["shared"] == len(a) - 2
    assert labels["kappa_binary"] == pytest.approx(cohen_kappa_score(both["rel_a"] >= 1, both["rel_b"] >= 1))
    assert labels["kappa_graded"] == pytest.approx(
        cohen_kappa_score(both["rel_a"], both["rel_b"], weights="linear", labels=[0, 1, 2]))
    assert 0.2 < labels["kappa_binary"] < 0.9
    assert labels["relevant_a"] == pytest.approx((both["rel_a"] >= 1).mean())
    assert labels["relevant_b"] == pytest.approx((both["rel_b"] >= 1).mean())


def test_tau_and_tau_ap_are_those_of_the_runs_map(track):
    a, b, runs = track
    rankings = compare_qrels(a, b, runs, measure="map", relevant_from=1).rankings
    topics = [str(t) for t in range(1, TOPICS + 1)]
    map_a = {tag: np.mean([_ap(a, run, q) for q in topics]) for tag, run in runs.items()}
    map_b = {tag: np.mean([_ap(b, run, q) for q in topics]) for tag, run in runs.items()}
    systems = {s["run"]: s for s in rankings["systems"]}
    for tag in runs:
        assert systems[tag]["a"] == pytest.approx(map_a[tag]) and systems[tag]["b"] == pytest.approx(map_b[tag])
    tags = sorted(runs)
    assert len({round(v, 12) for v in map_b.values()}) == RUNS  # no ties: the paper's formula applies as written
    assert rankings["tau"] == pytest.approx(kendalltau([map_a[t] for t in tags], [map_b[t] for t in tags]).statistic)
    assert rankings["tau_ap"] == pytest.approx(_tau_ap_from_the_paper(map_a, map_b))
    assert rankings["tau_ap"] != pytest.approx(rankings["tau"])
    top = sorted(tags, key=lambda t: -map_a[t])[:10]
    assert rankings["tau_top"] == pytest.approx(kendalltau([map_a[t] for t in top], [map_b[t] for t in top]).statistic)


def test_pairs_significant_under_one_qrels_that_swap_or_tie_under_the_other():
    rng = np.random.default_rng(7)
    topics = [str(t) for t in range(20)]
    noise = lambda: rng.normal(0, 0.02, len(topics))  # noqa: E731
    a = pd.DataFrame({"p": 0.6 + noise(), "q": 0.3 + noise(), "r": 0.1 + noise()}, index=topics)
    b = pd.DataFrame({"p": 0.3 + noise(), "q": 0.6 + noise(), "r": 0.1 + noise()}, index=topics)
    b["r"] = b["p"] + rng.normal(0, 0.3, len(topics))  # r: no longer told apart from p under b
    pairs = {(p["better"], p["worse"]): p for p in ranking_agreement(a, b)["pairs"]}
    assert pairs[("p", "q")]["other"] == "swapped"
    assert pairs[("p", "r")]["other"] == "tied" and pairs[("p", "r")]["significant_under"] == "A"
    same = ranking_agreement(a, a)
    assert same["pairs"] == [] and same["tau"] == pytest.approx(1.0) and same["tau_ap"] == pytest.approx(1.0)


def test_the_vectorised_t_tests_decide_as_the_engines_paired_tests(track):
    from evaluation.engine.qrels_compare import _significant, per_topic_table
    from evaluation.engine.significance import pairwise_tests

    a, b, runs = track
    table = per_topic_table(b, runs, "map", relevant_from=1, topics=[str(t) for t in range(1, TOPICS + 1)])
    expected = {(r.run_a, r.run_b): bool(r.p_adjusted < 0.05) for r in pairwise_tests(table, test="t")}
    assert _significant(table, "t", "holm", 0.05) == expected
    assert 0 < sum(expected.values()) < len(expected)

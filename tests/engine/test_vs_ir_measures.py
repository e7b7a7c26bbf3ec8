"""The families ir_measures (0.4.3, a test-only peer) computes with providers of its own: ERR@k (through
``gdeval.pl``, the TREC Web track's script that ir_measures ships), Judged@k and RR@k, against the engine's
``err_cut``, ``judged_min`` and ``rr_cut`` on random graded runs with unjudged documents (with tied scores for
ERR, whose script orders ties as trec_eval does).

ERR: gdeval divides every grade's gain ``2^g - 1`` by ``2^4`` (its fixed highest grade) and prints 5
decimals; the engine divides by ``2^g_max`` with ``g_max`` the highest grade of the qrels (Chapelle et al.'s
definition, which TREC's scripts fix at 4 for their 0..4 scale). The values are equal when the qrels' highest
grade is 4, which these cases ensure; with another scale they differ by that choice only (a test below)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from tests.engine.conftest import evaluate

ir_measures = pytest.importorskip("ir_measures")


def _case(seed: int, top: int = 4, ties: bool = True):
    """8 numeric topics (gdeval reads numbers), grades 0..top with ``top`` present, scores with ties (or none),
    a third of each run unjudged; a short run for topic 8."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(1, 9):
        docs = [f"d{t}-{i}" for i in range(60)]
        grades = rng.integers(0, top + 1, size=40)
        grades[0] = top
        qrels += [(str(t), d, int(g)) for d, g in zip(docs[:40], grades, strict=True)]
        picked = rng.choice(docs, size=30 if t < 8 else 7, replace=False)
        scores = rng.integers(0, 12, size=picked.size) / 4 if ties else rng.permutation(picked.size) + 0.5
        run += [(str(t), str(d), float(s)) for d, s in zip(picked, scores, strict=True)]
    return qrels, run


def _theirs(provider, measures, qrels, run) -> dict[tuple[str, str], float]:
    q = [ir_measures.Qrel(t, d, g) for t, d, g in qrels]
    r = [ir_measures.ScoredDoc(t, d, s) for t, d, s in run]
    return {(str(m.measure), m.query_id): m.value for m in provider.iter_calc(measures, q, r)}


def _compare(ours, theirs, pairs, tolerance):
    topics = sorted({t for _, t in theirs})
    assert topics, "the peer returned nothing"
    for column, name in pairs:
        mine = ours.per_topic.loc[topics, column].to_numpy()
        peer = np.array([theirs[(name, t)] for t in topics])
        assert mine == pytest.approx(peer, abs=tolerance), name


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval.pl needs perl")
@pytest.mark.parametrize("seed", range(3))
def test_err_at_k_equals_gdeval_on_a_0_to_4_scale(seed):
    qrels, run = _case(seed)
    ours = evaluate(qrels, run, ["err_cut.5,10,20"])
    from ir_measures import ERR
    theirs = _theirs(ir_measures.gdeval, [ERR @ 5, ERR @ 10, ERR @ 20], qrels, run)
    _compare(ours, theirs, [("err_cut_5", "ERR@5"), ("err_cut_10", "ERR@10"), ("err_cut_20", "ERR@20")], 6e-6)
    assert ours.aggregate["err_cut_20"] > 0


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval.pl needs perl")
def test_on_a_0_to_2_scale_err_differs_from_gdeval_by_the_highest_grade_only():
    qrels, run = _case(7, top=2)
    ours = evaluate(qrels, run, ["err_cut.10"]).per_topic["err_cut_10"]
    from ir_measures import ERR
    theirs = _theirs(ir_measures.gdeval, [ERR @ 10], qrels, run)
    # the engine's R = (2^g - 1) / 2^2, gdeval's (2^g - 1) / 2^4: its qrels scaled to a 0..4 scale agree
    scaled = evaluate(qrels + [("0", "x", 4)], run, ["err_cut.10"]).per_topic["err_cut_10"]
    topics = sorted({t for _, t in theirs})
    assert scaled.loc[topics].to_numpy() == pytest.approx([theirs[("ERR@10", t)] for t in topics], abs=6e-6)
    assert (ours.loc[topics] > scaled.loc[topics]).all()


@pytest.mark.parametrize("seed", range(3))
def test_judged_and_rr_at_k_equal_ir_measures(seed):
    qrels, run = _case(seed, ties=False)
    ours = evaluate(qrels, run, ["judged_min.5,10,50", "rr_cut.1,5,10"])
    from ir_measures import RR, Judged
    wanted = [Judged @ 5, Judged @ 10, Judged @ 50, RR @ 1, RR @ 5, RR @ 10]
    theirs = _theirs(ir_measures, wanted, qrels, run)  # each from the provider ir_measures picks for it
    _compare(ours, theirs, [("judged_min_5", "Judged@5"), ("judged_min_10", "Judged@10"), ("judged_min_50", "Judged@50"),
                            ("rr_cut_1", "RR@1"), ("rr_cut_5", "RR@5"), ("rr_cut_10", "RR@10")], 1e-9)
    # ir_measures' names through the CLI's mapping mean the same measures
    from evaluation.engine.spec import from_ir_measures
    assert [from_ir_measures(n) for n in ("Judged@50", "RR@10", "ERR@10")] == ["judged_min.50", "rr_cut.10",
                                                                                   "err_gdeval_cut.10"]
    short = ours.per_topic.loc["8"]
    assert short["judged_min_50"] == pytest.approx(theirs[("Judged@50", "8")]) and short["judged_min_50"] > 7 / 50

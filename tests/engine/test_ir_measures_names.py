"""Every ir_measures name the workbench accepts (``evaluation.engine.spec.IR_MEASURES``, bare and with ``@k``)
gives ir_measures' (0.4.3) value, per topic and as the run's mean, on random graded qrels and runs with
unjudged documents and no tied scores (ir_measures' providers order ties differently from trec_eval; with
ties, ``tests/engine/test_vs_ir_measures.py`` compares ERR through gdeval, which orders them as trec_eval).
The names ir_measures cannot compute are refused with a line naming them."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from evaluation.engine.spec import IR_MEASURES, UnknownMeasure, parse_measures
from tests.engine.conftest import evaluate

ir_measures = pytest.importorskip("ir_measures")

#: each accepted name with a parameter ir_measures reads (the recall level for IPrec)
ACCEPTED = ["AP", "AP@10", "nDCG", "nDCG@10", "P@5", "P@20", "R@10", "R@1000", "RR", "RR@5", "Rprec", "Bpref",
            "BPref", "Judged@5", "Judged@50", "Success@1", "Success@10", "SetP", "SetR", "SetF", "NumRet", "NumRel",
            "NumRelRet", "NumQ", "ERR@5", "ERR@20", "infAP", "IPrec@0.5"]


def _case(seed: int, top: int):
    """6 numeric topics (gdeval reads numbers), grades 0..top, distinct scores, a third unjudged; a short run
    for topic 6 and a topic with no relevant document."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(1, 7):
        docs = [f"d{t}-{i:02d}" for i in range(60)]
        grades = rng.integers(0, top + 1, size=40)
        grades[0] = top if t != 5 else 0
        if t == 5:
            grades[:] = 0
        qrels += [(str(t), d, int(g)) for d, g in zip(docs[:40], grades, strict=True)]
        picked = rng.choice(docs, size=30 if t < 6 else 7, replace=False)
        scores = rng.permutation(picked.size) + 0.5
        run += [(str(t), str(d), float(s)) for d, s in zip(picked, scores, strict=True)]
    return qrels, run


def test_every_accepted_name_is_in_the_list():
    bare = {n.partition("@")[0] for n in ACCEPTED}
    assert bare == set(IR_MEASURES), "a name accepted but not compared (or compared but not accepted)"


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval.pl (ERR@k) needs perl")
@pytest.mark.parametrize(("seed", "top"), [(0, 1), (1, 2), (2, 4)])
def test_every_accepted_name_gives_ir_measures_value(seed, top):
    qrels, run = _case(seed, top)
    q = [ir_measures.Qrel(t, d, g) for t, d, g in qrels]
    r = [ir_measures.ScoredDoc(t, d, s) for t, d, s in run]
    measures = [ir_measures.parse_measure(n) for n in ACCEPTED]
    theirs: dict[tuple[str, str], float] = {}
    for m in ir_measures.iter_calc(measures, q, r):
        theirs[(str(m.measure), m.query_id)] = m.value
    their_means = {str(k): v for k, v in ir_measures.calc_aggregate(measures, q, r).items()}
    for name in ACCEPTED:  # one at a time: trec_eval's syntax keeps one parameter list per measure (P@5, P@20)
        ours = evaluate(qrels, run, [name])
        column = _column(parse_measures([name])[0], name)
        topics = sorted({t for (n, t) in theirs if n == str(ir_measures.parse_measure(name))})
        assert topics, name
        peer = np.array([theirs[(str(ir_measures.parse_measure(name)), t)] for t in topics])
        if column in ours.per_topic.columns:
            mine = ours.per_topic.loc[topics, column].to_numpy(dtype=float)
            assert mine == pytest.approx(peer, abs=6e-6 if name.startswith("ERR") else 1e-9), name
        assert float(ours.aggregate[column]) == pytest.approx(their_means[str(ir_measures.parse_measure(name))],
                                                             abs=6e-6 if name.startswith("ERR") else 1e-9), name


def _column(measure, name: str) -> str:
    """The printed name of the value ``name`` asks for (``IPrec@0.5`` is one of several recall levels)."""
    if len(measure.names) == 1:
        return measure.names[0]
    wanted = name.partition("@")[2]
    return next(n for n in measure.names if float(n.rsplit("_", 1)[1]) == float(wanted))


def test_binary_qrels_err_is_gdevals_and_err_cut_keeps_the_qrels_highest_grade():
    qrels = [("1", "a", 1), ("1", "b", 0), ("1", "c", 1)]
    run = [("1", "a", 3.0), ("1", "b", 2.0), ("1", "c", 1.0)]
    ours = evaluate(qrels, run, ["ERR@10", "err_cut.10"]).aggregate
    # gdeval: R = (2^1 - 1) / 2^4 = 1/16 per relevant document; err_cut: R = (2^1 - 1) / 2^1 (g_max 1)
    assert ours["err_gdeval_cut_10"] == pytest.approx(1 / 16 + (1 / 3) * (1 / 16) * (15 / 16))
    assert ours["err_cut_10"] == pytest.approx(1 / 2 + (1 / 3) * (1 / 2) * (1 / 2))


@pytest.mark.parametrize(("request_", "why"), [("ERR", "needs a cut-off"), ("Judged", "needs a cut-off"),
                                                ("Rprec@5", "takes no cut-off"), ("nERR@10", "illegal measure"),
                                                ("RBP", "illegal measure")])
def test_names_ir_measures_cannot_compute_are_refused_in_one_line(request_, why):
    with pytest.raises(UnknownMeasure, match=why) as refused:
        parse_measures([request_])
    assert request_ in str(refused.value) and "\n" not in str(refused.value)

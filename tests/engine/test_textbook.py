"""The textbook forms (dcg, ideal_dcg, dcg_exp, Järvelin & Kekäläinen's DCG, CG/NCG, fallout, ROC AUC):
worked examples computed by hand, through the CLI, and equality with the peers that have them (ranx's
dcg and dcg_burges, scikit-learn's roc_auc_score)."""

from __future__ import annotations

import math
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from tests.engine.conftest import evaluate

GRADES = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]  # the documents at ranks 1..10, and the whole qrels of the topic
RELEVANT_AT = {1, 2, 4, 6, 13}           # of 14 retrieved; the 9 others judged non-relevant


def _cli(tmp_path, qrels_lines, run_lines, *measures) -> dict[str, float]:
    (tmp_path / "q").write_text("".join(qrels_lines))
    (tmp_path / "r").write_text("".join(run_lines))
    out = StringIO()
    call_command("trec_eval", *[a for m in measures for a in ("-m", m)], str(tmp_path / "q"), str(tmp_path / "r"),
                 stdout=out)
    return {name: float(value) for name, _, value in (line.split() for line in out.getvalue().splitlines())}


@pytest.fixture
def graded(tmp_path):
    qrels = [f"1 0 d{i} {g}\n" for i, g in enumerate(GRADES, 1)]
    run = [f"1 Q0 d{i} {i} {100 - i} run\n" for i in range(1, 11)]
    return _cli(tmp_path, qrels, run, "dcg", "dcg_cut.5,10", "ideal_dcg_cut.5,10", "ideal_dcg", "dcg_exp_cut.10",
                "dcg_jk_cut.10", "ndcg_jk_cut.10", "cg_cut.5,10", "ncg_cut.5,10", "ndcg_cut.10")


def test_dcg_and_its_ideal_by_hand(graded):
    log2 = math.log2
    dcg5 = 3 / log2(2) + 2 / log2(3) + 3 / log2(4)
    dcg10 = dcg5 + 1 / log2(7) + 2 / log2(8) + 2 / log2(9) + 3 / log2(10)
    ideal = [3, 3, 3, 2, 2, 2, 1]
    idcg5 = sum(g / log2(i + 1) for i, g in enumerate(ideal[:5], 1))
    idcg = sum(g / log2(i + 1) for i, g in enumerate(ideal, 1))
    assert graded["dcg_cut_5"] == pytest.approx(dcg5, abs=5e-5) and graded["dcg_cut_10"] == pytest.approx(dcg10, abs=5e-5)
    assert graded["dcg"] == graded["dcg_cut_10"]
    assert graded["ideal_dcg_cut_5"] == pytest.approx(idcg5, abs=5e-5)
    assert graded["ideal_dcg_cut_10"] == graded["ideal_dcg"] == pytest.approx(idcg, abs=5e-5)
    assert graded["ndcg_cut_10"] == pytest.approx(dcg10 / idcg, abs=5e-5)  # trec_eval's own, unchanged


def test_exponential_gain_jk_dcg_and_cumulative_gain_by_hand(graded):
    log2 = math.log2
    exp = [2 ** g - 1 for g in GRADES]
    assert graded["dcg_exp_cut_10"] == pytest.approx(sum(e / log2(i + 1) for i, e in enumerate(exp, 1)), abs=5e-5)
    jk = GRADES[0] + sum(g / log2(i) for i, g in enumerate(GRADES, 1) if i >= 2)
    ideal = [3, 3, 3, 2, 2, 2, 1]
    ideal_jk = ideal[0] + sum(g / log2(i) for i, g in enumerate(ideal, 1) if i >= 2)
    assert graded["dcg_jk_cut_10"] == pytest.approx(jk, abs=5e-5)
    assert graded["ndcg_jk_cut_10"] == pytest.approx(jk / ideal_jk, abs=5e-5)
    assert (graded["cg_cut_5"], graded["cg_cut_10"]) == (8.0, 16.0)
    assert graded["ncg_cut_5"] == pytest.approx(8 / 13, abs=5e-5) and graded["ncg_cut_10"] == 1.0


def test_another_log_base_leaves_the_first_ranks_undiscounted():
    qrels = [("1", f"d{i}", g) for i, g in enumerate(GRADES, 1)]
    run = [("1", f"d{i}", 100.0 - i) for i in range(1, 11)]
    value = evaluate(qrels, run, ["dcg_jk_cut.10,b=3"]).aggregate["dcg_jk_cut_b3_10"]
    by_hand = sum(g if i < 3 else g / math.log(i, 3) for i, g in enumerate(GRADES, 1))
    assert value == pytest.approx(by_hand, abs=1e-12)


def test_fallout_and_roc_auc_by_hand(tmp_path):
    qrels = [f"1 0 b{i} {int(i in RELEVANT_AT)}\n" for i in range(1, 15)]
    run = [f"1 Q0 b{i} {i} {100 - i} run\n" for i in range(1, 15)]
    values = _cli(tmp_path, qrels, run, "fallout_cut.5,10", "roc_auc", "map")
    assert values["fallout_cut_5"] == pytest.approx(2 / 9, abs=5e-5)   # ranks 3 and 5 of the 9 non-relevant
    assert values["fallout_cut_10"] == pytest.approx(6 / 9, abs=5e-5)
    # non-relevant below each relevant: 9, 9, 8, 7, 1 of 9 x 5 pairs
    assert values["roc_auc"] == pytest.approx(34 / 45, abs=5e-5)
    assert values["map"] == pytest.approx((1 + 1 + 3 / 4 + 4 / 6 + 5 / 13) / 5, abs=5e-5)


def _random_case(seed: int):
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for t in range(8):
        docs = [f"d{t}-{i}" for i in range(60)]
        for d in docs[:40]:
            qrels.append((str(t), d, int(rng.integers(0, 4))))
        for d in rng.choice(docs, size=30, replace=False):
            run.append((str(t), str(d), float(rng.random())))
    return qrels, run


@pytest.mark.parametrize("seed", range(5))
def test_dcg_equals_ranx_dcg_and_dcg_burges(seed):
    ranx = pytest.importorskip("ranx")
    qrels, run = _random_case(seed)
    ours = evaluate(qrels, run, ["dcg_cut.5,10", "dcg_exp_cut.10"]).per_topic
    ranx_qrels = ranx.Qrels({t: {d: g for q, d, g in qrels if q == t and g > 0} for t in {q for q, _, _ in qrels}})
    ranx_run = ranx.Run({t: {d: s for q, d, s in run if q == t} for t in {q for q, _, _ in run}})
    theirs = ranx.evaluate(ranx_qrels, ranx_run, ["dcg@5", "dcg@10", "dcg_burges@10"], return_mean=False)
    topics = sorted(ranx_run.keys())
    for column, metric in [("dcg_cut_5", "dcg@5"), ("dcg_cut_10", "dcg@10"), ("dcg_exp_cut_10", "dcg_burges@10")]:
        assert ours.loc[topics, column].to_numpy() == pytest.approx(np.asarray(theirs[metric]), abs=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_roc_auc_equals_scikit_learns_with_unretrieved_documents_ranked_last(seed):
    metrics = pytest.importorskip("sklearn.metrics")
    qrels, run = _random_case(seed)
    ours = evaluate(qrels, run, ["roc_auc"]).per_topic["roc_auc"]
    for topic in sorted({q for q, _, _ in run}):
        judged = {d: g for q, d, g in qrels if q == topic}
        scores = {d: s for q, d, s in run if q == topic}
        labels = [int(g >= 1) for g in judged.values()]
        scored = [scores.get(d, -1.0) for d in judged]  # every unretrieved document below every retrieved one
        assert ours[topic] == pytest.approx(metrics.roc_auc_score(labels, scored), abs=1e-12)


def test_other_aggregates_across_topics_and_gm_map_kept(tmp_path):
    qrels = ["1 0 a 1\n", "1 0 b 0\n", "2 0 c 1\n", "2 0 d 1\n", "3 0 e 1\n"]
    run = ["1 Q0 a 1 3 r\n", "1 Q0 b 2 2 r\n", "2 Q0 d 1 3 r\n", "2 Q0 x 2 2 r\n", "2 Q0 c 3 1 r\n", "3 Q0 z 1 1 r\n"]
    per_topic = [1.0, (1 + 2 / 3) / 2, 0.0]  # AP of topics 1, 2, 3

    def run_with(how):
        (tmp_path / "q").write_text("".join(qrels))
        (tmp_path / "r").write_text("".join(run))
        out = StringIO()
        call_command("trec_eval", "--aggregate", how, "-m", "map", "-m", "gm_map", "-m", "P.1",
                     str(tmp_path / "q"), str(tmp_path / "r"), stdout=out)
        return {name: float(value) for name, _, value in (line.split() for line in out.getvalue().splitlines())}

    mean, gmean, hmean, median = (run_with(h) for h in ("mean", "gmean", "hmean", "median"))
    assert mean["map"] == pytest.approx(sum(per_topic) / 3, abs=5e-5)
    floor = [max(v, 1e-5) for v in per_topic]
    assert gmean["gm_map"] == pytest.approx(math.prod(floor) ** (1 / 3), abs=5e-5)
    assert gmean["gm_map"] == mean["gm_map"]  # trec_eval's own gm_map, unchanged by the option
    assert hmean["hm_map"] == 0.0 and hmean["hm_P_1"] == 0.0  # topic 3 scores 0
    assert median["median_map"] == pytest.approx(per_topic[1], abs=5e-5)
    assert median["median_P_1"] == 1.0


def test_trec_eval_takes_ir_measures_names_and_several_run_files(tmp_path):
    qrels = [f"1 0 d{i} {g}\n" for i, g in enumerate(GRADES, 1)]
    (tmp_path / "q").write_text("".join(qrels))
    (tmp_path / "a").write_text("".join(f"1 Q0 d{i} {i} {100 - i} a\n" for i in range(1, 11)))
    (tmp_path / "b").write_text("".join(f"1 Q0 d{i} {i} {i} b\n" for i in range(1, 11)))  # reversed
    out = StringIO()
    call_command("trec_eval", "-m", "nDCG@10", "-m", "P@5", "-m", "AP", "-m", "R@1000", "-m", "RR@10",
                 str(tmp_path / "q"), str(tmp_path / "a"), str(tmp_path / "b"), stdout=out)
    blocks = out.getvalue().split("runid")[1:]
    assert [b.split()[1] for b in blocks] == ["a", "b"]
    names = [line.split()[0] for line in blocks[0].splitlines()[1:]]
    assert names == ["map", "P_5", "recall_1000", "ndcg_cut_10", "rr_cut_10"]
    same = StringIO()
    call_command("trec_eval", "-m", "ndcg_cut.10", str(tmp_path / "q"), str(tmp_path / "a"), stdout=same)
    assert same.getvalue().split()[-1] == [ln for ln in blocks[0].splitlines() if ln.startswith("ndcg_cut_10")][0].split()[-1]

"""xinfAP and infNDCG from stratified samples (``manage.py xinfap``), as NIST's sample_eval.pl computes them:
a two-stratum example by hand, equality with trec_eval's AP and nDCG when every document is sampled, the
intervals, and one-line refusals. (``tests/benchmarks/check_sample_eval.py`` compares with the script itself.)"""

from __future__ import annotations

import io
import math
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from evaluation.engine.cli import main
from evaluation.engine.xinfap import confidence_intervals, evaluate, parse_sampled_qrels

# stratum A: a1 (grade 1) and a2 (0), both sampled; stratum B: b1 (1) and b2 (0) sampled, b3 and b4 not
QRELS = ["1 0 a1 A 1", "1 0 a2 A 0", "1 0 b1 B 1", "1 0 b2 B 0", "1 0 b3 B -1", "1 0 b4 B -1"]
RANKING = ["a1", "b3", "b1", "x", "a2"]


def test_two_strata_by_hand():
    got = evaluate(parse_sampled_qrels(QRELS), {"1": RANKING})["topics"]["1"]
    # R = r_A N_A / n_A + r_B N_B / n_B = 1 * 2/2 + 1 * 4/2 = 3
    assert got["inum_rel"] == 3.0
    # a1 at rank 1: nothing above, prec = 1. b1 at rank 3: above it a1 (A, sampled, relevant) and b3 (B, not
    # sampled): prec = 1/3 + (2/3) [ (1/2)(1 + 1e-5)/(1 + 3e-5) + (1/2)(0 + 1e-5)/(0 + 3e-5) ]
    prec3 = 1 / 3 + (2 / 3) * (0.5 * 1.00001 / 1.00003 + 0.5 * 0.00001 / 0.00003)
    # infAP = sum_h (r_h N_h / n_h) / R * SAP_h / r_h = (1/3) * 1 + (2/3) * prec3
    assert got["infAP"] == pytest.approx(1 / 3 + 2 / 3 * prec3, abs=1e-12)
    # infNDCG: 4 population documents ranked (2 of A, both sampled; 2 of B, 1 sampled); gains a1 1/log2(2),
    # b1 1/log2(4): d * sum_h (d_h/d) G_h / s_h = 4 * (0.5 * 1/2 + 0.5 * 0.5/1) = 2; the ideal: round(R) = 3
    # documents of grade 1
    ideal = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert got["infNDCG"] == pytest.approx(2 / ideal, abs=1e-12)
    # estimated relevant retrieved: sum_h d_h (q_h + 1e-5) / (s_h + 3e-5) over the whole ranking
    assert got["inum_rel_ret"] == pytest.approx(2 * 1.00001 / 2.00003 + 2 * 1.00001 / 1.00003, abs=1e-12)
    assert got["iP10"] == pytest.approx(got["inum_rel_ret"] / 10, abs=1e-12) and got["num_ret"] == 5


def test_with_every_document_sampled_infap_and_infndcg_are_trec_eval_s_ap_and_ndcg(tmp_path):
    judged = {"a": 2, "b": 0, "c": 1, "d": 0, "e": 3, "f": 0}
    (tmp_path / "q").write_text("".join(f"7 0 {d} {'S1' if d < 'd' else 'S2'} {g}\n" for d, g in judged.items()))
    (tmp_path / "trec_q").write_text("".join(f"7 0 {d} {g}\n" for d, g in judged.items()))
    ranking = ["c", "z", "a", "f", "y", "e", "b"]
    (tmp_path / "r").write_text("".join(f"7 Q0 {d} {i} {20 - i} run\n" for i, d in enumerate(ranking, 1)))
    got = evaluate(parse_sampled_qrels((tmp_path / "q").read_text().splitlines()), {"7": ranking})["topics"]["7"]
    out = io.StringIO()
    assert main(["-m", "map", "-m", "ndcg", str(tmp_path / "trec_q"), str(tmp_path / "r")], out, io.StringIO()) == 0
    trec = {line.split()[0]: float(line.split()[2]) for line in out.getvalue().splitlines()}
    assert got["infAP"] == pytest.approx(trec["map"], abs=1e-4)  # the 1e-5 smoothing is all that differs
    assert got["infNDCG"] == pytest.approx(trec["ndcg"], abs=1e-4)


def test_the_interval_is_a_student_t_interval_over_topics():
    bounds = confidence_intervals({"1": {"infAP": 0.2}, "2": {"infAP": 0.4}}, names=("infAP",))["infAP"]
    half = 12.706204736174698 * math.sqrt(0.02) / math.sqrt(2)  # t(0.975; 1) * sd / sqrt(n)
    assert bounds == pytest.approx((0.3 - half, 0.3 + half))
    assert confidence_intervals({"1": {"infAP": 0.2}}, names=("infAP",))["infAP"] is None


def test_the_command_prints_sample_eval_s_lines(tmp_path):
    (tmp_path / "q").write_text("\n".join(QRELS) + "\n2 0 a1 A 1\n")
    (tmp_path / "r").write_text("".join(f"1 Q0 {d} {i} {10 - i} run\n" for i, d in enumerate(RANKING, 1))
                                + "2 Q0 a1 1 1 run\n")
    out = StringIO()
    call_command("xinfap", str(tmp_path / "q"), str(tmp_path / "r"), "-q", "--ci", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("infAP\t\t1\t\t0.") and "infNDCG\t\t2\t\t1.0000" in lines
    assert "iprec@rec0.00\tall\t\t1.0000" in lines and "num_ret\t\tall\t        6" in lines
    assert any(line.startswith("infAP_ci95_low\tall") for line in lines)


@pytest.mark.parametrize("qrels, run, message", [
    ("1 0 a A x\n", "1 Q0 a 1 1 r\n", ":1: grade 'x' is not an integer"),
    ("1 0 a 1\n", "1 Q0 a 1 1 r\n", ":1: expected 5 columns (topic iter docno stratum grade), found 4"),
    ("1 0 a A 1\n1 0 a B 0\n", "1 Q0 a 1 1 r\n", ":2: document 'a' is listed twice for topic '1'"),
    ("1 0 a A 1\n", "1 Q0 a 1 x r\n", ":1: score 'x' is not a number"),
    ("1 0 a A 1\n", "2 Q0 a 1 1 r\n", "no topic is in both the qrels and the run"),
])
def test_bad_files_are_refused_in_one_line(tmp_path, qrels, run, message):
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    with pytest.raises(CommandError) as caught:
        call_command("xinfap", str(tmp_path / "q"), str(tmp_path / "r"), stdout=StringIO())
    assert message in str(caught.value) and "\n" not in str(caught.value)

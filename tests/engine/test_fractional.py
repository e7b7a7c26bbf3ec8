"""Fractional grades (``--fractional-grades``): gains 0.6 or a judge's probability keep their exact values in
the gain-based measures; a grade >= ``-l`` is relevant for the binary ones. Without the option grades are
read as trec_eval reads them (``atol``: 0.6 is 0), and a warning says so."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from evaluation.engine import Evaluator, Qrels
from evaluation.engine.cli import main
from workbench.formats import read_qrels_table, read_run_arrays

QRELS = "1 0 a 0.6\n1 0 b 0.2\n1 0 c 1\n1 0 d 0\n2 0 a 0.5\n2 0 e 0.9\n"
RUN = "1 Q0 b 1 3 r\n1 Q0 a 2 2 r\n1 Q0 x 3 1 r\n1 Q0 c 4 0.5 r\n2 Q0 e 1 2 r\n2 Q0 a 2 1 r\n"
GAIN_MEASURES = ["ndcg", "ndcg_cut.3,10", "dcg", "dcg_cut.3", "ideal_dcg", "cg_cut.3", "ncg_cut.3",
                 "ndcg_jk_cut.3", "dcg_exp_cut.3", "ndcg_exp", "err_cut.3", "nerr_cut.3", "rbp_graded.p=0.8", "G",
                 "Rndcg", "ndcg_rel"]
BINARY_MEASURES = ["map", "P.2,5", "recall.5", "bpref", "recip_rank", "num_rel", "num_rel_ret", "Rprec"]


def _run(tmp_path, *args) -> tuple[int, dict, str]:
    (tmp_path / "q").write_text(QRELS)
    (tmp_path / "r").write_text(RUN)
    out, err = io.StringIO(), io.StringIO()
    code = main([*args, str(tmp_path / "q"), str(tmp_path / "r")], out, err)
    values = {(name, topic): float(value) for name, topic, value in (line.split() for line in out.getvalue().splitlines())}
    return code, values, err.getvalue()


def test_exact_gains_and_a_decimal_relevance_level_by_hand(tmp_path):
    code, v, err = _run(tmp_path, "--fractional-grades", "-l", "0.5", "-q", "-m", "ndcg", "-m", "dcg",
                        "-m", "ndcg_cut.3", "-m", "map", "-m", "P.2")
    assert code == 0 and err == ""
    log2 = math.log2
    # topic 1 ranks b (0.2), a (0.6), x (not judged), c (1); the ideal is c, a, b
    dcg = 0.2 / log2(2) + 0.6 / log2(3) + 1 / log2(5)
    ideal = 1 / log2(2) + 0.6 / log2(3) + 0.2 / log2(4)
    assert v[("dcg", "1")] == pytest.approx(dcg, abs=5e-5)
    assert v[("ndcg", "1")] == pytest.approx(dcg / ideal, abs=5e-5)
    assert v[("ndcg_cut_3", "1")] == pytest.approx((0.2 + 0.6 / log2(3)) / ideal, abs=5e-5)
    # relevant at -l 0.5: a and c, found at ranks 2 and 4: AP = (1/2 + 2/4) / 2
    assert v[("map", "1")] == 0.5 and v[("P_2", "1")] == 0.5
    # topic 2: e (0.9) then a (0.5), the ideal order itself
    assert v[("dcg", "2")] == pytest.approx(0.9 + 0.5 / log2(3), abs=5e-5) and v[("ndcg", "2")] == 1.0


def test_without_the_option_grades_are_read_as_trec_eval_reads_them_and_a_warning_says_so(tmp_path):
    code, v, err = _run(tmp_path, "-q", "-m", "ndcg", "-m", "map")
    assert code == 0
    assert err == ("trec_eval: warning: {q}:1: grade '0.6' read as 0, as trec_eval reads grades (atol); 4 grades "
                   "had decimals. --fractional-grades uses the exact values\n").format(q=tmp_path / "q")
    # 0.6, 0.2, 0.5 and 0.9 are 0: only c (grade 1, rank 4) is relevant, in topic 1
    assert v[("ndcg", "1")] == pytest.approx(1 / math.log2(5), abs=5e-5) and v[("map", "1")] == 0.25
    assert v[("ndcg", "2")] == 0.0


@pytest.mark.parametrize("args, message, exit_code", [
    (["--fractional-grades", "-l", "high"], "-l 'high': the relevance level must be a number", 1),
    (["--fractional-grades", "-m", "ndcg.1=3"], "gains per grade (e.g. ndcg.1=3,2=9) need integer grades", 2),
])
def test_what_fractional_grades_cannot_do_is_said_in_one_line(tmp_path, args, message, exit_code):
    code, _, err = _run(tmp_path, *args)
    assert code == exit_code and message in err and "Traceback" not in err


def test_a_grade_that_is_not_a_number_names_its_line(tmp_path):
    (tmp_path / "q").write_text("1 0 a 0.5\n1 0 b high\n")
    (tmp_path / "r").write_text(RUN)
    err = io.StringIO()
    assert main(["--fractional-grades", str(tmp_path / "q"), str(tmp_path / "r")], io.StringIO(), err) == 2
    assert err.getvalue() == f"trec_eval: {tmp_path / 'q'}:2: grade 'high' is not a number\n"


def _random(seed: int, scale: float) -> tuple[str, str, str]:
    """Integer qrels, the same grades times ``scale`` as decimals, and a run with ties."""
    rng = np.random.default_rng(seed)
    ints, decimals, run = [], [], []
    for t in range(6):
        docs = rng.choice(40, size=25, replace=False)
        for d in docs[:15]:
            g = int(rng.choice([-1, 0, 0, 1, 2, 3]))
            ints.append(f"{t} 0 D{d} {g}\n")
            decimals.append(f"{t} 0 D{d} {g * scale if g >= 0 else -1}\n")
        run += [f"{t} Q0 D{d} 1 {int(rng.integers(0, 8))} r\n" for d in docs]
    return "".join(ints), "".join(decimals), "".join(run)


def _evaluate(qrels: Qrels, run: str, measures) -> dict:
    result = Evaluator(qrels, measures).evaluate(read_run_arrays(io.StringIO(run)))
    return {k: np.asarray(v, dtype=float) for k, v in result.values.items()}


@pytest.mark.parametrize("seed", range(8))
def test_whole_grades_given_as_decimals_score_as_the_integer_qrels(seed):
    ints, decimals, run = _random(seed, 1.0)
    integer = _evaluate(Qrels.from_frame(read_qrels_table(io.StringIO(ints))), run, GAIN_MEASURES + BINARY_MEASURES)
    table = read_qrels_table(io.StringIO(decimals), grades="fractional")
    fractional = _evaluate(Qrels.from_frame(table, fractional_from=1.0), run, GAIN_MEASURES + BINARY_MEASURES)
    assert set(fractional) == set(integer) and len(integer) >= 25
    for name, values in integer.items():
        np.testing.assert_allclose(fractional[name], values, rtol=1e-12, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("seed", range(4))
def test_gains_scaled_by_half_leave_normalised_measures_and_halve_dcg(seed):
    ints, halves, run = _random(seed, 0.5)
    whole = Qrels.from_frame(read_qrels_table(io.StringIO(ints)))
    half = Qrels.from_frame(read_qrels_table(io.StringIO(halves), grades="fractional"), fractional_from=0.5)
    a = _evaluate(whole, run, ["ndcg", "ndcg_cut.5", "ncg_cut.5", "dcg", "cg_cut.5", "map"])
    b = _evaluate(half, run, ["ndcg", "ndcg_cut.5", "ncg_cut.5", "dcg", "cg_cut.5", "map"])
    for name in ("ndcg", "ndcg_cut_5", "ncg_cut_5", "map"):
        np.testing.assert_allclose(b[name], a[name], rtol=1e-12, atol=1e-12, err_msg=name)
    for name in ("dcg", "cg_cut_5"):
        np.testing.assert_allclose(b[name], a[name] / 2, rtol=1e-12, atol=1e-12, err_msg=name)

"""Diversity measures over subtopic qrels (``manage.py diversity``): a worked example by hand, equality with
pyndeval (the TREC Web track's ndeval C code) on random qrels and runs, trec_eval's order for ties, and
one-line refusals of bad files."""

from __future__ import annotations

import math
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from evaluation.engine.intent_aware import evaluate, parse_subtopic_qrels

QRELS = ["1 1 a 1", "1 2 a 1", "1 2 b 1", "1 3 c 1", "1 1 d 0", "2 1 x 1", "2 2 y 2"]
RUN = {"1": ["b", "d", "a", "z", "c"], "2": ["y", "x"]}


def test_a_worked_example_by_hand():
    got = evaluate(parse_subtopic_qrels(QRELS), RUN)["1"]
    # topic 1 has 3 subtopics with a relevant document; the run's novelty gains (alpha 0.5):
    # b: subtopic 2 first seen -> 1; d: 0; a: subtopic 1 new (1) + subtopic 2 again (0.5) -> 1.5; z: 0; c: 1
    gains = [1, 0, 1.5, 0, 1]
    dcg5 = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    ideal_ideal5 = sum(3 * 0.5 ** i / math.log2(i + 2) for i in range(5))
    assert got["alpha-DCG@5"] == pytest.approx(dcg5 / ideal_ideal5)
    assert got["ERR-IA@5"] == pytest.approx(sum(g / (i + 1) for i, g in enumerate(gains))
                                           / sum(3 * 0.5 ** i / (i + 1) for i in range(5)))
    # NRBP = (1 - (1 - alpha) beta) / S * sum beta^i g_i
    assert got["NRBP"] == pytest.approx((1 - 0.25) / 3 * sum(g * 0.5 ** i for i, g in enumerate(gains)))
    # subtopic APs: 1 -> a at 3: 1/3; 2 -> b at 1, a at 3: (1 + 2/3) / 2; 3 -> c at 5: 1/5
    assert got["MAP-IA"] == pytest.approx((1 / 3 + (1 + 2 / 3) / 2 + 1 / 5) / 3)
    assert got["P-IA@5"] == pytest.approx(4 / 15) and got["P-IA@10"] == pytest.approx(4 / 30)
    assert got["strec@5"] == 1.0
    # the greedy ideal: a (2 new subtopics), then c (1 new, larger docno than b), then b (0.5)
    ideal5 = (2 / math.log2(2) + 1 / math.log2(3) + 0.5 / math.log2(4)) / ideal_ideal5
    assert got["alpha-nDCG@5"] == pytest.approx((dcg5 / ideal_ideal5) / ideal5)


def _random_case(rng):
    qrels, run = [], []
    for t in range(int(rng.integers(1, 5))):
        docs = [f"D{d}" for d in rng.choice(60, size=int(rng.integers(2, 30)), replace=False)]
        subtopics = int(rng.integers(1, 6))
        for d in docs:
            for s in rng.choice(subtopics, size=int(rng.integers(1, subtopics + 1)), replace=False):
                qrels.append((str(t), str(s), d, int(rng.random() < 0.4) * int(rng.integers(1, 3))))
        qrels.append((str(t), "0", docs[0], 1))  # every topic has a relevant document
        pool = docs + [f"N{n}" for n in range(int(rng.integers(0, 20)))]
        ranked = [pool[i] for i in rng.permutation(len(pool))[: int(rng.integers(1, len(pool) + 1))]]
        scores = rng.permutation(len(ranked)) + rng.random()  # distinct: pyndeval breaks ties the other way
        run += [(str(t), d, float(s)) for d, s in zip(ranked, scores, strict=True)]
    qrels = list({(q, s, d): (q, s, d, g) for q, s, d, g in qrels}.values())  # one judgment per subtopic
    return qrels, run


@pytest.mark.parametrize("alpha, beta", [(0.5, 0.5), (0.3, 0.8)])
def test_equal_to_pyndeval_on_random_qrels_and_runs(alpha, beta):
    import pyndeval  # the test peer, pinned in requirements.txt
    rng = np.random.default_rng(20261124)
    compared = 0
    for _ in range(120):
        qrels, run = _random_case(rng)
        theirs = pyndeval.ndeval(qrels, run, alpha=alpha, beta=beta)
        rankings: dict[str, list] = {}
        for qid, docno, _score in sorted(run, key=lambda r: -r[2]):
            rankings.setdefault(qid, []).append(docno)
        ours = evaluate(parse_subtopic_qrels(" ".join(map(str, q)) for q in qrels), rankings, alpha=alpha, beta=beta)
        for topic, values in theirs.items():
            for name, value in values.items():
                assert ours[topic][name] == pytest.approx(value, abs=1e-9), (topic, name)
                compared += 1
    assert compared > 5000


def test_ties_are_ranked_as_trec_eval_ranks_them(tmp_path):
    (tmp_path / "q").write_text("1 1 a 1\n1 1 b 0\n")
    (tmp_path / "r").write_text("1 Q0 a 1 5 r\n1 Q0 b 2 5 r\n")  # a tie: docno descending puts b first
    out = StringIO()
    call_command("diversity", str(tmp_path / "q"), str(tmp_path / "r"), "--cutoffs", "1,2", stdout=out)
    header, topic, _ = out.getvalue().splitlines()
    row = dict(zip(header.split(","), topic.split(","), strict=True))
    assert row["runid"] == "r" and row["P-IA@1"] == "0.000000" and row["P-IA@2"] == "0.500000"
    assert row["strec@1"] == "0.000000" and row["strec@2"] == "1.000000"


def test_the_command_prints_ndeval_s_csv(tmp_path):
    (tmp_path / "q").write_text("\n".join(QRELS) + "\n")
    (tmp_path / "r").write_text("".join(f"{t} Q0 {d} {i} {10 - i} run1\n" for t, docs in RUN.items()
                                        for i, d in enumerate(docs, 1)))
    out = StringIO()
    call_command("diversity", str(tmp_path / "q"), str(tmp_path / "r"), stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("runid,topic,ERR-IA@5,ERR-IA@10,ERR-IA@20,nERR-IA@5")
    assert [line.split(",")[1] for line in lines[1:]] == ["1", "2", "amean"]
    assert lines[1].split(",")[-3:] == ["1.000000", "1.000000", "1.000000"]


@pytest.mark.parametrize("qrels, run, message", [
    ("1 1 a x\n", "1 Q0 a 1 1 r\n", ":1: judgment 'x' is not an integer"),
    ("1 1 a 1\n1 a 1\n", "1 Q0 a 1 1 r\n", ":2: expected 4 columns (topic subtopic docno judgment), found 3"),
    ("1 1 a 1\n", "1 Q0 a one 1 r\n", ":1: rank 'one' is not an integer"),
    ("1 1 a 1\n", "2 Q0 a 1 1 r\n", "no topic is in both the qrels and the run"),
])
def test_bad_files_are_refused_in_one_line(tmp_path, qrels, run, message):
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    with pytest.raises(CommandError) as caught:
        call_command("diversity", str(tmp_path / "q"), str(tmp_path / "r"), stdout=StringIO())
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_bad_options_are_refused_in_one_line(tmp_path):
    (tmp_path / "q").write_text("1 1 a 1\n")
    (tmp_path / "r").write_text("1 Q0 a 1 1 r\n")
    for args, message in ((["--cutoffs", "5,x"], "whole numbers"), (["--cutoffs", "0"], "at least 1"),
                          (["--alpha", "2"], "alpha and beta must be between 0 and 1")):
        with pytest.raises(CommandError, match=message):
            call_command("diversity", str(tmp_path / "q"), str(tmp_path / "r"), *args, stdout=StringIO())

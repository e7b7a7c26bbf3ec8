"""Run lines are matched to judgments by docno hashes; a hash collision must never change a score."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evaluation.engine import Evaluator, Qrels, join
from evaluation.engine import qrels as qrels_module
from tests.engine.conftest import qrels_frame, run_frame

ROOT = Path(__file__).resolve().parents[2]
MEASURES = ["map", "ndcg", "P.2", "bpref", "num_rel_ret", "recall.3", "infAP"]
QRELS = [("1", "apple", 2), ("1", "berry", 0), ("1", "cherry", 1), ("1", "damson", -1),
         ("2", "apple", 1), ("2", "elder", 3), ("3", "fig", 1)]
RUN = [("1", "avocado", 3.0), ("1", "apple", 3.0), ("1", "cherry", 2.5), ("1", "banana", 2.0),
       ("1", "berry", 1.0), ("1", "damson", 0.5), ("2", "elder", 1.0), ("2", "eggplant", 1.0),
       ("2", "apple", 0.1), ("4", "apple", 9.0)]


def scores(qrels_rows=QRELS, run_rows=RUN):
    result = Evaluator(Qrels.from_frame(qrels_frame(qrels_rows)), MEASURES).evaluate(run_frame(run_rows))
    return result.per_topic, result.aggregate


def first_letter_hash(column) -> np.ndarray:
    """Docnos sharing their first letter collide ('apple' and 'avocado', 'berry' and 'banana')."""
    return np.array([ord(v[0]) for v in column.to_pylist()], dtype=np.uint64)


def constant_hash(column) -> np.ndarray:
    return np.zeros(len(column), dtype=np.uint64)


@pytest.mark.parametrize("fake", [first_letter_hash, constant_hash])
def test_hash_collisions_fall_back_to_the_exact_string_join_with_the_same_scores(monkeypatch, fake):
    expected_topics, expected_all = scores()
    monkeypatch.setattr(join, "string_hashes", fake)
    monkeypatch.setattr(qrels_module, "string_hashes", fake)
    topics, everything = scores()
    pd.testing.assert_frame_equal(topics, expected_topics)
    assert everything == expected_all


def test_judged_lines_are_found_however_many_judgments_share_a_bucket():
    qrels = [("7", f"doc{i}", i % 4) for i in range(3000)]
    run = [("7", f"doc{i}", float(i % 97)) for i in range(0, 6000, 2)]
    result = Evaluator(Qrels.from_frame(qrels_frame(qrels)), ["num_rel_ret", "num_ret", "map"]).evaluate(
        run_frame(run))
    relevant_retrieved = sum(1 for i in range(0, 3000, 2) if i % 4 >= 1)
    assert result.aggregate["num_rel_ret"] == relevant_retrieved and result.aggregate["num_ret"] == 3000


def test_the_command_line_loads_neither_django_nor_pandas(tmp_path):
    qrels, run = tmp_path / "q", tmp_path / "r"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    run.write_text("1 Q0 a 1 2.0 t\n1 Q0 b 2 1.0 t\n")
    code = ("import runpy, sys\n"
            f"sys.argv = ['manage.py', 'trec_eval', '-m', 'map', {str(qrels)!r}, {str(run)!r}]\n"
            "try:\n    runpy.run_path('manage.py', run_name='__main__')\n"
            "except SystemExit as exit:\n    assert exit.code == 0, exit.code\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'django', 'pandas', 'scipy'})\n"
            "print(heavy, file=sys.stderr)\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.stdout == "map                   \tall\t1.0000\n"
    assert result.stderr.strip() == "[]", result.stderr

"""Small qrels/run builders for the engine tests (frames built in the test, no files)."""

from __future__ import annotations

import pandas as pd
import pytest

from evaluation.engine import Evaluator, Qrels


def qrels_frame(rows: list[tuple[str, str, int]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["qid", "docno", "rel"])


def run_frame(rows: list[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["qid", "docno", "score"])


def evaluate(qrels_rows, run_rows, measures, **options):
    """Aggregate and per-topic values of one run (a small helper for readable tests)."""
    ev = Evaluator(Qrels.from_frame(qrels_frame(qrels_rows)), measures, **options)
    return ev.evaluate(run_frame(run_rows), tag="run")


#: topic 1: three relevant (d1 d3 d4), one judged non-relevant (d2), one pooled but unjudged (d5, grade -1)
QRELS_A = [("1", "d1", 1), ("1", "d2", 0), ("1", "d3", 1), ("1", "d4", 1), ("1", "d5", -1)]
#: ranked d2 d1 x d3 d5: rel values 0 1 (not pooled) 1 (pooled-unjudged)
RUN_A = [("1", "d2", 5.0), ("1", "d1", 4.0), ("1", "x", 3.0), ("1", "d3", 2.0), ("1", "d5", 1.0)]


@pytest.fixture
def topic_a():
    return QRELS_A, RUN_A

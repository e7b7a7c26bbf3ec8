"""Ranking a topic-grouped run a chunk of topics at a time gives exactly the order of one global sort."""

from __future__ import annotations

import io

import numpy as np
import pytest

from evaluation.engine import Evaluator, Qrels, ranking
from workbench.formats import read_run_arrays

MEASURES = ["map", "ndcg", "P.5", "recip_rank", "bpref", "num_rel_ret"]


def _files(seed: int) -> tuple[dict, list[str]]:
    rng = np.random.default_rng(seed)
    qrels = {"qid": [], "docno": [], "rel": []}
    lines = []
    for t in rng.permutation(12):  # topics grouped, but not in the qrels' (sorted) order
        docs = [f"D{d}" for d in rng.choice(60, size=40, replace=False)]
        for d in docs[:15]:
            qrels["qid"].append(str(100 + t))
            qrels["docno"].append(d)
            qrels["rel"].append(int(rng.integers(0, 3)))
        scores = rng.integers(0, 6, size=len(docs))  # many ties: broken by docno, as trec_eval does
        lines += [f"{100 + t} Q0 {d} 1 {s} tag\n" for d, s in zip(docs, scores, strict=True)]
    return qrels, lines


def _scores(qrels: dict, text: str) -> dict:
    result = Evaluator(Qrels.from_frame(qrels), MEASURES).evaluate(read_run_arrays(io.StringIO(text)))
    return {m: result.per_topic[m].round(12).to_dict() for m in result.per_topic.columns}


@pytest.mark.parametrize("seed", range(5))
def test_chunked_grouped_and_interleaved_runs_rank_alike(seed, monkeypatch):
    qrels, lines = _files(seed)
    whole = _scores(qrels, "".join(lines))
    assert {"map", "ndcg", "P_5", "recip_rank", "bpref", "num_rel_ret"} <= set(whole)
    assert all(len(v) == 12 for v in whole.values())
    assert len(ranking._chunks(read_run_arrays(io.StringIO("".join(lines))).topic)) == 1
    monkeypatch.setattr(ranking, "_BLOCK", 4)  # chunks of about 64 lines: several topics per chunk
    assert len(ranking._chunks(read_run_arrays(io.StringIO("".join(lines))).topic)) > 3
    assert _scores(qrels, "".join(lines)) == whole
    shuffled = [lines[i] for i in np.random.default_rng(seed).permutation(len(lines))]  # topics interleaved
    assert len(ranking._chunks(read_run_arrays(io.StringIO("".join(shuffled))).topic)) == 1
    assert _scores(qrels, "".join(shuffled)) == whole

"""Mean curves of many runs from one ranking (evaluation.engine.curve_batch) are the same floats as the
per-run curves of evaluation.engine.curves, on random runs with tied scores, graded and negative grades."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluation.engine.curve_batch import TopicCurves, curves_of, mean_curves, topic_curves
from evaluation.engine.curves import curves_from_rankings, ranked_docnos
from evaluation.engine.qrels import Qrels
from evaluation.engine.ranking import rank_runs


def _random_track(seed: int):
    rng = np.random.default_rng(seed)
    docs = [f"d{i:03d}" for i in range(60)]
    topics = [str(q) for q in rng.choice(np.arange(1, 40), size=9, replace=False)]
    qrels = []
    for q in topics[:7]:  # two topics have results but no judgments
        for d in rng.choice(docs, size=int(rng.integers(0, 30)), replace=False):
            qrels.append((q, d, int(rng.choice([-1, 0, 0, 1, 2]))))
    runs = []
    for _ in range(6):
        lines = []
        for q in rng.choice(topics, size=int(rng.integers(1, len(topics))), replace=False):
            for d in rng.choice(docs, size=int(rng.integers(1, 50)), replace=False):
                lines.append((q, d, float(rng.integers(0, 8)) / 4))  # ties
        runs.append(pd.DataFrame(lines, columns=["qid", "docno", "score"]))
    return pd.DataFrame(qrels, columns=["qid", "docno", "rel"]), runs


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("level", [1, 2])
def test_the_batched_mean_curves_are_the_per_run_curves_exactly(seed, level):
    frame, runs = _random_track(seed)
    if not len(frame):
        pytest.skip("no judgments drawn")
    qrels = Qrels.from_frame(frame)
    grades: dict[str, dict[str, int]] = {}
    for q, d, g in frame.itertuples(index=False):
        grades.setdefault(q, {})[d] = int(g)
    batched = mean_curves(rank_runs(qrels, runs), qrels, level)
    compared = 0
    for i, run in enumerate(runs):
        rankings = ranked_docnos(run["qid"], np.asarray(run["score"], dtype=np.float32), run["docno"])
        if not set(rankings) & set(grades):
            assert i not in batched
            continue
        for kind in ("pr", "interpolated", "roc"):
            points = curves_from_rankings(grades, rankings, kind=kind, level=level)
            assert batched[i][kind] == ([p["x"] for p in points], [p["y"] for p in points]), (i, kind)
            compared += 1
    assert compared


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("slices", [2, 3])
def test_rows_of_topic_slices_ranked_apart_and_joined_are_the_same_curves(seed, slices):
    """A board job split by topic: each part ranks its topics' lines against its topics' qrels; the join's
    curves are the floats of one ranking of everything."""
    frame, runs = _random_track(seed)
    if not len(frame):
        pytest.skip("no judgments drawn")
    qrels = Qrels.from_frame(frame)
    whole = topic_curves(rank_runs(qrels, runs), qrels, 1)
    topics = sorted(qrels.topics)
    bounds = [i * len(topics) // slices for i in range(slices + 1)]
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        mine = set(topics[a:b])
        part = Qrels.from_frame(frame[frame["qid"].isin(mine)].reset_index(drop=True))
        parts.append(topic_curves(rank_runs(part, [r[r["qid"].isin(mine)] for r in runs]), part, 1))
    joined = TopicCurves.joined(parts)
    for name, value in whole.arrays().items():
        np.testing.assert_array_equal(getattr(joined, name), value, err_msg=name)
    assert curves_of(joined) == mean_curves(rank_runs(qrels, runs), qrels, 1)
    assert joined.hits.sum() > 0


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("depth", [1, 5, 20])
def test_a_ranking_cut_to_a_depth_is_the_ranking_made_at_that_depth(seed, depth):
    """A board part ranks every document once (the curves) and cuts it for the measures (-M)."""
    frame, runs = _random_track(seed)
    if not len(frame):
        pytest.skip("no judgments drawn")
    qrels = Qrels.from_frame(frame)
    cut, made = rank_runs(qrels, runs).head(depth), rank_runs(qrels, runs, max_depth=depth)
    for name in ("seg_run", "seg_topic", "lengths", "e_seg", "e_pos", "e_rel", "e_judgment"):
        np.testing.assert_array_equal(getattr(cut, name), getattr(made, name), err_msg=name)
    assert made.lengths.max() == depth < rank_runs(qrels, runs).lengths.max()

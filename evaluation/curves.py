"""Curves of a collection's runs for the curves page: non-interpolated and 11-point precision-recall and
ROC (:mod:`evaluation.engine.curves`), averaged over topics or for one topic, cached per version."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
import pandas as pd

from evaluation import board_extras, cache, scoring
from evaluation.board_leaderboard import stored_leaderboard
from evaluation.engine.curves import curves_from_rankings, ranked_docnos
from judging.policies import DEFAULT_POLICY
from workbench.collections.selectors import run_frames
from workbench.models import Collection

__all__ = ["run_curves", "top_runs"]


def _grades(collection: Collection, policy: str, assessor: str | None, topic: str | None = None
            ) -> dict[str, dict[str, int]]:
    # the evaluation's qrels: the same policies (with /complete: the fully judged topics only) as every page
    stored = board_extras.topic_qrels(collection, scoring.normalise_policy(policy), topic) \
        if topic is not None and assessor is None else None
    frame = stored if stored is not None else scoring.qrels_frame(collection, policy=policy, assessor=assessor)
    if topic is not None:  # one topic's curve depends on its judgments only
        frame = frame[frame["qid"].astype(str) == topic]
    grades: dict[str, dict[str, int]] = defaultdict(dict)
    for qid, docno, rel in zip(frame["qid"].astype(str), frame["docno"], frame["rel"].astype(int), strict=True):
        grades[qid][docno] = int(rel)
    return grades


def _compute(collection, tags, kind, topic, policy, assessor) -> pd.DataFrame:
    grades = _grades(collection, policy, assessor, topic)
    rows = []
    for tag, frame in run_frames(collection, tags=tags).items():
        if topic is not None:
            frame = frame[frame["qid"].astype(str) == topic]
        # trec_eval compares scores as 32-bit floats, ties by docno descending
        rankings = ranked_docnos(frame["qid"].astype(str), np.asarray(frame["score"], dtype=np.float32),
                                 frame["docno"])
        if not set(rankings) & set(grades):  # with a topic chosen: the run returned nothing for it
            continue
        points = curves_from_rankings(grades, rankings, kind=kind, level=collection.relevant_from,
                                      per_topic=topic is not None)
        wanted = topic if topic is not None else "all"  # one topic: its own curve, not an average
        rows += [{"tag": tag, "x": p["x"], "y": p["y"]} for p in points if p["topic"] == wanted]
    return pd.DataFrame(rows, columns=["tag", "x", "y"])


def run_curves(collection: Collection, tags: Sequence[str], *, kind: str = "interpolated", topic: str | None = None,
               qrels_policy: str = DEFAULT_POLICY, assessor: str | None = None) -> pd.DataFrame:
    """Columns tag, x (recall, or false positive rate for ROC), y (precision, or true positive rate).
    The mean curves come from the board job's store when it holds them (:mod:`evaluation.board_extras`)."""
    if topic is None and assessor is None:
        found = board_extras.stored(collection, scoring.normalise_policy(qrels_policy), "curves")
        if found is not None:
            frame = found[0]
            chosen = frame[(frame["kind"] == kind).to_numpy() & frame["tag"].isin(list(tags)).to_numpy()]
            return pd.DataFrame({"tag": chosen["tag"].astype(str).to_numpy(), "x": chosen["x"].to_numpy(),
                                 "y": chosen["y"].to_numpy()}, columns=["tag", "x", "y"])
    key = (cache.version(collection), "curves", tuple(tags), kind, topic, qrels_policy, assessor)
    return cache.cached(key, lambda: _compute(collection, list(tags), kind, topic, qrels_policy, assessor))


def top_runs(collection: Collection, *, qrels_policy: str = DEFAULT_POLICY, count: int = 5) -> list[str]:
    """The ``count`` best runs by the leaderboard's main measure, as its stored board ranks them (none while no
    board is stored: the caller then ticks the first runs it lists)."""
    try:
        board, _ = stored_leaderboard(collection, qrels_policy=qrels_policy)
    except scoring.EvaluationError:
        return []
    return [r.tag for r in board.runs[:count]] if board is not None else []

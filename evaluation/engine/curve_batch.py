"""The mean curves of many runs at once, from one ranking of them all (:func:`evaluation.engine.ranking.rank_runs`
with no depth limit): what :func:`evaluation.engine.curves.curves_from_rankings` gives for the ``all`` rows of
each kind (``pr``, ``interpolated``, ``roc``), value for value, without a Python loop over documents.

Same definitions (see :mod:`evaluation.engine.curves`): rankings in trec_eval's order, relevance at ``level``,
topics those of the qrels the run has results for, averaged in the topics' string order with ``np.mean``
(so the sums add in the same order and the values are the same floats).

>>> import pandas as pd
>>> from evaluation.engine.qrels import Qrels
>>> from evaluation.engine.ranking import rank_runs
>>> q = Qrels.from_frame(pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [1, 0]}))
>>> run = pd.DataFrame({"qid": ["1", "1"], "docno": ["b", "a"], "score": [2.0, 1.0]})
>>> mean_curves(rank_runs(q, [run]), q, 1)[0]["pr"]
([0.0, 1.0], [0.0, 0.5])
"""

from __future__ import annotations

import numpy as np

from evaluation.engine.curves import LEVELS
from evaluation.engine.qrels import Qrels
from evaluation.engine.ranking import Ranked

__all__ = ["mean_curves"]

_LEVELS = np.array(LEVELS, dtype=np.float64)


def mean_curves(ranked: Ranked, qrels: Qrels, level: int) -> dict[int, dict[str, tuple[list[float], list[float]]]]:
    """Run index -> kind -> (x values, y values) of the run's mean curve (runs without a qrels topic left out)."""
    relevant, negatives = qrels.num_rel(level), qrels.num_nonrel(level)
    order = {q: i for i, q in enumerate(sorted(qrels.topics))}
    topic_rank = np.array([order[q] for q in qrels.topics], dtype=np.int64)
    n_segs = len(ranked.lengths)
    entry_bounds = np.searchsorted(ranked.e_seg, np.arange(n_segs + 1))
    run_bounds = np.flatnonzero(np.r_[True, ranked.seg_run[1:] != ranked.seg_run[:-1], True]) if n_segs \
        else np.zeros(1, dtype=np.int64)
    out = {}
    for a, b in zip(run_bounds[:-1], run_bounds[1:], strict=True):
        segs = np.arange(a, b)
        segs = segs[np.argsort(topic_rank[ranked.seg_topic[segs]], kind="stable")]
        out[int(ranked.seg_run[a])] = _run_curves(ranked, segs, entry_bounds, relevant, negatives, level)
    return out


def _entries(ranked: Ranked, segs: np.ndarray, entry_bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row of the segment in ``segs``, entry index) of every pooled entry of the segments, in rank order."""
    starts, ends = entry_bounds[segs], entry_bounds[segs + 1]
    counts = ends - starts
    rows = np.repeat(np.arange(segs.size), counts)
    index = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(starts, counts)
    return rows, index


def _mean(matrix: np.ndarray) -> list[float]:
    """The mean over topics (rows of ``matrix``) of each column, summed as ``np.mean`` of one column's list."""
    return [float(v) for v in np.ascontiguousarray(matrix.T).mean(axis=1)]


def _run_curves(ranked: Ranked, segs: np.ndarray, entry_bounds: np.ndarray, relevant: np.ndarray,
                negatives: np.ndarray, level: int) -> dict[str, tuple[list[float], list[float]]]:
    rows, index = _entries(ranked, segs, entry_bounds)
    grade, pos = ranked.e_rel[index], ranked.e_pos[index]
    lengths = ranked.lengths[segs].astype(np.int64)
    topics = ranked.seg_topic[segs]
    r, n = relevant[topics].astype(np.int64), negatives[topics].astype(np.int64)
    depth = int(lengths.max())
    hits = np.zeros((segs.size, depth), dtype=np.int64)
    is_rel = grade >= level
    hits[rows[is_rel], pos[is_rel]] = 1
    found = np.cumsum(hits, axis=1)
    k = np.arange(1, depth + 1, dtype=np.int64)
    precision = found / k
    recall = np.where(r[:, None] > 0, found / np.maximum(r, 1)[:, None], 0.0)
    valid = k[None, :] <= lengths[:, None]
    # interpolated: max precision at recall >= level (recall never falls along the ranking)
    best_after = np.maximum.accumulate(np.where(valid, precision, -np.inf)[:, ::-1], axis=1)[:, ::-1]
    interpolated = np.zeros((segs.size, len(LEVELS)))
    for i, cut in enumerate(LEVELS):
        reached = valid & (recall >= cut - 1e-12)
        first = np.argmax(reached, axis=1)
        interpolated[:, i] = np.where(reached.any(axis=1), best_after[np.arange(segs.size), first], 0.0)
    # pr: each topic's points padded with its last one to the deepest topic's length
    last = lengths - 1
    padded_x = np.where(valid, recall, recall[np.arange(segs.size), last][:, None])
    padded_y = np.where(valid, precision, precision[np.arange(segs.size), last][:, None])
    return {"pr": (_mean(padded_x), _mean(padded_y)),
            "interpolated": (list(LEVELS), _mean(interpolated)),
            "roc": (list(LEVELS), _mean(_roc(rows, grade, segs.size, r, n, level)))}


def _roc(rows: np.ndarray, grade: np.ndarray, n_segs: int, positives: np.ndarray, negatives: np.ndarray,
         level: int) -> np.ndarray:
    """Per topic, the true positive rate of its ROC curve at each false positive rate of ``LEVELS``
    (the highest point at or left of it: rates never fall along the ranking)."""
    judged = grade >= 0
    rows, grade = rows[judged], grade[judged]
    tp_step, fp_step = (grade >= level).astype(np.int64), (grade < level).astype(np.int64)
    counts = np.bincount(rows, minlength=n_segs)
    starts = np.cumsum(counts) - counts
    tp, fp = _within(tp_step, starts, counts), _within(fp_step, starts, counts)
    p, n = positives[rows], negatives[rows]
    fpr = np.where(n > 0, fp / np.maximum(n, 1), 0.0)
    tpr = np.where(p > 0, tp / np.maximum(p, 1), 0.0)
    out = np.zeros((n_segs, len(LEVELS)))
    for i, cut in enumerate(_LEVELS):
        below = np.bincount(rows, weights=fpr <= cut + 1e-12, minlength=n_segs).astype(np.int64)
        at = starts + below - 1
        out[:, i] = np.where(below > 0, tpr[np.maximum(at, 0)] if tpr.size else 0.0, 0.0)
    # the curve ends at (1, 1) once the judged documents not retrieved are appended
    closed = (positives > 0) & (negatives > 0)
    out[:, -1] = np.where(closed, 1.0, out[:, -1])
    return out


def _within(steps: np.ndarray, starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Cumulative sums of ``steps`` restarted at each segment (entries of a segment are contiguous)."""
    total = np.cumsum(steps)
    return total - np.repeat(np.r_[0, total][starts], counts)

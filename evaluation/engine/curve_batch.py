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

from dataclasses import dataclass

import numpy as np

from evaluation.engine.curves import LEVELS
from evaluation.engine.qrels import Qrels
from evaluation.engine.ranking import Ranked

__all__ = ["TopicCurves", "curves_of", "mean_curves", "topic_curves"]

_LEVELS = np.array(LEVELS, dtype=np.float64)


@dataclass(frozen=True)
class TopicCurves:
    """Each (run, topic)'s share of the runs' mean curves, a row each: rows grouped by run (ascending run
    index), a run's topics in string order. The 11-point interpolated and ROC values are the topic's own;
    the non-interpolated curve is kept as the ranks of the relevant documents (its points depend on the
    run's deepest topic, padded to: :func:`curves_of` draws them). Rows of contiguous slices of the topics,
    computed apart (a board job split by topic), are one ranking's rows once :meth:`joined`."""

    run: np.ndarray           # run index of each row
    lengths: np.ndarray       # documents ranked for the topic
    relevant: np.ndarray      # the topic's relevant documents (R)
    interpolated: np.ndarray  # (rows, 11)
    roc: np.ndarray           # (rows, 11)
    hits: np.ndarray          # relevant documents retrieved, per row
    hit_pos: np.ndarray       # their 0-based ranks, row after row

    def arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def empty(cls) -> TopicCurves:
        """No rows (no topic judged)."""
        none = np.zeros(0, dtype=np.int64)
        return cls(none, none, none, np.zeros((0, len(LEVELS))), np.zeros((0, len(LEVELS))), none,
                   np.zeros(0, dtype=np.int32))

    @classmethod
    def joined(cls, parts: list[TopicCurves]) -> TopicCurves:
        """The rows of ``parts`` (the same runs on successive slices of the topics) as one ranking gives them."""
        whole = cls(**{name: np.concatenate([getattr(part, name) for part in parts]) for name in cls.__dataclass_fields__})
        order = np.argsort(whole.run, kind="stable")  # a run's rows: part after part, so topic after topic
        starts = np.cumsum(whole.hits) - whole.hits
        take = np.repeat(starts[order] - (np.cumsum(whole.hits[order]) - whole.hits[order]), whole.hits[order])
        take += np.arange(take.size, dtype=np.int64)
        return cls(whole.run[order], whole.lengths[order], whole.relevant[order], whole.interpolated[order],
                   whole.roc[order], whole.hits[order], whole.hit_pos[take])


def mean_curves(ranked: Ranked, qrels: Qrels, level: int) -> dict[int, dict[str, tuple[list[float], list[float]]]]:
    """Run index -> kind -> (x values, y values) of the run's mean curve (runs without a qrels topic left out)."""
    return curves_of(topic_curves(ranked, qrels, level))


def topic_curves(ranked: Ranked, qrels: Qrels, level: int) -> TopicCurves:
    """The rows of every (run, topic) of ``ranked`` (ranked with no depth limit, against the qrels' own grades)."""
    relevant, negatives = qrels.num_rel(level), qrels.num_nonrel(level)
    order = {q: i for i, q in enumerate(sorted(qrels.topics))}
    topic_rank = np.array([order[q] for q in qrels.topics], dtype=np.int64)
    n_segs = len(ranked.lengths)
    entry_bounds = np.searchsorted(ranked.e_seg, np.arange(n_segs + 1))
    run_bounds = np.flatnonzero(np.r_[True, ranked.seg_run[1:] != ranked.seg_run[:-1], True]) if n_segs \
        else np.zeros(1, dtype=np.int64)
    rows = []
    for a, b in zip(run_bounds[:-1], run_bounds[1:], strict=True):
        segs = np.arange(a, b)
        segs = segs[np.argsort(topic_rank[ranked.seg_topic[segs]], kind="stable")]
        rows.append(_run_rows(ranked, segs, entry_bounds, relevant, negatives, level))
    if not rows:
        return TopicCurves.empty()
    return TopicCurves(**{name: np.concatenate([row[name] for row in rows]) for name in TopicCurves.__dataclass_fields__})


def curves_of(rows: TopicCurves) -> dict[int, dict[str, tuple[list[float], list[float]]]]:
    """Run index -> kind -> (x values, y values): each run's mean over its topics' rows (``np.mean`` of each
    column, the topics in string order: the same floats however the rows were computed)."""
    n = rows.run.size
    run_bounds = np.flatnonzero(np.r_[True, rows.run[1:] != rows.run[:-1], True]) if n else np.zeros(1, np.int64)
    hit_bounds = np.concatenate(([0], np.cumsum(rows.hits)))
    out = {}
    for a, b in zip(run_bounds[:-1], run_bounds[1:], strict=True):
        lengths, r = rows.lengths[a:b], rows.relevant[a:b]
        depth = int(lengths.max())
        hits = np.zeros((b - a, depth), dtype=np.int64)
        hits[np.repeat(np.arange(b - a), rows.hits[a:b]), rows.hit_pos[hit_bounds[a]:hit_bounds[b]]] = 1
        precision, recall, valid = _precision_recall(hits, lengths, r)
        # pr: each topic's points padded with its last one to the deepest topic's length
        last = lengths - 1
        padded_x = np.where(valid, recall, recall[np.arange(b - a), last][:, None])
        padded_y = np.where(valid, precision, precision[np.arange(b - a), last][:, None])
        out[int(rows.run[a])] = {"pr": (_mean(padded_x), _mean(padded_y)),
                                 "interpolated": (list(LEVELS), _mean(rows.interpolated[a:b])),
                                 "roc": (list(LEVELS), _mean(rows.roc[a:b]))}
    return out


def _precision_recall(hits: np.ndarray, lengths: np.ndarray, r: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Precision and recall after each rank of each row of ``hits`` (1 where a relevant document is), and
    which ranks the row has."""
    found = np.cumsum(hits, axis=1)
    k = np.arange(1, hits.shape[1] + 1, dtype=np.int64)
    precision = found / k
    recall = np.where(r[:, None] > 0, found / np.maximum(r, 1)[:, None], 0.0)
    return precision, recall, k[None, :] <= lengths[:, None]


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


def _run_rows(ranked: Ranked, segs: np.ndarray, entry_bounds: np.ndarray, relevant: np.ndarray,
              negatives: np.ndarray, level: int) -> dict[str, np.ndarray]:
    rows, index = _entries(ranked, segs, entry_bounds)
    grade, pos = ranked.e_rel[index], ranked.e_pos[index]
    lengths = ranked.lengths[segs].astype(np.int64)
    topics = ranked.seg_topic[segs]
    r, n = relevant[topics].astype(np.int64), negatives[topics].astype(np.int64)
    hits = np.zeros((segs.size, int(lengths.max())), dtype=np.int64)
    is_rel = grade >= level
    hits[rows[is_rel], pos[is_rel]] = 1
    precision, recall, valid = _precision_recall(hits, lengths, r)
    # interpolated: max precision at recall >= level (recall never falls along the ranking)
    best_after = np.maximum.accumulate(np.where(valid, precision, -np.inf)[:, ::-1], axis=1)[:, ::-1]
    interpolated = np.zeros((segs.size, len(LEVELS)))
    for i, cut in enumerate(LEVELS):
        reached = valid & (recall >= cut - 1e-12)
        first = np.argmax(reached, axis=1)
        interpolated[:, i] = np.where(reached.any(axis=1), best_after[np.arange(segs.size), first], 0.0)
    found_rows, found_pos = np.nonzero(hits)  # row by row, rank order: each relevant document once
    return {"run": np.full(segs.size, int(ranked.seg_run[segs[0]]), dtype=np.int64), "lengths": lengths,
            "relevant": r, "interpolated": interpolated, "roc": _roc(rows, grade, segs.size, r, n, level),
            "hits": np.bincount(found_rows, minlength=segs.size).astype(np.int64),
            "hit_pos": found_pos.astype(np.int32)}


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

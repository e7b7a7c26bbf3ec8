"""Curves as data: precision-recall (non-interpolated and 11-point interpolated) and ROC, per topic and
averaged over topics. Rankings as trec_eval orders them (score descending, ties by docno descending);
relevance at ``level``; topics are the qrels' topics the run has results for.

``pr``: after each rank ``k``, recall ``rel_k / R`` and precision ``rel_k / k`` (every point of the
non-interpolated curve); averaged, the mean over topics of both at each rank.
``interpolated``: the 11-point curve, ``max precision at recall >= r`` for ``r = 0, 0.1, ..., 1``
(trec_eval's ``iprec_at_recall``); averaged, the mean over topics.
``roc``: over the judged documents, the false positive rate and true positive rate after each rank, from
(0, 0), ending at (1, 1) once the judged documents the run did not retrieve are appended (tied, as one
step); averaged, the mean true positive rate at false positive rates 0, 0.1, ..., 1 (vertical averaging,
Fawcett 2006), each topic's curve taken at its highest point for that rate.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

__all__ = ["KINDS", "curves", "curves_from_rankings", "ranked_docnos"]

KINDS = ("pr", "interpolated", "roc")
LEVELS = [round(0.1 * i, 1) for i in range(11)]


def _rankings(run) -> dict[str, list[str]]:
    topics = [run.topics[t] for t in run.topic.tolist()]
    return ranked_docnos(topics, run.score.tolist(), run.docno.to_pylist())


def ranked_docnos(qids, scores, docnos) -> dict[str, list[str]]:
    """Each topic's documents in trec_eval's order: score descending, ties by docno descending."""
    by_topic: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for qid, score, docno in zip(qids, scores, docnos, strict=True):
        by_topic[str(qid)].append((float(score), docno))
    out = {}
    for qid, items in by_topic.items():
        items.sort(key=lambda item: item[1], reverse=True)
        items.sort(key=lambda item: item[0], reverse=True)
        out[qid] = [docno for _, docno in items]
    return out


def _pr(ranking: list[str], grades: dict[str, int], level: int) -> list[tuple[float, float]]:
    relevant = sum(1 for g in grades.values() if g >= level)
    found, points = 0, []
    for k, docno in enumerate(ranking, 1):
        found += grades.get(docno, -1) >= level
        points.append((found / relevant if relevant else 0.0, found / k))
    return points


def _interpolated(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    return [(r, max((p for rec, p in points if rec >= r - 1e-12), default=0.0)) for r in LEVELS]


def _roc(ranking: list[str], grades: dict[str, int], level: int) -> list[tuple[float, float]]:
    positives = sum(1 for g in grades.values() if g >= level)
    negatives = sum(1 for g in grades.values() if 0 <= g < level)
    tp = fp = 0
    points = [(0.0, 0.0)]
    for docno in ranking:
        grade = grades.get(docno)
        if grade is None or grade < 0:
            continue
        tp, fp = tp + (grade >= level), fp + (grade < level)
        points.append((fp / negatives if negatives else 0.0, tp / positives if positives else 0.0))
    if points[-1] != (1.0, 1.0) and positives and negatives:
        points.append((1.0, 1.0))
    return points


def _vertical(points: list[tuple[float, float]], fpr: float) -> float:
    return max((tpr for f, tpr in points if f <= fpr + 1e-12), default=0.0)


def curves(qrels: dict[str, dict[str, int]], run, *, kind: str = "pr", level: int = 1,
           per_topic: bool = False) -> list[dict]:
    """Rows ``{topic, x, y}`` (``topic`` is ``all`` for the average); x is recall (pr, interpolated) or
    the false positive rate (roc), y precision or the true positive rate."""
    return curves_from_rankings(qrels, _rankings(run), kind=kind, level=level, per_topic=per_topic)


def curves_from_rankings(qrels: dict[str, dict[str, int]], rankings: dict[str, list[str]], *, kind: str = "pr",
                         level: int = 1, per_topic: bool = False) -> list[dict]:
    """:func:`curves` of rankings already made (topic -> docnos, best first)."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; choose one of {', '.join(KINDS)}")
    topics = sorted(set(rankings) & set(qrels))
    if not topics:
        raise ValueError("no topic is in both the qrels and the run")
    curve = {"pr": _pr, "interpolated": lambda r, g, lv: _interpolated(_pr(r, g, lv)), "roc": _roc}[kind]
    each = {q: curve(rankings[q], qrels[q], level) for q in topics}
    rows = [{"topic": q, "x": x, "y": y} for q in topics for x, y in each[q]] if per_topic else []
    return rows + _averaged(each, topics, kind)


def _averaged(each: dict[str, list[tuple[float, float]]], topics: list[str], kind: str) -> list[dict]:
    """The ``all`` rows: the mean curve over ``topics`` (see the module docstring)."""
    if kind == "pr":
        depth = max(len(points) for points in each.values())
        padded = {q: points + [points[-1]] * (depth - len(points)) for q, points in each.items()}
        return [{"topic": "all", "x": float(np.mean([padded[q][k][0] for q in topics])),
                 "y": float(np.mean([padded[q][k][1] for q in topics]))} for k in range(depth)]
    if kind == "interpolated":
        return [{"topic": "all", "x": r, "y": float(np.mean([each[q][i][1] for q in topics]))}
                for i, r in enumerate(LEVELS)]
    return [{"topic": "all", "x": f, "y": float(np.mean([_vertical(each[q], f) for q in topics]))} for f in LEVELS]

"""Replay a pool against known qrels: what an assessor answering from the qrels would find. Django-free.

Any object with the adaptive protocol (``next_document(qid)`` / ``record(qid, docno, relevant)``) can be
replayed: the adaptive pools, :class:`.cal.CalPool`, and :class:`OrderedPool` (a fixed order judged top
down, e.g. a depth-k pool in pool-rank order or one run's ranking). An unjudged document counts as
non-relevant, as trec_eval counts it.

The result (what ``manage.py simulate_pool --format json`` prints)::

    {"mean_recall": x, "topics": {QID: {"judgments": N, "found": N, "relevant": N, "recall": x,
     "stopped_at": N or null, "claimed_recall": x or null, "recall_curve": [[judgments, recall], ...]}}}

``recall_curve`` has a point at every judgment that found a relevant document and one at the last
judgment (recall is a step function in between). ``mean_recall`` averages the topics that have relevant
documents (a topic without any has recall null).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pandas as pd

from .ranking import sorted_topics

__all__ = ["OrderedPool", "relevant_sets", "simulate"]


class OrderedPool:
    """A fixed judging order per topic (qid -> docnos), judged top down up to ``budget`` per topic."""

    def __init__(self, orders: Mapping[str, Sequence[str]], budget: int | None = None, name: str = "ordered"):
        self.name = name
        self.orders = {str(q): list(dict.fromkeys(map(str, d))) for q, d in orders.items()}
        self.budget = budget
        self._at = dict.fromkeys(self.orders, 0)
        self._judged: dict[str, list[tuple[str, bool]]] = {q: [] for q in self.orders}

    @property
    def topics(self) -> list[str]:
        return sorted_topics(self.orders)

    def next_document(self, qid: str) -> str | None:
        order, at = self.orders.get(qid, []), self._at.get(qid, 0)
        if at >= len(order) or (self.budget is not None and at >= self.budget):
            return None
        return order[at]

    def record(self, qid: str, docno: str, relevant: bool) -> bool:
        if self.next_document(qid) != docno:
            return False
        self._at[qid] += 1
        self._judged[qid].append((docno, bool(relevant)))
        return True

    def judged(self, qid: str) -> pd.DataFrame:
        rows = self._judged.get(qid, [])
        return pd.DataFrame({"docno": [d for d, _ in rows], "relevant": [r for _, r in rows]})


def relevant_sets(qrels: pd.DataFrame, relevant_from: int = 1) -> dict[str, set[str]]:
    """qid -> the docnos graded ``relevant_from`` or more (every qid of the qrels, possibly empty)."""
    out: dict[str, set[str]] = {str(q): set() for q in pd.unique(qrels["qid"].astype(str))}
    hits = qrels[qrels["rel"] >= relevant_from]
    for qid, docno in zip(hits["qid"].astype(str), hits["docno"].astype(str), strict=True):
        out[qid].add(docno)
    return out


def _curve(labels: Sequence[bool], relevant: int) -> list[list[float]]:
    points, found = [], 0
    for i, rel in enumerate(labels, start=1):
        found += rel
        if rel or i == len(labels):
            points.append([i, round(found / relevant, 6) if relevant else None])
    return points


def _with_status(row: dict, info: dict) -> dict:
    decision = info["decision"]
    stopped = decision["stopped"]
    row.update(stopped_at=decision["at"] if stopped else None,
               claimed_recall=decision["claimed_recall"] if stopped else None,
               confidence=decision["confidence"] if stopped else None,
               stop_reason=decision["reason"], side_judgments=info["side_judgments"],
               recall_estimate=info["recall_estimate"], relevant_estimate=info["relevant_estimate"])
    return row


def _replay_topic(pool, qid: str, rel: set[str]) -> dict:
    while (docno := pool.next_document(qid)) is not None:
        if not pool.record(qid, docno, docno in rel):
            raise RuntimeError(f"{pool.name} refused its own document {docno!r} on topic {qid}")
    judged = pool.judged(qid)
    labels = [bool(r) for r in judged["relevant"]]
    found = len(set(judged["docno"][judged["relevant"].astype(bool)]))
    row = {"judgments": len(labels), "found": found, "relevant": len(rel),
           "recall": round(found / len(rel), 6) if rel else None, "stopped_at": None,
           "claimed_recall": None, "recall_curve": _curve(labels, len(rel))}
    status = getattr(pool, "status", None)
    return row if status is None else _with_status(row, status(qid))


def simulate(pool, relevant: Mapping[str, set[str]], topics: Iterable[str] | None = None) -> dict:
    """Judge every topic until the pool offers nothing more, answering from ``relevant``."""
    out = {qid: _replay_topic(pool, qid, relevant.get(qid, set()))
           for qid in sorted_topics(topics if topics is not None else pool.topics)}
    recalls = [t["recall"] for t in out.values() if t["recall"] is not None]
    return {"strategy": getattr(pool, "name", "?"),
            "mean_recall": round(sum(recalls) / len(recalls), 6) if recalls else None,
            "judgments": sum(t["judgments"] for t in out.values()),
            "found": sum(t["found"] for t in out.values()), "topics": out}


def stopping_summary(result: dict, target_recall: float | None) -> dict:
    """Of the topics whose rule stopped: how many, and how many reached ``target_recall``."""
    stopped = [t for t in result["topics"].values() if t.get("stopped_at") is not None and t["recall"] is not None]
    reached = [t for t in stopped if target_recall is not None and t["recall"] >= target_recall]
    return {"stopped": len(stopped), "topics": sum(t["recall"] is not None for t in result["topics"].values()),
            "target_recall": target_recall, "reached_target": len(reached),
            "share_reached": round(len(reached) / len(stopped), 6) if stopped and target_recall else None,
            "mean_recall_when_stopped": (round(sum(t["recall"] for t in stopped) / len(stopped), 6)
                                         if stopped else None),
            "mean_judgments_when_stopped": (round(sum(t["stopped_at"] for t in stopped) / len(stopped), 2)
                                            if stopped else None)}

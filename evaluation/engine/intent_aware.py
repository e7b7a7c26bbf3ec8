"""Novelty and diversity measures over subtopic ("intent") qrels, as the TREC Web track's ``ndeval`` (v4.5)
computes them. Django-free.

Subtopic qrels: ``topic subtopic docno judgment`` lines; a judgment >= the relevance level (1) makes the
document relevant to that subtopic (ndeval: binary, any positive judgment). For one topic, ``S`` is the
number of its subtopics with at least one relevant document, ``rel(i, j)`` is 1 when the document at
0-based rank ``i`` is relevant to subtopic ``j``, ``c(i, j)`` the documents before rank ``i`` relevant to
``j``, and ``g(i) = sum_j rel(i, j) (1 - alpha)^c(i, j)`` the novelty-discounted gain (alpha = 0.5):

``alpha-DCG@k``
    ``sum_{i<k} g(i) / log2(i + 2)`` divided by the "ideal ideal" ``sum_{i<k} S (1 - alpha)^i / log2(i + 2)``
    (Clarke, Kolla, Cormack, Vechtomova, Ashkan, Büttcher & MacKinnon, SIGIR 2008).
``alpha-nDCG@k``
    alpha-DCG@k of the run over alpha-DCG@k of the ideal ranking, built greedily from the topic's judged
    documents (at each rank the document adding most gain; ties to the larger docno), as ndeval does:
    the exact ideal is NP-hard.
``ERR-IA@k``, ``nERR-IA@k``
    ``sum_{i<k} g(i) / (i + 1)`` over the ideal ideal ``sum_{i<k} S (1 - alpha)^i / (i + 1)``, then over
    the greedy ideal's (intent-aware ERR of Chapelle, Metzler, Zhang & Grinspan, CIKM 2009, with ndeval's
    alpha gain).
``NRBP``, ``nNRBP``
    ``(1 - (1 - alpha) beta) / S * sum_i beta^i g(i)`` over the whole ranking (beta = 0.5; Clarke, Kolla &
    Vechtomova, ICTIR 2009), then over the greedy ideal's.
``MAP-IA``
    the mean over the ``S`` subtopics of each one's average precision.
``P-IA@k``
    ``sum_{i<k} sum_j rel(i, j) / (k S)`` (Agrawal, Gollapudi, Halverson & Ieong, WSDM 2009).
``strec@k``
    subtopics with a relevant document in the top ``k``, over ``S`` (subtopic recall).

A topic with no relevant document for any subtopic scores 0 everywhere (ndeval prints ``nan`` for its
nNRBP). Runs are ranked as trec_eval ranks them: score descending, ties by docno descending (ndeval's
``-traditional``; by default ndeval trusts the rank column, which real runs often contradict). Topic ids
are matched as strings. ndeval stops the cut-off measures at 20; here any ``k`` may be asked. At ``k = 1``
ndeval leaves alpha-DCG and ERR-IA divided by nothing (its loop normalising them starts at rank 2); here
they are normalised at every ``k`` (alpha-nDCG@1 and nERR-IA@1 are the same either way). Averages are over
the topics in both the run and the qrels (``-c``: every qrels topic, a missing one counting 0).

>>> q = parse_subtopic_qrels(["1 1 a 1", "1 2 a 1", "1 2 b 1"])
>>> run = {"1": ["b", "a"]}
>>> round(evaluate(q, run)["1"]["strec@5"], 4), round(evaluate(q, run)["1"]["P-IA@5"], 4)
(1.0, 0.3)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from workbench.formats.ids import sorted_topics

CUTOFFS = (5, 10, 20)


@dataclass(frozen=True)
class TopicQrels:
    """One topic's judged documents (sorted) and their relevance to each subtopic (docs x subtopics)."""

    docnos: list[str]
    relevant: np.ndarray  # bool (documents, subtopics): only subtopics with a relevant document


def parse_subtopic_qrels(lines: Iterable[str], *, name: str = "qrels", level: int = 1) -> dict[str, TopicQrels]:
    """``topic subtopic docno judgment`` lines; raise ``ValueError("name:LINE: what")`` on a bad one."""
    judged: dict[str, dict[str, dict[str, bool]]] = {}
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise ValueError(f"{name}:{number}: expected 4 columns (topic subtopic docno judgment), found "
                             f"{len(fields)}")
        topic, subtopic, docno, judgment = fields
        try:
            grade = int(judgment)
        except ValueError:
            raise ValueError(f"{name}:{number}: judgment {judgment!r} is not an integer") from None
        docs = judged.setdefault(topic, {}).setdefault(docno, {})
        if subtopic in docs:
            raise ValueError(f"{name}:{number}: document {docno!r} is judged twice for subtopic {subtopic!r} of "
                             f"topic {topic!r}")
        docs[subtopic] = grade >= level
    if not judged:
        raise ValueError(f"{name}:1: the file is empty: no judgments")
    return {topic: _topic_qrels(docs) for topic, docs in judged.items()}


def _topic_qrels(docs: dict[str, dict[str, bool]]) -> TopicQrels:
    subtopics = sorted({s for marks in docs.values() for s, rel in marks.items() if rel})
    docnos = sorted(docs)
    relevant = np.array([[docs[d].get(s, False) for s in subtopics] for d in docnos], dtype=bool)
    return TopicQrels(docnos, relevant.reshape(len(docnos), len(subtopics)))


def _gains(relevant: np.ndarray, alpha: float) -> np.ndarray:
    """``g(i)`` of each rank of a (ranks x subtopics) relevance matrix."""
    seen_before = np.cumsum(relevant, axis=0) - relevant
    return np.where(relevant, (1.0 - alpha) ** seen_before, 0.0).sum(axis=1)


def _discount(n: int) -> np.ndarray:
    return math.log(2.0) / np.log(np.arange(n) + 2.0)


def _ideal_order(relevant: np.ndarray, docnos: list[str], alpha: float) -> np.ndarray:
    """ndeval's greedy ideal: at each rank the document adding most gain, ties to the larger docno."""
    left = list(np.argsort(np.array(docnos, dtype=object))[::-1])  # larger docno first: wins ties
    weight = np.ones(relevant.shape[1])
    order = []
    while left:
        scores = relevant[left] @ weight
        best = int(np.argmax(scores))  # first of the maxima: the largest docno among them
        chosen = left.pop(best)
        order.append(chosen)
        weight = np.where(relevant[chosen], weight * (1.0 - alpha), weight)
    return np.array(order, dtype=np.int64)


def _cumulative(gain: np.ndarray, weights: np.ndarray, depth: int) -> np.ndarray:
    """Running sum of ``gain * weights`` over ranks ``0 .. depth - 1`` (gain padded with zeros)."""
    padded = np.zeros(depth)
    padded[: min(depth, gain.size)] = gain[:depth]
    return np.cumsum(padded * weights[:depth])


def _scores(relevant: np.ndarray, s: int, alpha: float, beta: float, depth: int) -> dict:
    """The unnormalised-by-ideal parts of one ranking: alpha-DCG, ERR-IA (cut-offs), NRBP."""
    gain = _gains(relevant, alpha)
    ranks = np.arange(depth)
    ideal_ideal = s * (1.0 - alpha) ** ranks
    dcg = _cumulative(gain, _discount(depth), depth) / np.cumsum(ideal_ideal * _discount(depth))
    err = _cumulative(gain, 1.0 / (ranks + 1.0), depth) / np.cumsum(ideal_ideal / (ranks + 1.0))
    nrbp = (1.0 - (1.0 - alpha) * beta) / s * float(np.sum(gain * beta ** np.arange(gain.size)))
    return {"dcg": dcg, "err": err, "nrbp": nrbp}


def _map_ia(relevant: np.ndarray, totals: np.ndarray) -> float:
    found = np.cumsum(relevant, axis=0)
    ranks = np.arange(1, relevant.shape[0] + 1)[:, None]
    return float(np.mean(np.where(relevant, found / ranks, 0.0).sum(axis=0) / totals))


def measure_names(cutoffs=CUTOFFS) -> list[str]:
    """The measures in ndeval's column order."""
    names = [f"{m}@{k}" for m in ("ERR-IA", "nERR-IA", "alpha-DCG", "alpha-nDCG") for k in cutoffs]
    return names + ["NRBP", "nNRBP", "MAP-IA", *(f"{m}@{k}" for m in ("P-IA", "strec") for k in cutoffs)]


def topic_measures(qrels: TopicQrels, ranking: list[str], *, cutoffs=CUTOFFS, alpha: float = 0.5,
                   beta: float = 0.5) -> dict[str, float]:
    """Every measure of one topic for one ranking (its docnos, best first)."""
    names = measure_names(cutoffs)
    s = qrels.relevant.shape[1]
    if s == 0:
        return dict.fromkeys(names, 0.0)
    row = {d: i for i, d in enumerate(qrels.docnos)}
    at = np.array([row.get(d, -1) for d in ranking], dtype=np.int64)
    relevant = np.zeros((at.size, s), dtype=bool)
    relevant[at >= 0] = qrels.relevant[at[at >= 0]]
    depth = max(cutoffs)
    run = _scores(relevant, s, alpha, beta, depth)
    ideal = _scores(qrels.relevant[_ideal_order(qrels.relevant, qrels.docnos, alpha)], s, alpha, beta, depth)
    hits = np.cumsum(relevant[:depth].sum(axis=1)) if at.size else np.zeros(0)
    covered = (np.cumsum(relevant[:depth], axis=0) > 0).sum(axis=1)  # subtopics seen by each rank
    out: dict[str, float] = {}
    for k in cutoffs:
        i = k - 1
        out[f"ERR-IA@{k}"] = float(run["err"][i])
        out[f"alpha-DCG@{k}"] = float(run["dcg"][i])
        out[f"nERR-IA@{k}"] = float(run["err"][i] / ideal["err"][i]) if run["dcg"][i] else 0.0
        out[f"alpha-nDCG@{k}"] = float(run["dcg"][i] / ideal["dcg"][i]) if run["dcg"][i] else 0.0
        last = min(k, at.size) - 1
        out[f"P-IA@{k}"] = float(hits[last]) / (k * s) if last >= 0 else 0.0
        out[f"strec@{k}"] = float(covered[last]) / s if last >= 0 else 0.0
    out["NRBP"] = run["nrbp"]
    out["nNRBP"] = run["nrbp"] / ideal["nrbp"]
    out["MAP-IA"] = _map_ia(relevant, qrels.relevant.sum(axis=0)) if at.size else 0.0
    return {name: out[name] for name in names}


def evaluate(qrels: dict[str, TopicQrels], rankings: dict[str, list[str]], *, cutoffs=CUTOFFS,
             alpha: float = 0.5, beta: float = 0.5, complete: bool = False) -> dict[str, dict[str, float]]:
    """Per topic (in both; with ``complete`` every qrels topic, 0 where the run has none) and ``"amean"``."""
    if any(k < 1 for k in cutoffs):
        raise ValueError("cut-offs must be at least 1")
    if not (0.0 <= alpha <= 1.0 and 0.0 <= beta <= 1.0):
        raise ValueError("alpha and beta must be between 0 and 1")
    topics = sorted_topics(qrels) if complete else sorted_topics(t for t in qrels if t in rankings)
    out = {t: topic_measures(qrels[t], rankings.get(t, []), cutoffs=cutoffs, alpha=alpha, beta=beta)
           for t in topics}
    if out:
        names = next(iter(out.values()))
        out["amean"] = {m: float(np.mean([out[t][m] for t in topics])) for m in names}
    return out

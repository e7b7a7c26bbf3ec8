"""Nugget scores and citation support of generated answers.

**Nugget scores** (AutoNuggetizer: Pradeep et al., "Initial Nugget Evaluation Results for the TREC 2024
RAG Track with the AutoNuggetizer Framework", 2024/2025; the definitions of ``nuggetizer``'s
``calculate_nugget_scores``, nuggetizer 0.0.5 ``nuggetizer/core/metrics.py``). A topic has a bank of nuggets,
each ``vital`` or ``okay``; an answer is assigned ``support``, ``partial_support`` or ``not_support`` per
nugget. With ``s(n)`` = 1 for support, else 0, and ``p(n)`` = 1 for support, 0.5 for partial support, else 0::

    strict_vital_score = sum_{n vital} s(n) / |vital|        vital_score = sum_{n vital} p(n) / |vital|
    strict_all_score   = sum_{n}       s(n) / |nuggets|      all_score   = sum_{n}       p(n) / |nuggets|

Example: nuggets (vital: support, vital: partial_support, okay: support) give strict_vital 1/2, vital 1.5/2,
strict_all 2/3, all 2.5/3. A run's score on a set of topics is the mean of its answers' scores
(``calculate_global_metrics``). Edge cases, as nuggetizer: a topic with no vital nugget scores 0.0 on both
vital scores (not "undefined"), a bank with no nugget scores 0.0 on all four; an answer with no sentence,
or none supported, scores 0.0 (its assignments are all ``not_support``). Unlike nuggetizer, an unknown
importance or assignment is refused (nuggetizer counts it as ``okay`` / not supported).

**Citation support** (Thakur et al., "Support Evaluation for the TREC 2024 RAG Track: Comparing Human versus
LLM Judges", SIGIR 2025). Each pair (sentence, segment it cites) is judged full support (weight 1), partial
support (0.5) or no support (0). Per answer::

    support_precision = sum of the weights of its citation pairs / number of its citation pairs
    support_recall    = sum over its sentences of the best weight among the sentence's citations
                        / number of its sentences            (a sentence citing nothing counts 0)

The paper defines precision as the share of citations that support their sentence and recall as the share
of sentences supported by their citations, both weighted by support level (arXiv 2504.15205); a sentence with
several citations counting its best one is our reading of "supported by its citations".
Example: sentence 1 cites A (full) and B (none), sentence 2 cites nothing: precision (1+0)/2 = 0.5,
recall (1+0)/2 = 0.5. An answer with no citation has precision 0.0; with no sentence, recall 0.0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ASSIGNMENTS", "IMPORTANCES", "SUPPORT_WEIGHTS", "NuggetScores", "mean_scores", "nugget_scores",
           "score_table", "support_scores"]

IMPORTANCES = ("vital", "okay")
#: each assignment's credit in the strict and in the non-strict scores
ASSIGNMENTS = {"support": (1.0, 1.0), "partial_support": (0.0, 0.5), "not_support": (0.0, 0.0)}
#: the weight of each support judgment of a citation pair
SUPPORT_WEIGHTS = {"full_support": 1.0, "partial_support": 0.5, "no_support": 0.0}
SCORES = ("strict_vital_score", "strict_all_score", "vital_score", "all_score")


@dataclass(frozen=True)
class NuggetScores:
    strict_vital_score: float
    strict_all_score: float
    vital_score: float
    all_score: float

    def as_dict(self) -> dict[str, float]:
        return {name: getattr(self, name) for name in SCORES}


def _codes(values, known, what: str) -> np.ndarray:
    values = np.asarray(values, dtype=object)
    index = {name: k for k, name in enumerate(known)}
    try:
        return np.fromiter((index[v] for v in values), dtype=np.int64, count=len(values))
    except KeyError as exc:
        raise ValueError(f"unknown {what} {exc.args[0]!r}: expected one of {', '.join(known)}") from None


def score_table(answer: np.ndarray, importance, assignment, n_answers: int | None = None) -> dict[str, np.ndarray]:
    """The four scores of many answers at once: one row per (answer, nugget) with the answer's number
    (0..n_answers-1), the nugget's importance and its assignment; arrays of length ``n_answers``.
    An answer without rows scores 0.0."""
    answer = np.asarray(answer, dtype=np.int64)
    n = int(n_answers if n_answers is not None else (answer.max() + 1 if answer.size else 0))
    vital = _codes(importance, IMPORTANCES, "importance") == 0
    grade = _codes(assignment, tuple(ASSIGNMENTS), "assignment")
    strict = np.array([credit[0] for credit in ASSIGNMENTS.values()])[grade]
    loose = np.array([credit[1] for credit in ASSIGNMENTS.values()])[grade]
    count_all = np.bincount(answer, minlength=n).astype(float)
    count_vital = np.bincount(answer, weights=vital, minlength=n)

    def ratio(weights: np.ndarray, counts: np.ndarray) -> np.ndarray:
        total = np.bincount(answer, weights=weights, minlength=n)
        return np.divide(total, counts, out=np.zeros(n), where=counts > 0)

    return {"strict_vital_score": ratio(strict * vital, count_vital), "strict_all_score": ratio(strict, count_all),
            "vital_score": ratio(loose * vital, count_vital), "all_score": ratio(loose, count_all)}


def nugget_scores(importance, assignment) -> NuggetScores:
    """The four scores of one answer: its nuggets' importances and assignments, in the same order.

    >>> nugget_scores(["vital", "vital", "okay"], ["support", "partial_support", "support"]).vital_score
    0.75
    """
    if len(importance) != len(assignment):
        raise ValueError(f"{len(importance)} importances but {len(assignment)} assignments")
    table = score_table(np.zeros(len(importance), dtype=np.int64), importance, assignment, 1)
    return NuggetScores(**{name: float(values[0]) for name, values in table.items()})


def mean_scores(scores: list[NuggetScores]) -> NuggetScores:
    """The mean of each score over a run's answers (nuggetizer's ``qid: "all"`` line); 0.0 without answers."""
    if not scores:
        return NuggetScores(0.0, 0.0, 0.0, 0.0)
    return NuggetScores(**{name: float(np.mean([getattr(s, name) for s in scores])) for name in SCORES})


def support_scores(sentence: np.ndarray, judgment, sentence_answer: np.ndarray,
                   n_answers: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Support precision and recall of many answers: one row per citation pair with its sentence's number
    and its judgment (``full_support``, ``partial_support``, ``no_support``); ``sentence_answer[k]`` is the
    answer of sentence ``k`` (every sentence, citing or not). Two arrays of length ``n_answers``.

    >>> p, r = support_scores(np.array([0, 0]), ["full_support", "no_support"], np.array([0, 0]))
    >>> float(p[0]), float(r[0])
    (0.5, 0.5)
    """
    sentence = np.asarray(sentence, dtype=np.int64)
    sentence_answer = np.asarray(sentence_answer, dtype=np.int64)
    n = int(n_answers if n_answers is not None else (sentence_answer.max() + 1 if sentence_answer.size else 0))
    weight = np.array(list(SUPPORT_WEIGHTS.values()))[_codes(judgment, tuple(SUPPORT_WEIGHTS), "support judgment")]
    if sentence.size and (sentence.min() < 0 or sentence.max() >= sentence_answer.size):
        raise ValueError("a citation pair names a sentence that is not in sentence_answer")
    pair_answer = sentence_answer[sentence]
    pairs = np.bincount(pair_answer, minlength=n).astype(float)
    precision = np.divide(np.bincount(pair_answer, weights=weight, minlength=n), pairs, out=np.zeros(n),
                          where=pairs > 0)
    best = np.zeros(sentence_answer.size)
    np.maximum.at(best, sentence, weight)
    sentences = np.bincount(sentence_answer, minlength=n).astype(float)
    recall = np.divide(np.bincount(sentence_answer, weights=best, minlength=n), sentences, out=np.zeros(n),
                       where=sentences > 0)
    return precision, recall

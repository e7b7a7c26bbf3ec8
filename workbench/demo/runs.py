"""The demo runs: which model, which query field, and how a score matrix becomes a TREC run file.

Ranking follows trec_eval's own order so the rank column never disagrees with it: scores are rounded
to :data:`RunSpec.decimals` (exactly what the file says), then sorted by score descending and, for equal
scores, by docno descending. Ranks are 1..depth.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from . import retrieval
from .text import STEMMER

DEPTH = 100

Scorer = Callable[[retrieval.Corpus, Sequence[Sequence[str]]], np.ndarray]


class RunSpec(NamedTuple):
    tag: str
    team: str
    description: str
    query_fields: tuple[str, ...]
    scorer: Scorer
    decimals: int = 4


_ANALYZER = f"title+text analyzed with identifier splitting, stop words, stemming: {STEMMER}"

RUN_SPECS: tuple[RunSpec, ...] = (
    RunSpec(
        "bm25-title", "okapi",
        f"BM25 (bm25s, Lucene idf, k1={retrieval.BM25_K1}, b={retrieval.BM25_B}), topic title as query; "
        + _ANALYZER,
        ("title",), retrieval.bm25_scores,
    ),
    RunSpec(
        "bm25-desc", "okapi",
        "BM25 as bm25-title, query = topic title + description",
        ("title", "description"), retrieval.bm25_scores,
    ),
    RunSpec(
        "bm25-rm3", "okapi",
        f"BM25 title query expanded with RM3 ({retrieval.RM3_FEEDBACK_DOCS} feedback docs, "
        f"{retrieval.RM3_TERMS} terms, original weight {retrieval.RM3_ORIGINAL_WEIGHT})",
        ("title",), retrieval.rm3_bm25_scores,
    ),
    RunSpec(
        "tfidf-title", "vector-space",
        "TF-IDF cosine (scikit-learn TfidfVectorizer, sublinear tf, l2), topic title as query; " + _ANALYZER,
        ("title",), retrieval.tfidf_cosine_scores, 6,
    ),
    RunSpec(
        "tfidf-desc", "vector-space",
        "TF-IDF cosine as tfidf-title, query = topic title + description",
        ("title", "description"), retrieval.tfidf_cosine_scores, 6,
    ),
    RunSpec(
        "ql-dir", "lm-group",
        f"Query likelihood, Dirichlet smoothing mu={retrieval.DIRICHLET_MU:g} (numpy/scipy), "
        "query = topic title + description; " + _ANALYZER,
        ("title", "description"), retrieval.ql_dirichlet_scores,
    ),
)


def rank(scores: np.ndarray, docnos: Sequence[str], decimals: int, depth: int = DEPTH) -> tuple[np.ndarray, np.ndarray]:
    """Indices and rounded scores of the ``depth`` best documents, in trec_eval order.

    >>> idx, s = rank(np.array([0.5, 2.0, 0.5]), ["a", "b", "c"], decimals=1, depth=2)
    >>> idx.tolist(), s.tolist()
    ([1, 2], [2.0, 0.5])
    """
    rounded = np.round(scores.astype(np.float64), decimals)
    docno_rank = np.argsort(np.argsort(np.asarray(docnos, dtype=object), kind="stable"), kind="stable")
    order = np.lexsort((-docno_rank, -rounded))[:depth]
    return order, rounded[order]


def write_run(
    path: Path, spec: RunSpec, qids: Sequence[str], scores: np.ndarray, docnos: Sequence[str]
) -> None:
    """One TREC run file: ``qid Q0 docno rank score tag``, topics in the given order."""
    lines = []
    for qid, row in zip(qids, scores, strict=True):
        order, rounded = rank(row, docnos, spec.decimals)
        for position, (doc, score) in enumerate(zip(order, rounded, strict=True), start=1):
            lines.append(f"{qid} Q0 {docnos[doc]} {position} {score + 0.0:.{spec.decimals}f} {spec.tag}\n")
    path.write_text("".join(lines), encoding="utf-8")

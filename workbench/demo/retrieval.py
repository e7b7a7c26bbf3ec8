"""The retrieval models behind the demo runs. Each scorer maps a list of queries to a score matrix.

All models see the same analyzed text (:func:`workbench.demo.text.analyze` of title + text), so the runs
differ by model and query, not by tokenization. Every function returns a dense ``(n_queries, n_docs)``
float64 array; turning it into ranked lists is :mod:`workbench.demo.runs`' job.
"""

from __future__ import annotations

from collections.abc import Sequence

import bm25s
import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import TfidfVectorizer

Tokens = Sequence[str]

BM25_K1 = 1.2
BM25_B = 0.75
DIRICHLET_MU = 250.0
RM3_FEEDBACK_DOCS = 10
RM3_TERMS = 20
RM3_ORIGINAL_WEIGHT = 0.5


def _identity(tokens: Tokens) -> Tokens:
    return tokens


class Corpus:
    """Analyzed documents plus the term-count matrix the language models need (built once)."""

    def __init__(self, doc_tokens: Sequence[Tokens]) -> None:
        self.doc_tokens = doc_tokens
        self.vocabulary: dict[str, int] = {}
        rows, cols = [], []
        for i, tokens in enumerate(doc_tokens):
            ids = [self.vocabulary.setdefault(t, len(self.vocabulary)) for t in tokens]
            rows.append(np.full(len(ids), i, dtype=np.int64))
            cols.append(np.asarray(ids, dtype=np.int64))
        row, col = np.concatenate(rows), np.concatenate(cols)
        shape = (len(doc_tokens), len(self.vocabulary))
        # coo -> csc sums duplicate (doc, term) pairs: entries are term frequencies.
        self.counts = sp.csc_matrix((np.ones(len(row)), (row, col)), shape=shape)
        self.doc_lengths = np.asarray(self.counts.sum(axis=1)).ravel()
        self.collection_freq = np.asarray(self.counts.sum(axis=0)).ravel()
        self._bm25: bm25s.BM25 | None = None

    def term_ids(self, query: Tokens) -> np.ndarray:
        """Ids of the query's terms that occur in the corpus, repeats kept."""
        return np.asarray([self.vocabulary[t] for t in query if t in self.vocabulary], dtype=np.int64)

    @property
    def bm25(self) -> bm25s.BM25:
        if self._bm25 is None:
            self._bm25 = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene")
            self._bm25.index([list(t) for t in self.doc_tokens], show_progress=False)
        return self._bm25


def bm25_scores(corpus: Corpus, queries: Sequence[Tokens]) -> np.ndarray:
    """Okapi BM25, Lucene variant (bm25s; Kamphuis et al., ECIR 2020):

    ``sum_t idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))``, ``idf = log(1 + (N - df + 0.5) / (df + 0.5))``.
    A term repeated in the query counts twice; query terms absent from the corpus are ignored.
    """
    index = corpus.bm25
    out = np.zeros((len(queries), len(corpus.doc_tokens)))
    for i, query in enumerate(queries):
        known = [t for t in query if t in index.vocab_dict]
        if known:
            out[i] = index.get_scores(known)
    return out


def tfidf_cosine_scores(corpus: Corpus, queries: Sequence[Tokens]) -> np.ndarray:
    """Cosine between l2-normalised TF-IDF vectors (scikit-learn), sublinear tf ``1 + log(tf)``,
    smoothed idf ``1 + log((1 + N) / (1 + df))``."""
    vectorizer = TfidfVectorizer(analyzer=_identity, sublinear_tf=True, lowercase=False)
    docs = vectorizer.fit_transform(corpus.doc_tokens)
    return np.asarray((vectorizer.transform(queries) @ docs.T).todense())


def ql_dirichlet_scores(corpus: Corpus, queries: Sequence[Tokens], mu: float = DIRICHLET_MU) -> np.ndarray:
    """Query likelihood with Dirichlet smoothing (Zhai & Lafferty 2001):

    ``log P(q|d) = sum_t c(t,q) * log((tf(t,d) + mu * P(t|C)) / (|d| + mu))``, ``P(t|C) = cf(t) / |C|``.
    Query terms absent from the corpus are ignored (they would lower every document equally).
    """
    p_collection = corpus.collection_freq / corpus.collection_freq.sum()
    denominator = np.log(corpus.doc_lengths + mu)
    out = np.empty((len(queries), len(corpus.doc_tokens)))
    for i, query in enumerate(queries):
        ids, query_counts = np.unique(corpus.term_ids(query), return_counts=True)
        tf = corpus.counts[:, ids].toarray()  # (n_docs, n_query_terms)
        log_p = np.log(tf + mu * p_collection[ids]) - denominator[:, None]
        out[i] = log_p @ query_counts
    return out


def rm3_bm25_scores(
    corpus: Corpus,
    queries: Sequence[Tokens],
    feedback_docs: int = RM3_FEEDBACK_DOCS,
    terms: int = RM3_TERMS,
    original_weight: float = RM3_ORIGINAL_WEIGHT,
) -> np.ndarray:
    """BM25 with RM3 pseudo-relevance feedback (Lavrenko & Croft 2001; Abdul-Jaleel et al. 2004).

    The top ``feedback_docs`` of a first BM25 pass give the relevance model
    ``P(w|R) ∝ sum_d P(w|d) * exp(bm25(d))/Z`` (scores softmax-normalised); its ``terms`` most likely
    words are mixed with the original query, ``original_weight * P(w|q) + (1 - original_weight) * P(w|R)``,
    and the weighted query is scored with BM25 again: ``sum_w weight(w) * bm25(w, d)``.
    """
    first = bm25_scores(corpus, queries)
    index = corpus.bm25
    per_term_cache: dict[str, np.ndarray] = {}
    out = np.zeros_like(first)
    inverse_vocab = np.empty(len(corpus.vocabulary), dtype=object)
    for term, j in corpus.vocabulary.items():
        inverse_vocab[j] = term
    counts_csr = corpus.counts.tocsr()
    for i, query in enumerate(queries):
        known = [t for t in query if t in index.vocab_dict]
        if not known:
            continue
        top = np.lexsort((np.arange(len(first[i])), -first[i]))[:feedback_docs]
        weights = np.exp(first[i, top] - first[i, top].max())
        weights /= weights.sum()
        p_w_d = counts_csr[top].multiply(1.0 / corpus.doc_lengths[top, None])
        relevance = np.asarray(p_w_d.T @ weights).ravel()
        best = np.lexsort((np.arange(len(relevance)), -relevance))[:terms]
        expansion = dict(zip(inverse_vocab[best], relevance[best] / relevance[best].sum(), strict=True))
        mixed: dict[str, float] = {}
        for term in known:
            mixed[term] = mixed.get(term, 0.0) + original_weight / len(known)
        for term, p in expansion.items():
            if term in index.vocab_dict:
                mixed[term] = mixed.get(term, 0.0) + (1.0 - original_weight) * p
        for term, weight in sorted(mixed.items()):
            if term not in per_term_cache:
                per_term_cache[term] = index.get_scores([term]).astype(np.float64)
            out[i] += weight * per_term_cache[term]
    return out

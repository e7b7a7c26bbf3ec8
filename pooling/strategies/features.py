"""Document features for active learning, computed once per collection. Django-free.

As BMI's (G. V. Cormack and M. R. Grossman, "Autonomy and reliability of continuous active learning for
technology-assisted review", arXiv:1504.06868, 2015): words, tf-idf with a logarithmic term frequency,
each document vector of unit length. The words are hashed into ``n_features`` columns (scikit-learn's
``HashingVectorizer``: no vocabulary to keep, so a collection's features are three arrays on disk and a
topic's text is featurised the same way without the corpus):

    w(t, d) = (1 + log tf(t, d)) * (1 + log((1 + N) / (1 + df(t))))      then  x_d = w_d / ||w_d||

Each document's length (its words after stop words) and ||w_d|| are kept too: with them the term counts of
a topic's words come back from ``x_d``, and :meth:`Features.bm25` scores the collection for a topic's text
with BM25 (k1 = 1.2, b = 0.75, Lucene's idf), the query-anchored ranking :mod:`.cal` learns beside the
classifier. ``VERSION`` numbers this layout; features stored with an older one are recomputed.

>>> f = build_features(["a", "b"], ["cold fusion energy", "warm fusion"], n_features=2 ** 10)
>>> f.matrix.shape, round(float(f.matrix[0].multiply(f.matrix[0]).sum()), 6)
((2, 1024), 1.0)
>>> float((f.query("fusion energy") @ f.matrix.T).toarray()[0].argmax())
0.0
>>> [round(float(x), 3) for x in f.bm25("fusion energy")]
[0.809, 0.199]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

# scikit-learn and scipy are imported where features are made or read, not with this module: the pool registry
# imports it, and every web worker would pay some 100 MB for them at start
if TYPE_CHECKING:
    import scipy.sparse as sp
    from sklearn.feature_extraction.text import HashingVectorizer

__all__ = ["Features", "build_features", "load_features"]

DEFAULT_N_FEATURES = 2 ** 20
#: of the stored layout: 1 = matrix, idf, docnos; 2 = also each document's length and norm (BM25)
VERSION = 2
K1, B = 1.2, 0.75


_TOKEN = re.compile(r"(?u)\b\w\w+\b")


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer  # PyStemmer: Snowball's English (Porter 2) stemmer

    return Stemmer.Stemmer("english")


def _stemmed_words(text: str) -> list[str]:
    stop = _stop_words()
    words = [w for w in _TOKEN.findall(text.lower()) if w not in stop]
    return _stemmer().stemWords(words)


def _vectorizer(n_features: int, stem: bool = True) -> HashingVectorizer:
    from sklearn.feature_extraction.text import HashingVectorizer

    if stem:
        return HashingVectorizer(n_features=n_features, alternate_sign=False, norm=None, analyzer=_stemmed_words,
                                 dtype=np.float32)
    return HashingVectorizer(n_features=n_features, alternate_sign=False, norm=None, stop_words="english",
                             lowercase=True, dtype=np.float32)


def _log_tf(matrix: sp.csr_matrix) -> sp.csr_matrix:
    matrix = matrix.tocsr(copy=True)
    matrix.data = (1.0 + np.log(matrix.data)).astype(np.float32)
    return matrix


@dataclass(frozen=True)
class Features:
    """``matrix`` row i = the unit tf-idf vector of ``docnos[i]``; ``idf`` per hashed column; ``lengths`` and
    ``norms`` per document (None in features stored before version 2: no BM25 then)."""

    docnos: np.ndarray  # of str
    matrix: sp.csr_matrix
    idf: np.ndarray
    stemmed: bool = True
    lengths: np.ndarray | None = None
    norms: np.ndarray | None = None

    @property
    def version(self) -> int:
        return 1 if self.lengths is None or self.norms is None else VERSION

    @property
    def n_features(self) -> int:
        return int(self.matrix.shape[1])

    def __len__(self) -> int:
        return len(self.docnos)

    def index(self) -> dict[str, int]:
        return {str(d): i for i, d in enumerate(self.docnos)}

    def query(self, text: str) -> sp.csr_matrix:
        """A topic's text as a (1, n_features) unit vector in the documents' space (zero if no word is known)."""
        import scipy.sparse as sp
        from sklearn.preprocessing import normalize

        vec = _log_tf(_vectorizer(self.n_features, self.stemmed).transform([text or ""])).multiply(self.idf[None, :])
        return normalize(sp.csr_matrix(vec, dtype=np.float32))

    def bm25(self, text: str) -> np.ndarray | None:
        """BM25 of every document for ``text`` (each distinct word once); None without lengths (version 1).

        Only the columns of the text's words are read: their counts are ``exp(x * norm / idf - 1)``."""
        if self.version < VERSION:
            return None
        words = np.unique(_vectorizer(self.n_features, self.stemmed).transform([text or ""]).indices)
        scores = np.zeros(len(self), dtype=np.float64)
        if len(words) == 0 or len(self) == 0:
            return scores
        part = self.matrix[:, words].tocoo()
        idf = self.idf[words].astype(np.float64)
        rows, cols = part.row, part.col
        tf = np.rint(np.exp(part.data * self.norms[rows] / idf[cols] - 1.0))
        n = len(self)
        df = (1.0 + n) * np.exp(1.0 - idf) - 1.0  # from the stored idf = 1 + log((1 + N) / (1 + df))
        weight = np.log(1.0 + (n - df + 0.5) / (df + 0.5))
        lengths = self.lengths.astype(np.float64)
        norm = K1 * (1.0 - B + B * lengths[rows] / max(float(lengths.mean()), 1e-9))
        np.add.at(scores, rows, weight[cols] * tf * (K1 + 1.0) / (tf + norm))
        return scores

    def save(self, path: str | Path | BinaryIO) -> None:
        """One ``.npz`` file (no pickles): the sparse matrix, the idf and the docnos."""
        if not isinstance(path, str | Path):
            self._write(path)
            return
        with open(path, "wb") as handle:
            self._write(handle)

    def _write(self, handle: BinaryIO) -> None:
        m = self.matrix
        np.savez(handle, data=m.data, indices=m.indices, indptr=m.indptr, shape=np.array(m.shape),
                 idf=self.idf, stemmed=np.array(self.stemmed),
                 docnos=np.asarray([str(d) for d in self.docnos], dtype=str), version=np.array(self.version),
                 **({} if self.version < VERSION else {"lengths": self.lengths, "norms": self.norms}))


def load_features(path: str | Path | BinaryIO) -> Features:
    import scipy.sparse as sp

    with np.load(path, allow_pickle=False) as z:
        matrix = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
        extra = {"lengths": z["lengths"], "norms": z["norms"]} if "norms" in z.files else {}
        return Features(np.asarray(z["docnos"], dtype=object), matrix, z["idf"], bool(z["stemmed"]), **extra)


def build_features(docnos: Sequence[str], texts: Sequence[str], *,
                   n_features: int = DEFAULT_N_FEATURES, stem: bool = True) -> Features:
    """Hashed log-tf x idf unit vectors of ``texts`` (one per docno, same order)."""
    from sklearn.preprocessing import normalize

    if len(docnos) != len(texts):
        raise ValueError("one text per document")
    counts = _vectorizer(n_features, stem).transform(texts).tocsr()
    n = counts.shape[0]
    df = np.bincount(counts.indices, minlength=n_features)
    idf = (1.0 + np.log((1.0 + n) / (1.0 + df))).astype(np.float32)
    weighted = _log_tf(counts)
    weighted.data *= idf[weighted.indices]
    lengths = np.asarray(counts.sum(axis=1), dtype=np.float32).ravel()
    norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1), dtype=np.float64).ravel()).astype(np.float32)
    return Features(np.asarray([str(d) for d in docnos], dtype=object),
                    normalize(weighted).astype(np.float32).tocsr(), idf, stem, lengths, norms)

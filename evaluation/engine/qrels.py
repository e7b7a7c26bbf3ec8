"""Relevance judgments prepared once for fast lookups: topic and document codes, grades, level counts.

Grades follow trec_eval 9.0.8 (``form_res_rels.c``): a grade ``>= 0`` is a judgment; a negative grade
means *pooled but not judged* (infAP's sampled pools): it counts in no level, bpref and infAP see it as
unjudged, ``-J`` drops it. A document absent from the qrels of its topic is *not pooled*.

Topics are kept in ``strcmp`` order of their ids (trec_eval evaluates and prints them in that order);
documents get codes (positions in the qrels' vocabulary) for the join with runs.

>>> import pandas as pd
>>> q = Qrels.from_frame(pd.DataFrame({"qid": ["2", "1", "1"], "docno": ["a", "b", "a"], "rel": [1, 0, 2]}))
>>> q.topics, q.num_rel(1).tolist(), q.num_rel(2).tolist()
(['1', '2'], [1, 1], [1, 0])
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

# pyarrow is imported by the functions that use it, not here: Qrels made by :meth:`Qrels.from_codes` (the
# command line's small files, :mod:`evaluation.engine.small_files`) are evaluated without it.


def _pandas():
    """pandas if something has imported it (then values may be pandas objects), else None: the engine
    never imports pandas itself on the command line's path."""
    return sys.modules.get("pandas")


def as_arrow_strings(values) -> pa.Array:
    """:func:`workbench.formats.arrays.as_arrow_strings` (imported on first use)."""
    from workbench.formats.arrays import as_arrow_strings as arrow_strings

    return arrow_strings(values)


def string_hashes(strings) -> np.ndarray:
    """:func:`workbench.formats.checks.string_hashes` (imported on first use)."""
    from workbench.formats.checks import string_hashes as hashes

    return hashes(strings)


def sorted_unique(arr: pa.Array) -> pa.Array:
    """Distinct strings in ``strcmp`` (byte) order."""
    import pyarrow.compute as pc

    uniq = pc.unique(arr)
    return uniq.take(pc.sort_indices(uniq))


def codes_in(arr: pa.Array, vocabulary: pa.Array) -> np.ndarray:
    """Position of each string of ``arr`` in ``vocabulary`` (int64), -1 where absent."""
    import pyarrow.compute as pc

    from workbench.formats.arrays import to_numpy

    return to_numpy(pc.index_in(arr, value_set=vocabulary), -1).astype(np.int64, copy=False)


def topic_codes(qid, topics: pa.Array) -> np.ndarray:
    """Codes of a qid column against sorted topic ids; cheap for a pandas Categorical (maps categories)."""
    pd = _pandas()
    if pd is not None and isinstance(qid, pd.Series) and isinstance(qid.dtype, pd.CategoricalDtype):
        cat_codes = codes_in(as_arrow_strings(pd.Series(qid.cat.categories)), topics)
        raw = qid.cat.codes.to_numpy()
        out = np.where(raw >= 0, cat_codes[np.maximum(raw, 0)], -1)
        return out.astype(np.int64, copy=False)
    return codes_in(as_arrow_strings(qid), topics)


def _vocabulary(docno: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray | None]:
    """Distinct docnos, the code of each docno among them, and their :func:`string_hashes`: found by
    sorting the hashes (faster than arrow's string hash table), checked on the strings; should two
    docnos share a hash, arrow's ``unique`` / ``index_in`` instead (and no hashes)."""
    import pyarrow.compute as pc

    from workbench.formats.arrays import from_numpy

    hashes = string_hashes(docno)
    distinct, first, code = np.unique(hashes, return_index=True, return_inverse=True)
    vocabulary = docno.take(from_numpy(first))
    if not len(docno) or pc.all(pc.equal(vocabulary.take(from_numpy(code)), docno)).as_py():
        return vocabulary, code.astype(np.int64, copy=False), distinct
    vocabulary = pc.unique(docno)
    return vocabulary, codes_in(docno, vocabulary), None


def _judgments(tcode: np.ndarray, dcode: np.ndarray, grades: np.ndarray, values: np.ndarray | None,
               n_topics: int, n_docs: int) -> tuple[dict, tuple[int, int] | None]:
    """The judgments as :class:`Qrels` keeps them (keys sorted, grades, fractional values, level counts),
    and the (topic, doc) codes of a docno judged twice in a topic, or None."""
    n_docs = max(n_docs, 1)
    keys = tcode * n_docs + dcode
    order = np.argsort(keys, kind="stable")
    keys, grades, tcode = keys[order], grades[order], tcode[order]
    values = None if values is None else values[order]
    dup = np.flatnonzero(keys[1:] == keys[:-1])
    if dup.size:
        k = int(keys[dup[0]])
        return {}, (k // n_docs, k % n_docs)
    return {"keys": keys, "grades": grades, **_level_stats(tcode, grades, n_topics), "values": values}, None


def _level_stats(tcode: np.ndarray, grades: np.ndarray, n_topics: int) -> dict:
    """Distinct levels, judged documents per (topic, level), pooled-but-unjudged per topic."""
    judged = grades >= 0
    graded = grades[judged]
    if graded.size and graded.max() < 4096:  # the usual small grades: counted, not sorted
        levels = np.flatnonzero(np.bincount(graded)).astype(grades.dtype)
        lvl_idx = np.cumsum(np.bincount(graded) > 0)[graded] - 1
    else:
        levels = np.unique(graded)
        lvl_idx = np.searchsorted(levels, graded)
    n_levels = len(levels)
    counts = np.bincount(tcode[judged] * n_levels + lvl_idx, minlength=n_topics * n_levels)
    counts = counts.astype(np.int64).reshape(n_topics, n_levels)
    return {"levels": levels, "level_counts": counts,
            "unjudged_counts": np.bincount(tcode[~judged], minlength=n_topics).astype(np.int64),
            "positive_total": int(np.count_nonzero(grades > 0))}


@dataclass(eq=False)
class Qrels:
    """Judgments of one qrels file, sorted by (topic, docno), with per-topic level counts.

    Build with :meth:`from_frame` (columns ``qid``, ``docno``, ``rel``) or :meth:`from_codes` (Python
    lists, without pyarrow); reuse for every run.
    """

    topics: list[str]
    keys: np.ndarray          # topic * n_docs + doc, sorted, unique
    grades: np.ndarray        # int64, aligned with keys
    levels: np.ndarray        # distinct grades >= 0, ascending
    level_counts: np.ndarray  # (n_topics, n_levels) judged documents per grade
    unjudged_counts: np.ndarray  # pooled-but-unjudged (negative grade) documents per topic
    positive_total: int       # lines with grade > 0, all topics (9.0.8's num_rel summary under -c)
    values: np.ndarray | None = None  # fractional grades (float64, aligned with keys), else None
    relevant_from: float = 1.0        # with fractional grades: grade >= this is relevant (``grades`` 1)
    _cache: dict = field(default_factory=dict, repr=False)
    _docnos: list[str] | None = field(default=None, repr=False)  # the vocabulary as made by from_codes

    @functools.cached_property
    def topic_array(self) -> pa.Array:
        """The topics as arrow strings (made on first use when built by :meth:`from_codes`)."""
        from workbench.formats.arrays import from_strings  # not pa.array, which imports pandas

        return from_strings(self.topics)

    @functools.cached_property
    def vocabulary(self) -> pa.Array:
        """The docno of each document code, as arrow strings (made on first use when built by
        :meth:`from_codes`)."""
        from workbench.formats.arrays import from_strings

        return from_strings(self._docnos)

    @property
    def docnos(self) -> list[str]:
        """The docno of each document code, as Python strings."""
        if self._docnos is None:
            self._docnos = self.vocabulary.to_pylist()
        return self._docnos

    @classmethod
    def from_frame(cls, frame, *, fractional_from: float | None = None) -> Qrels:
        """Prepare judgments from a frame with ``qid``, ``docno``, ``rel`` (integer grades): a pandas
        frame, a pyarrow table (:func:`workbench.formats.read_qrels_table`) or a dict of columns.

        ``fractional_from``: the grades are fractional (``rel`` may hold 0.6, or a judge's probability) and
        a grade ``>=`` this value is relevant. Their exact values are kept in ``values`` for the gain-based
        measures; ``grades`` become 1 (relevant), 0 (judged, not relevant) or -1 (negative: pooled, not
        judged), so that every binary measure is evaluated at relevance level 1.

        Raises ``ValueError`` for a docno judged twice in a topic (trec_eval refuses it too).
        """
        import pyarrow as pa

        from workbench.formats.arrays import to_numpy

        qid = as_arrow_strings(frame["qid"])
        docno = as_arrow_strings(frame["docno"])
        rel = frame["rel"]
        grades = to_numpy(rel) if isinstance(rel, pa.ChunkedArray | pa.Array) else np.asarray(rel)
        values = None
        if fractional_from is not None:
            values = grades.astype(np.float64)
            if not np.isfinite(values).all():
                raise ValueError("a fractional grade is not a finite number")
            grades = np.where(values < 0, -1, np.where(values >= fractional_from, 1, 0))
        grades = grades.astype(np.int64, copy=False)
        topic_array = sorted_unique(qid)
        tcode = topic_codes(frame["qid"], topic_array)
        vocabulary, dcode, hashes = _vocabulary(docno)
        fields, dup = _judgments(tcode, dcode, grades, values, len(topic_array), len(vocabulary))
        if dup is not None:
            raise ValueError(f"document {vocabulary[dup[1]].as_py()!r} is judged twice for topic "
                             f"{topic_array[dup[0]].as_py()!r}")
        qrels = cls(topics=topic_array.to_pylist(), **fields,
                    relevant_from=1.0 if fractional_from is None else float(fractional_from))
        qrels.topic_array, qrels.vocabulary = topic_array, vocabulary
        if hashes is not None:
            qrels._cache["vocabulary_hashes"] = hashes
        return qrels

    @classmethod
    def from_codes(cls, topics: list[str], docnos: list[str], tcode: np.ndarray, dcode: np.ndarray,
                   grades: np.ndarray) -> Qrels:
        """The :meth:`from_frame` of judgments already coded, without pyarrow: ``topics`` in ``strcmp``
        order, distinct ``docnos``, and for each judgment its topic's and docno's positions in them and
        its integer grade. Raises ``ValueError`` for a docno judged twice in a topic.

        >>> q = Qrels.from_codes(["1", "2"], ["a", "b"], np.array([1, 0, 0]), np.array([0, 1, 0]), np.array([1, 0, 2]))
        >>> q.topics, q.num_rel(1).tolist(), q.num_rel(2).tolist()
        (['1', '2'], [1, 1], [1, 0])
        """
        grades = np.asarray(grades).astype(np.int64, copy=False)
        fields, dup = _judgments(np.asarray(tcode, dtype=np.int64), np.asarray(dcode, dtype=np.int64), grades,
                                 None, len(topics), len(docnos))
        if dup is not None:
            raise ValueError(f"document {docnos[dup[1]]!r} is judged twice for topic {topics[dup[0]]!r}")
        return cls(topics=list(topics), **fields, _docnos=list(docnos))

    def without(self, drop: np.ndarray) -> Qrels:
        """These judgments less those where ``drop`` (bool, aligned with ``keys``) is set: what a
        leave-one-out experiment evaluates against, a hundred times over. Topics and vocabulary are kept
        (a topic left without judgments stays, with R = 0), so nothing is re-coded or re-hashed, and the
        run join reuses this object's sorted pair keys (:func:`evaluation.engine.join.match`).

        >>> q = Qrels.from_frame({"qid": ["1", "1", "2"], "docno": ["a", "b", "a"], "rel": [1, 1, 2]})
        >>> q.without(np.array([True, False, False])).num_rel(1).tolist()
        [1, 1]
        """
        drop = np.asarray(drop, dtype=bool)
        if drop.shape != self.keys.shape:
            raise ValueError(f"drop has {drop.size} flags for {self.keys.size} judgments")
        keep = ~drop
        gone = np.flatnonzero(drop)
        # the counts less those of the dropped judgments (a level nobody has any more disappears)
        tcode, grades = self.keys[gone] // self.n_docs, self.grades[gone]
        judged = grades >= 0
        counts = self.level_counts.copy()
        np.subtract.at(counts, (tcode[judged], np.searchsorted(self.levels, grades[judged])), 1)
        present = counts.sum(axis=0) > 0
        child = Qrels(topics=self.topics, _docnos=self._docnos,
                      keys=self.keys[keep], grades=self.grades[keep], levels=self.levels[present],
                      level_counts=counts[:, present],
                      unjudged_counts=self.unjudged_counts - np.bincount(tcode[~judged], minlength=len(self.topics)),
                      positive_total=self.positive_total - int(np.count_nonzero(grades > 0)),
                      values=None if self.values is None else self.values[keep], relevant_from=self.relevant_from)
        for name in ("vocabulary_hashes", "topic_position"):
            if name in self._cache:
                child._cache[name] = self._cache[name]
        for name in ("topic_array", "vocabulary"):  # the arrow arrays, once made, are shared
            if name in self.__dict__:
                child.__dict__[name] = self.__dict__[name]
        child._cache["parent"] = (self, keep)
        return child

    def topic_position(self) -> dict[str, int]:
        """``{qid: topic code}`` (cached)."""
        if "topic_position" not in self._cache:
            self._cache["topic_position"] = {qid: code for code, qid in enumerate(self.topics)}
        return self._cache["topic_position"]

    @property
    def n_docs(self) -> int:
        return max(len(self._docnos) if self._docnos is not None else len(self.vocabulary), 1)

    def num_rel(self, level: int) -> np.ndarray:
        """Relevant documents per topic: judged with grade >= ``level`` (trec_eval's R)."""
        return self.level_counts[:, self.levels >= level].sum(axis=1)

    def num_nonrel(self, level: int) -> np.ndarray:
        """Judged non-relevant documents per topic: grade in ``[0, level)``."""
        return self.level_counts[:, self.levels < level].sum(axis=1)

    def num_judged(self) -> np.ndarray:
        return self.level_counts.sum(axis=1)

    def num_rel_levels(self) -> np.ndarray:
        """trec_eval's ``num_rel_levels``: highest grade with a document, plus one (0 if none)."""
        if not len(self.levels):
            return np.zeros(len(self.topics), dtype=np.int64)
        present = self.level_counts > 0
        top = np.where(present.any(axis=1), len(self.levels) - 1 - np.argmax(present[:, ::-1], axis=1), -1)
        return np.where(top >= 0, self.levels[np.maximum(top, 0)] + 1, 0)

    def highest_grades(self) -> np.ndarray:
        """Each topic's highest grade as a float, at least 1 for integer grades (``num_rel_levels - 1``);
        with fractional grades the highest positive one (1 if none)."""
        if self.values is None:
            return np.maximum(self.num_rel_levels() - 1, 1).astype(np.float64)
        top = np.zeros(len(self.topics))
        np.maximum.at(top, self.keys // self.n_docs, self.values)
        return np.where(top > 0, top, 1.0)

    def count_at(self, grade: int) -> np.ndarray:
        """Judged documents with exactly ``grade`` per topic."""
        hit = np.flatnonzero(self.levels == grade)
        if not hit.size:
            return np.zeros(len(self.topics), dtype=np.int64)
        return self.level_counts[:, hit[0]]

    def lookup(self, topic: np.ndarray, doc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows (indices into ``topic``/``doc``) whose (topic, doc-code) pair is judged, and the index of
        each one's judgment in ``keys``/``grades``; doc -1 means not in the vocabulary."""
        cand = np.flatnonzero((doc >= 0) & (topic >= 0))
        if not cand.size or not len(self.keys):
            return cand[:0], np.zeros(0, dtype=np.int64)
        keys = topic[cand] * self.n_docs + doc[cand]
        pos = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
        hit = self.keys[pos] == keys
        return cand[hit], pos[hit]

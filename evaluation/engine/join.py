"""Run lines matched to judgments: which lines' (topic, docno) the qrels judge, and which judgment.

Exact, and without a Python string or a string hash table per line. Every docno has a 64-bit hash
(:func:`workbench.formats.checks.string_hashes`, a function of its bytes only; the run reader computes
it for its duplicate check already). A line's *pair key* is ``hash ^ (topic + 1) * K``; the judgments'
pair keys are sorted once per :class:`~evaluation.engine.qrels.Qrels` and cut into buckets by their top
bits. A table of the non-empty buckets rejects most lines (documents nobody judged) with one gather; the
others are compared with the few keys of their bucket, and every match is confirmed on the strings.
Should two different docnos share a key (a hash collision, in the qrels or between a run and the
qrels), the exact string join (``pyarrow.compute.index_in`` against the qrels' vocabulary) decides
instead: the result never depends on the hashes.

>>> import pyarrow as pa
>>> from evaluation.engine.qrels import Qrels
>>> q = Qrels.from_frame({"qid": ["1", "1", "2"], "docno": ["a", "b", "a"], "rel": [1, 0, 2]})
>>> rows, judgment = match(q, np.array([1, 0, 0, 1]), pa.array(["a", "c", "b", "b"]))
>>> rows.tolist(), q.grades[judgment].tolist()
([0, 2], [2, 0])
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evaluation.engine.qrels import Qrels, as_arrow_strings, codes_in, topic_codes
from workbench.formats.arrays import from_numpy
from workbench.formats.checks import string_hashes

_TOPIC = np.uint64(0x9E3779B97F4A7C15)


class RunColumns(NamedTuple):
    """What ranking needs of one run, lines in file order."""

    topic: np.ndarray          # qrels topic code of each line (int32, int64), -1 if the qrels lack the topic
    docno: pa.Array | pa.ChunkedArray  # strings
    score: np.ndarray          # float64, or float32 as trec_eval keeps it
    hashes: np.ndarray | None  # string_hashes(docno) when the reader computed them


def run_columns(qrels: Qrels, run) -> RunColumns:
    """The columns of a run: a frame (``qid``, ``docno``, ``score``; pandas or pyarrow) or a
    :class:`workbench.formats.RunArrays` (codes, docnos and hashes taken as they are)."""
    if hasattr(run, "docno_hash"):
        position = qrels.topic_position()
        codes = np.array([position.get(qid, -1) for qid in run.topics], dtype=np.int32)
        if codes.size and np.array_equal(codes, np.arange(codes.size)):
            topic = run.topic  # the run's topics are the qrels' in the same order: no copy of every line's code
        else:
            topic = codes[run.topic] if codes.size else np.full(len(run.topic), -1, dtype=np.int32)
        return RunColumns(topic, run.docno, np.asarray(run.score), run.docno_hash)
    docno = as_arrow_strings(run["docno"])
    return RunColumns(topic_codes(run["qid"], qrels.topic_array), docno,
                      np.asarray(run["score"], dtype=np.float64), None)


class _PairIndex(NamedTuple):
    keys: np.ndarray       # sorted pair keys of the judgments (uint64, distinct)
    judgment: np.ndarray   # judgment (index into Qrels.keys) of each sorted key
    docno: pa.Array        # docno of each sorted key
    table: np.ndarray      # bool, indexed by the top bits of a pair key (its bucket): some key is in it
    start: np.ndarray      # int32, keys[start[b]:start[b + 1]] are the keys of bucket b
    shift: np.uint64


def _pair_keys(topic: np.ndarray, hashes: np.ndarray) -> np.ndarray:
    return hashes ^ ((topic.astype(np.uint64) + np.uint64(1)) * _TOPIC)


def _pair_index(qrels: Qrels) -> _PairIndex | None:
    """The judgments' sorted pair keys (cached on ``qrels``); None when two of them collide."""
    if "pair_index" not in qrels._cache:
        n_docs = qrels.n_docs
        doc = qrels.keys % n_docs
        hashes = qrels._cache.get("vocabulary_hashes")
        hashes = string_hashes(qrels.vocabulary) if hashes is None else hashes
        keys = _pair_keys(qrels.keys // n_docs, hashes[doc])
        order = np.argsort(keys)
        keys = keys[order]
        index = None
        if not (keys[1:] == keys[:-1]).any():
            index = _bucketed(keys, order, qrels.vocabulary.take(from_numpy(doc[order])))
        qrels._cache["pair_index"] = index
    return qrels._cache["pair_index"]


def _bucketed(keys: np.ndarray, judgment: np.ndarray, docno: pa.Array) -> _PairIndex:
    """The index over sorted, distinct pair ``keys``: a table of the non-empty buckets (top bits) and
    where each bucket starts."""
    bits = int(min(max(16, int(keys.size).bit_length() + 4), 28))  # ~1/16 of lines pass the table
    shift = np.uint64(64 - bits)
    bucket = (keys >> shift).astype(np.int64)
    table = np.zeros(1 << bits, dtype=bool)
    table[bucket] = True
    first = np.flatnonzero(np.concatenate(([True], bucket[1:] != bucket[:-1]))) if keys.size else bucket[:0]
    used = bucket[first]
    start = np.zeros((1 << bits) + 1, dtype=np.int32)
    start[used + 1] = np.diff(np.append(first, keys.size))
    np.cumsum(start, out=start)
    return _PairIndex(keys, judgment, docno, table, start, shift)


def match(qrels: Qrels, topic: np.ndarray, docno: pa.Array,
          hashes: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Lines whose (``topic`` code >= 0, ``docno``) is judged, ascending, and the index of each one's
    judgment in ``qrels.keys`` / ``qrels.grades``. ``hashes``: ``string_hashes(docno)`` if known.

    Qrels made by :meth:`Qrels.without` are matched through their parent (whose index is built once),
    less the dropped judgments."""
    parent = qrels._cache.get("parent")
    if parent is not None:
        base, keep = parent
        rows, judgment = match(base, topic, docno, hashes)
        if "renumber" not in qrels._cache:
            qrels._cache["renumber"] = np.cumsum(keep) - 1
        kept = keep[judgment]
        return rows[kept], qrels._cache["renumber"][judgment[kept]]
    index = _pair_index(qrels) if len(qrels.keys) else None
    if index is not None:
        found = _hash_match(index, topic, docno, string_hashes(docno) if hashes is None else hashes)
        if found is not None:
            return found
    return qrels.lookup(topic, codes_in(docno, qrels.vocabulary))


_BLOCK = 1 << 18


def _hash_match(index: _PairIndex, topic: np.ndarray, docno, hashes: np.ndarray) -> tuple | None:
    rows, found = [], []
    for start in range(0, topic.size, _BLOCK):  # a block at a time: small temporaries
        part = slice(start, start + _BLOCK)
        keys = _pair_keys(topic[part], hashes[part])
        bucket = keys >> index.shift
        candidates = np.flatnonzero(index.table[bucket] & (topic[part] >= 0))
        keys, bucket = keys[candidates], bucket[candidates].astype(np.intp)
        low, high = index.start[bucket], index.start[bucket + 1]
        while candidates.size:  # the j-th key of each candidate's bucket, j = 0, 1, ... (few buckets hold 2)
            hit = index.keys[low] == keys
            rows.append(candidates[hit] + start)
            found.append(low[hit])
            low += 1
            more = ~hit & (low < high)
            candidates, keys, low, high = candidates[more], keys[more], low[more], high[more]
    rows = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    pos = np.concatenate(found).astype(np.int64) if found else np.zeros(0, dtype=np.int64)
    order = np.argsort(rows, kind="stable")  # ascending lines (each block's rounds came out mixed)
    rows, pos = rows[order], pos[order]
    same = pc.equal(docno.take(from_numpy(rows)), index.docno.take(from_numpy(pos)))
    if rows.size and not pc.all(same).as_py():
        return None  # a run docno shares a pair key with another, judged, docno: decide on the strings
    return rows, index.judgment[pos]

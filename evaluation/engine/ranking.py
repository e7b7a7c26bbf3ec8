"""Runs joined to qrels and ranked the way trec_eval 9.0.8 ranks them (``form_res_rels.c``).

Per topic: score descending compared as 32-bit floats (9.0.8 stores ``float sim``), ties broken by docno
descending (``strcmp``); the rank column of the file is ignored; ``-M`` keeps the first ``max_depth``
documents of that order; ``-J`` then drops every document without a judgment (grade >= 0), keeping the
order. Topics absent from the qrels are dropped. Each document has a *rel value*: its grade, ``-1`` if the
topic's qrels do not list it (not pooled), ``-2`` if they list it with a negative grade (pooled, not
judged).

Vectorised: one stable ``argsort`` of a 64-bit key ``(segment, ~orderable(score32))`` (linear when the
file is already sorted, as runs usually are); only documents whose key ties are re-sorted by docno.
Several runs are ranked in one pass: a *segment* is one (run, topic).

Sparse result: unpooled documents (rel -1, most of a run) carry no information beyond their rank, so a
segment is stored as its length ``n`` plus the (rank, rel) of its *pooled* documents. Every trec_eval
measure is a sum or count over those entries in rank order (sums over unpooled ranks only add zeros), so
the kernels work on ``(segments, pooled entries)`` matrices (:class:`Block`), adding in trec_eval's order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from evaluation.engine.qrels import Qrels, as_arrow_strings, codes_in, topic_codes

NONPOOL, UNJUDGED = -1, -2
PAD = np.iinfo(np.int32).min
PAD_POS = np.int64(1) << np.int64(60)


@dataclass(frozen=True)
class Ranked:
    """Ranked segments: lengths and the pooled entries (segment, 0-based rank, rel) in rank order."""

    seg_run: np.ndarray    # run index of each segment
    seg_topic: np.ndarray  # qrels topic index of each segment
    lengths: np.ndarray    # documents kept per segment
    e_seg: np.ndarray      # segment of each pooled entry (non-decreasing)
    e_pos: np.ndarray      # 0-based rank of the entry in its segment
    e_rel: np.ndarray      # grade (>= 0) or UNJUDGED

    def judged_only(self) -> Ranked:
        """The condensed list (``-J``): documents with a grade >= 0 only, order kept, ranks renumbered."""
        keep = self.e_rel >= 0
        seg = self.e_seg[keep]
        counts = np.bincount(seg, minlength=len(self.lengths)).astype(np.int64)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        pos = np.arange(seg.size, dtype=np.int64) - starts[seg]
        return Ranked(self.seg_run, self.seg_topic, counts, seg, pos, self.e_rel[keep])


def _orderable(score32: np.ndarray) -> np.ndarray:
    """uint32 whose unsigned order is the float order (-0.0 folded into +0.0)."""
    bits = (score32 + np.float32(0.0)).view(np.uint32)
    flip = (bits >> np.uint32(31)) * np.uint32(0x7FFFFFFF) | np.uint32(0x80000000)
    return bits ^ flip


def _break_ties(order: np.ndarray, key: np.ndarray, docno: pa.Array) -> np.ndarray:
    """Within runs of equal keys, order rows by docno descending (trec_eval's ``strcmp`` tie-break)."""
    same = key[1:] == key[:-1]
    if not same.any():
        return order
    in_tie = np.zeros(key.size, dtype=bool)
    in_tie[1:] |= same
    in_tie[:-1] |= same
    pos = np.flatnonzero(in_tie)
    group = np.cumsum(np.concatenate(([True], ~same[pos[1:] - 1] | (np.diff(pos) > 1))))
    rows = order[pos]
    table = pa.table({"g": group, "d": docno.take(pa.array(rows))})
    perm = pc.sort_indices(table, sort_keys=[("g", "ascending"), ("d", "descending")])
    order = order.copy()
    order[pos] = rows[perm.to_numpy()]
    return order


def _prepare(qrels: Qrels, r: int, frame) -> tuple:
    """Segment, sort key, qrels match (grade, found) and docnos of one run's rows in a qrels topic."""
    n_topics = len(qrels.topics)
    topic = topic_codes(frame["qid"], qrels.topic_array)
    docno = as_arrow_strings(frame["docno"])
    score = np.asarray(frame["score"], dtype=np.float64).astype(np.float32)
    if not (topic >= 0).all():
        idx = np.flatnonzero(topic >= 0)
        topic, score = topic[idx], score[idx]
        docno = docno.take(pa.array(idx))
    seg = r * n_topics + topic
    key = (seg.astype(np.uint64) << np.uint64(32)) | (~_orderable(score)).astype(np.uint64)
    rows, grades = qrels.lookup(topic, codes_in(docno, qrels.vocabulary))
    grade = np.zeros(seg.size, dtype=np.int64)
    grade[rows] = grades
    found = np.zeros(seg.size, dtype=bool)
    found[rows] = True
    return seg, key, grade, found, docno


def rank_runs(qrels: Qrels, frames: list, *, max_depth: int | None = None,
              judged_only: bool = False) -> Ranked:
    """Rank every run frame (columns ``qid``, ``docno``, ``score``) against ``qrels``.

    Raises ``ValueError`` when a judged document appears twice in the ranked part of a topic.
    """
    n_topics = max(len(qrels.topics), 1)
    parts = [_prepare(qrels, r, f) for r, f in enumerate(frames)]
    if not parts:
        empty = np.zeros(0, np.int64)
        return Ranked(empty, empty, empty, empty, empty, np.zeros(0, np.int32))
    seg, key, grade, found = (parts[0][i] if len(parts) == 1 else np.concatenate([p[i] for p in parts])
                              for i in range(4))
    docnos = [p[4] for p in parts]
    docno = docnos[0] if len(docnos) == 1 else pa.concat_arrays([d.cast(pa.large_string()) for d in docnos])
    del parts
    order = np.argsort(key, kind="stable")
    order = _break_ties(order, key[order], docno)
    del key
    seg_sorted = seg[order]
    first = np.flatnonzero(np.concatenate(([True], seg_sorted[1:] != seg_sorted[:-1]))) \
        if seg_sorted.size else seg_sorted[:0]
    segs, lengths = seg_sorted[first], np.diff(np.append(first, seg_sorted.size))
    hit = np.flatnonzero(found[order])          # sorted positions of pooled documents
    e_seg_id = seg_sorted[hit]
    seg_index = np.searchsorted(segs, e_seg_id)
    e_pos = hit - first[seg_index]
    rows = order[hit]
    e_grade = grade[rows]
    if max_depth is not None:
        keep = e_pos < max_depth
        seg_index, e_pos, e_grade, rows = seg_index[keep], e_pos[keep], e_grade[keep], rows[keep]
        lengths = np.minimum(lengths, max(max_depth, 0))
    _check_duplicates(qrels, segs, seg_index, e_pos, rows, docno)
    e_rel = np.where(e_grade >= 0, e_grade, UNJUDGED).astype(np.int32)
    ranked = Ranked(seg_run=segs // n_topics, seg_topic=segs % n_topics, lengths=lengths.astype(np.int64),
                    e_seg=seg_index.astype(np.int64), e_pos=e_pos.astype(np.int64), e_rel=e_rel)
    return ranked.judged_only() if judged_only else ranked


def _check_duplicates(qrels: Qrels, segs: np.ndarray, seg_index: np.ndarray, e_pos: np.ndarray,
                      rows: np.ndarray, docno: pa.Array) -> None:
    """Pooled documents retrieved twice for a topic (unpooled repeats are the readers' job)."""
    if seg_index.size < 2:
        return
    codes = codes_in(docno.take(pa.array(rows)), qrels.vocabulary)
    keys = seg_index * qrels.n_docs + codes
    order = np.argsort(keys, kind="stable")
    dup = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    if dup.size:
        k = int(keys[order][dup[0]])
        topic = int(segs[k // qrels.n_docs]) % max(len(qrels.topics), 1)
        raise ValueError(f"document {qrels.vocabulary[k % qrels.n_docs].as_py()!r} appears more than once "
                         f"in topic {qrels.topics[topic]!r} of a run")


@dataclass(frozen=True)
class Block:
    """Segments as a padded ``(rows, width)`` matrix of their pooled entries: rank ``pos`` (``PAD_POS``
    beyond) and ``rel`` (``PAD`` beyond), plus each row's length ``n``."""

    rows: np.ndarray     # segment indices
    lengths: np.ndarray  # documents ranked per row (n)
    pos: np.ndarray      # int64 (rows, width)
    rel: np.ndarray      # int32 (rows, width)

    @property
    def width(self) -> int:
        return self.rel.shape[1]


def blocks(ranked: Ranked) -> list[Block]:
    """Cut segments into blocks by number of pooled entries (powers of two): padding at most doubles."""
    n_seg = len(ranked.lengths)
    if not n_seg:
        return []
    counts = np.bincount(ranked.e_seg, minlength=n_seg)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    bucket = np.ceil(np.log2(np.maximum(counts, 1))).astype(np.int64)
    out = []
    for b in np.unique(bucket):
        rows = np.flatnonzero(bucket == b)
        c = counts[rows]
        width = max(int(c.max()), 1)
        pos = np.full((rows.size, width), PAD_POS, dtype=np.int64)
        rel = np.full((rows.size, width), PAD, dtype=np.int32)
        total = int(c.sum())
        if total:
            row_of = np.repeat(np.arange(rows.size), c)
            col = np.arange(total) - np.repeat(np.cumsum(c) - c, c)
            src = np.repeat(starts[rows], c) + col
            pos[row_of, col] = ranked.e_pos[src]
            rel[row_of, col] = ranked.e_rel[src]
        out.append(Block(rows=rows, lengths=ranked.lengths[rows], pos=pos, rel=rel))
    return out

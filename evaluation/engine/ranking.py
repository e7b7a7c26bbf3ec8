"""Runs joined to qrels and ranked the way trec_eval 9.0.8 ranks them (``form_res_rels.c``).

Per topic: score descending compared as 32-bit floats (9.0.8 stores ``float sim``), ties broken by docno
descending (``strcmp``); the rank column of the file is ignored; ``-M`` keeps the first ``max_depth``
documents of that order; ``-J`` then drops every document without a judgment (grade >= 0), keeping the
order. Topics absent from the qrels are dropped. Each document has a *rel value*: its grade, ``-1`` if the
topic's qrels do not list it (not pooled), ``-2`` if they list it with a negative grade (pooled, not
judged).

Vectorised: lines are matched to judgments by :mod:`evaluation.engine.join`, then each run gets one
stable ``argsort`` of a 64-bit key ``(segment, score32 descending)`` (near linear when the file is
already sorted, as runs usually are); only documents whose key ties are re-sorted by docno. Several runs
are ranked in one pass: a *segment* is one (run, topic); as keys start with the run, the runs' sorted
lines one after another are the order of all lines, so no sort ever spans more than one run.

Sparse result: unpooled documents (rel -1, most of a run) carry no information beyond their rank, so a
segment is stored as its length ``n`` plus the (rank, rel) of its *pooled* documents. Every trec_eval
measure is a sum or count over those entries in rank order (sums over unpooled ranks only add zeros), so
the kernels work on ``(segments, pooled entries)`` matrices (:class:`Block`), adding in trec_eval's order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evaluation.engine.qrels import Qrels

# pyarrow (and the join, which needs it) is imported by the functions that rank run files, not here: a
# ranking made without it (the command line's small files, :mod:`evaluation.engine.small_files`) is scored
# by the same kernels, which import this module.

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
    e_judgment: np.ndarray | None = None  # index of the entry's judgment in the qrels' keys
    e_value: np.ndarray | None = None     # fractional grade of the entry (qrels with fractional grades)

    def judged_only(self) -> Ranked:
        """The condensed list (``-J``): documents with a grade >= 0 only, order kept, ranks renumbered."""
        keep = self.e_rel >= 0
        seg = self.e_seg[keep]
        counts = np.bincount(seg, minlength=len(self.lengths)).astype(np.int64)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        pos = np.arange(seg.size, dtype=np.int64) - starts[seg]
        return Ranked(self.seg_run, self.seg_topic, counts, seg, pos, self.e_rel[keep], self._judgments(keep),
                      self._values(keep))

    def _judgments(self, keep: np.ndarray) -> np.ndarray | None:
        return None if self.e_judgment is None else self.e_judgment[keep]

    def _values(self, keep: np.ndarray) -> np.ndarray | None:
        return None if self.e_value is None else self.e_value[keep]

    def select(self, segments: np.ndarray) -> Ranked:
        """Only these segments (ascending indices), with their entries; runs keep their numbers."""
        segments = np.asarray(segments, dtype=np.int64)
        # entries are grouped by segment (e_seg non-decreasing): each selected segment's are one slice
        low = np.searchsorted(self.e_seg, segments, side="left")
        counts = np.searchsorted(self.e_seg, segments, side="right") - low
        total = int(counts.sum())
        take = np.repeat(low - (np.cumsum(counts) - counts), counts) + np.arange(total, dtype=np.int64)
        return Ranked(self.seg_run[segments], self.seg_topic[segments], self.lengths[segments],
                      np.repeat(np.arange(segments.size, dtype=np.int64), counts), self.e_pos[take],
                      self.e_rel[take], self._judgments(take), self._values(take))

    def head(self, max_depth: int) -> Ranked:
        """What :func:`rank_runs` gives with ``max_depth`` (``-M``), from its ranking with no depth limit."""
        keep = self.e_pos < max_depth
        return Ranked(self.seg_run, self.seg_topic, np.minimum(self.lengths, max(max_depth, 0)), self.e_seg[keep],
                      self.e_pos[keep], self.e_rel[keep], self._judgments(keep), self._values(keep))

    def without(self, drop: np.ndarray) -> Ranked:
        """The ranking against the qrels less the judgments flagged in ``drop`` (aligned with the qrels'
        keys, as for :meth:`Qrels.without`): those documents are no longer pooled, the rest is unchanged
        (ranks do not depend on judgments). Needs ``e_judgment``, and a ranking made without ``-J``
        (whose ranks would depend on the judgments)."""
        if self.e_judgment is None:
            raise ValueError("this ranking does not record its entries' judgments")
        keep = ~np.asarray(drop, dtype=bool)[self.e_judgment]
        return Ranked(self.seg_run, self.seg_topic, self.lengths, self.e_seg[keep], self.e_pos[keep],
                      self.e_rel[keep], self.e_judgment[keep], self._values(keep))


_BLOCK = 1 << 16  # lines handled together where a whole-array temporary would be large


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """``np.unique(values)`` of a 1-d array, without importing ``numpy.ma`` (numpy 2's ``unique`` does on
    its first call: a tenth of the command line's start-up)."""
    ordered = np.sort(values)
    if ordered.size < 2:
        return ordered
    return ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]


def _sort_key(topic: np.ndarray, score: np.ndarray, base: int) -> np.ndarray:
    """uint64 ``(segment = base + topic, score descending as float32)``: ascending keys give trec_eval's
    order but for ties. The score's float32 bits are made order-preserving (-0.0 folded into +0.0) and
    reversed. Computed a block at a time (small temporaries)."""
    key = np.empty(topic.size, dtype=np.uint64)
    for start in range(0, topic.size, _BLOCK * 16):
        part = slice(start, start + _BLOCK * 16)
        bits = score[part].astype(np.float32)
        bits += np.float32(0.0)
        bits = bits.view(np.uint32)
        flip = bits >> np.uint32(31)          # 1 for negative scores
        flip ^= np.uint32(1)
        flip *= np.uint32(0x7FFFFFFF)         # non-negative: 0x7FFFFFFF - bits; negative: bits as they are
        bits ^= flip
        out = key[part]
        out[:] = topic[part]
        if base:
            out += np.uint64(base)
        out <<= np.uint64(32)
        out |= bits
    return key


def _break_ties(order: np.ndarray, key: np.ndarray, docno) -> np.ndarray:
    """Within runs of equal keys, order rows by docno descending (trec_eval's ``strcmp`` tie-break);
    ``order`` is changed in place. The sorted keys are seen a block at a time (no sorted copy)."""
    tied = [np.zeros(0, dtype=np.int64)]
    for start in range(0, order.size, _BLOCK):
        block = key[order[start: start + _BLOCK + 1]]
        tied.append(start + np.flatnonzero(block[1:] == block[:-1]))
    same = np.concatenate(tied)  # positions p where sorted lines p and p + 1 tie
    if not same.size:
        return order
    import pyarrow as pa
    import pyarrow.compute as pc

    from workbench.formats.arrays import from_numpy, to_numpy

    pos = np.union1d(same, same + 1)
    starts_group = np.concatenate(([True], ~np.isin(pos[1:] - 1, same)))
    group = np.cumsum(starts_group)
    rows = order[pos]
    table = pa.table([from_numpy(group), docno.take(from_numpy(rows))], names=["g", "d"])
    perm = pc.sort_indices(table, sort_keys=[("g", "ascending"), ("d", "descending")])
    order[pos] = rows[to_numpy(perm)]
    return order


def _prepare(qrels: Qrels, r: int, run) -> tuple:
    """Rank one run's lines whose topic the qrels have (run ``r``'s segments are ``r * n_topics + topic``):
    its number of lines, lines per qrels topic, and for its judged lines in rank order their position
    in the run's sorted lines, their judgment (index into ``qrels.keys``) and their segment."""
    from evaluation.engine.join import match, run_columns
    from workbench.formats.arrays import from_numpy

    topic, docno, score, hashes = run_columns(qrels, run)
    rows, judgments = match(qrels, topic, docno, hashes)
    if not (topic >= 0).all():
        idx = np.flatnonzero(topic >= 0)
        topic, score, rows = topic[idx], score[idx], np.searchsorted(idx, rows)
        docno = docno.take(from_numpy(idx))
    counts = np.zeros(len(qrels.topics), dtype=np.int64)
    for start in range(0, topic.size, _BLOCK * 16):  # bincount copies to intp: a block at a time
        counts += np.bincount(topic[start: start + _BLOCK * 16], minlength=len(qrels.topics))
    hit, ranked_rows = _judged_in_rank_order(topic, score, docno, rows, counts)
    judgments = judgments[np.searchsorted(rows, ranked_rows)]  # rows ascend (match returns them so)
    segment = topic[ranked_rows].astype(np.int64) + r * len(qrels.topics)
    return int(topic.size), counts, hit, judgments, segment


def _chunks(topic: np.ndarray) -> list[tuple[int, int]]:
    """Line ranges that can be sorted on their own: when each topic's lines are contiguous (as in almost
    every run file), whole topics about a million lines at a time; otherwise the whole run."""
    if not topic.size:
        return []
    change = np.flatnonzero(topic[1:] != topic[:-1]) + 1
    if change.size + 1 != sorted_distinct(topic[np.concatenate(([0], change))]).size:
        return [(0, int(topic.size))]  # some topic's lines are not contiguous
    bounds, start = [], 0
    for end in [*change.tolist(), int(topic.size)]:
        if end - start >= _BLOCK * 4 or end == topic.size:
            bounds.append((start, end))
            start = end
    return bounds


def _judged_in_rank_order(topic: np.ndarray, score: np.ndarray, docno, rows: np.ndarray, counts: np.ndarray
                          ) -> tuple[np.ndarray, np.ndarray]:
    """Places in the run's sorted order (segments ascending, trec_eval's order within) of the judged
    ``rows``, ascending, and those rows. Sorted a chunk of whole topics at a time (:func:`_chunks`): a
    line's place is where its topic starts in the sorted run plus its place among its topic's lines, so no
    sort key, order or inverse permutation of every line is ever held at once."""
    topic_start = np.cumsum(counts) - counts
    judged = np.zeros(topic.size, dtype=bool)
    judged[rows] = True
    hits, ranked = [], []
    for a, b in _chunks(topic):
        key = _sort_key(topic[a:b], score[a:b], 0)
        order = _break_ties(np.argsort(key, kind="stable"), key, docno.slice(a, b - a))
        del key
        local = np.flatnonzero(judged[a:b][order])
        chunk_counts = np.bincount(topic[a:b], minlength=counts.size)
        chunk_start = np.cumsum(chunk_counts) - chunk_counts
        line = order[local] + a
        t = topic[line]
        hits.append(topic_start[t] + local - chunk_start[t])
        ranked.append(line)
    if not hits:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    hit, line = np.concatenate(hits).astype(np.int64), np.concatenate(ranked).astype(np.int64)
    by_rank = np.argsort(hit, kind="stable")
    return hit[by_rank], line[by_rank]


def rank_runs(qrels: Qrels, runs: list, *, max_depth: int | None = None, judged_only: bool = False) -> Ranked:
    """Rank every run against ``qrels``: a frame (``qid``, ``docno``, ``score``) or a
    :class:`workbench.formats.RunArrays`.

    Raises ``ValueError`` when a judged document appears twice in the ranked part of a topic.
    """
    n_topics = max(len(qrels.topics), 1)
    parts = [_prepare(qrels, r, run) for r, run in enumerate(runs)]
    if not parts:
        empty = np.zeros(0, np.int64)
        return Ranked(empty, empty, empty, empty, empty, np.zeros(0, np.int32))
    # segment keys start with the run, so the runs' sorted lines, one run after another, are the
    # order of all lines: each run is sorted on its own (in _prepare), never all lines at once
    offsets = np.cumsum([0] + [p[0] for p in parts])
    counts = np.concatenate([np.pad(p[1], (0, n_topics - p[1].size)) for p in parts])
    hit = np.concatenate([p[2] + offset for p, offset in zip(parts, offsets[:-1], strict=True)])
    e_judgment = np.concatenate([p[3] for p in parts])
    e_segment = np.concatenate([p[4] for p in parts])
    del parts
    segs = np.flatnonzero(counts)                  # (run, topic) segments, in sorted order
    lengths = counts[segs]
    first = np.cumsum(lengths) - lengths           # sorted position where each segment starts
    seg_index = np.searchsorted(segs, e_segment)
    e_pos = hit - first[seg_index]
    if max_depth is not None:
        keep = e_pos < max_depth
        seg_index, e_pos, e_judgment = seg_index[keep], e_pos[keep], e_judgment[keep]
        lengths = np.minimum(lengths, max(max_depth, 0))
    _check_duplicates(qrels, seg_index, e_judgment)
    e_grade = qrels.grades[e_judgment]
    e_rel = np.where(e_grade >= 0, e_grade, UNJUDGED).astype(np.int32)
    ranked = Ranked(seg_run=segs // n_topics, seg_topic=segs % n_topics, lengths=lengths.astype(np.int64),
                    e_seg=seg_index.astype(np.int64), e_pos=e_pos.astype(np.int64), e_rel=e_rel,
                    e_judgment=e_judgment.astype(np.int64),
                    e_value=None if qrels.values is None else qrels.values[e_judgment])
    return ranked.judged_only() if judged_only else ranked


def _check_duplicates(qrels: Qrels, seg_index: np.ndarray, judgment: np.ndarray) -> None:
    """Judged documents retrieved twice for a topic: one judgment twice in a segment (unjudged repeats
    are the readers' job)."""
    if seg_index.size < 2:
        return
    keys = np.sort(seg_index.astype(np.int64) * len(qrels.keys) + judgment)
    dup = np.flatnonzero(keys[1:] == keys[:-1])
    if dup.size:
        key = int(qrels.keys[int(keys[dup[0]]) % len(qrels.keys)])
        raise ValueError(f"document {qrels.vocabulary[key % qrels.n_docs].as_py()!r} appears more than once "
                         f"in topic {qrels.topics[key // qrels.n_docs]!r} of a run")


@dataclass(frozen=True)
class Block:
    """Segments as a padded ``(rows, width)`` matrix of their pooled entries: rank ``pos`` (``PAD_POS``
    beyond) and ``rel`` (``PAD`` beyond), plus each row's length ``n``."""

    rows: np.ndarray     # segment indices
    lengths: np.ndarray  # documents ranked per row (n)
    pos: np.ndarray      # int64 (rows, width)
    rel: np.ndarray      # int32 (rows, width)
    val: np.ndarray | None = None  # float64 (rows, width): fractional grades (0 beyond), if the qrels have them

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
    for b in sorted_distinct(bucket):
        rows = np.flatnonzero(bucket == b)
        c = counts[rows]
        width = max(int(c.max()), 1)
        pos = np.full((rows.size, width), PAD_POS, dtype=np.int64)
        rel = np.full((rows.size, width), PAD, dtype=np.int32)
        total = int(c.sum())
        val = None if ranked.e_value is None else np.zeros((rows.size, width))
        if total:
            row_of = np.repeat(np.arange(rows.size), c)
            col = np.arange(total) - np.repeat(np.cumsum(c) - c, c)
            src = np.repeat(starts[rows], c) + col
            pos[row_of, col] = ranked.e_pos[src]
            rel[row_of, col] = ranked.e_rel[src]
            if val is not None:
                val[row_of, col] = ranked.e_value[src]
        out.append(Block(rows=rows, lengths=ranked.lengths[rows], pos=pos, rel=rel, val=val))
    return out

"""Warnings of the run checker: where the file's own ranking is not the one trec_eval will use.

trec_eval 9.0.8 ignores the rank column. It ranks each topic by score descending, scores compared as
32-bit floats (it stores them as C ``float``), ties broken by docno descending (``strcmp``). Each kind
of disagreement gives at most one warning per file, ``path:LINE: ...`` at its first line:

- **rank vs score**: following the rank column, a score goes up;
- **tie order**: documents whose scores are equal (as 32-bit floats) follow each other in the rank
  column in another order than docno descending;
- **32-bit collisions**: two scores differ as 64-bit floats but not as 32-bit floats, so trec_eval
  ties them although the file did not.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from workbench.formats.columns import LineMap


def run_warnings(name: str, codes: np.ndarray, qids: list[str], docno: pa.ChunkedArray, rank: np.ndarray,
                 score: np.ndarray, lines: LineMap) -> list[str]:
    """The warnings of one run (codes: topic codes into ``qids``; arrays in file order)."""
    found = []
    by_rank = _grouped_order(codes, rank, increasing=True)
    before, after = by_rank[:-1], by_rank[1:]
    same_topic = codes[before] == codes[after]
    topics = len(qids)

    rises = np.flatnonzero(same_topic & (score[after] > score[before]))
    if rises.size:
        row, above, count = _first(rises, before, after, codes)
        found.append(f"{name}:{lines.line(row)}: the rank column disagrees with the score order in {count} of "
                     f"{topics} topics (topic {qids[codes[row]]!r}: rank {rank[row]} has score "
                     f"{float(score[row])!r}, higher than rank {rank[above]} with {float(score[above])!r}); "
                     "evaluation ranks by score")

    with np.errstate(over="ignore"):  # beyond float32's range: inf, as in trec_eval
        single = score.astype(np.float32)
    tied = np.flatnonzero(same_topic & (single[after] == single[before]))
    if tied.size:
        first_docs = docno.take(pa.array(before[tied]))
        second_docs = docno.take(pa.array(after[tied]))
        wrong = tied[np.asarray(pc.less(first_docs, second_docs).to_numpy(zero_copy_only=False), dtype=bool)]
        if wrong.size:
            row, above, count = _first(wrong, before, after, codes)
            found.append(f"{name}:{lines.line(row)}: tied scores are ranked in another order than trec_eval's "
                         f"tie-break (docno descending) in {count} of {topics} topics (topic "
                         f"{qids[codes[row]]!r}: rank {rank[above]} {_take(docno, above)!r} and rank {rank[row]} "
                         f"{_take(docno, row)!r}, scores equal as 32-bit floats); evaluation breaks ties by "
                         "docno")

    by_score = _grouped_order(codes, score, increasing=False)
    high, low = by_score[:-1], by_score[1:]
    collide = np.flatnonzero((codes[high] == codes[low]) & (score[high] != score[low])
                             & (single[high] == single[low]))
    if collide.size:
        row, other, count = _first(collide, high, low, codes)
        found.append(f"{name}:{lines.line(row)}: {collide.size} pairs of scores in {count} topics differ as "
                     "64-bit floats but are equal as 32-bit floats, so trec_eval ties them (topic "
                     f"{qids[codes[row]]!r}: {float(score[other])!r} and {float(score[row])!r})")
    return found


def _first(pairs: np.ndarray, left: np.ndarray, right: np.ndarray, codes: np.ndarray) -> tuple[int, int, int]:
    """Of the flagged pairs, the one whose later row comes first in the file: (that row, its partner,
    how many topics have a flagged pair)."""
    later = np.maximum(left[pairs], right[pairs])
    i = int(np.argmin(later))
    row = int(later[i])
    partner = int(left[pairs[i]] if right[pairs[i]] == row else right[pairs[i]])
    return row, partner, int(np.unique(codes[later]).size)


def _take(column: pa.ChunkedArray, row: int) -> str:
    return column.take(pa.array([row]))[0].as_py()


def _grouped_order(codes: np.ndarray, values: np.ndarray, *, increasing: bool) -> np.ndarray:
    """Rows ordered by topic then ``values`` (stable); the file order itself when it already is (no sort)."""
    n = codes.size
    if n < 2:
        return np.arange(n)
    blocks = np.count_nonzero(codes[1:] != codes[:-1]) + 1
    if blocks == np.count_nonzero(np.bincount(codes)):  # each topic's lines are together
        same = codes[1:] == codes[:-1]
        step = values[1:] >= values[:-1] if increasing else values[1:] <= values[:-1]
        if np.all(step | ~same):
            return np.arange(n)
    return np.lexsort((values if increasing else -values, codes))

"""Runs for the evaluation engine: trec_eval's reading rules, the checker's messages, arrays only.

:func:`read_run_arrays` checks what ``read_run(..., max_depth=None, check_warnings=False,
trec_eval_rules=True)`` checks and words problems the same way, but builds no pandas frame and no Python
string per line. A clean file (see :mod:`workbench.formats.columns`) is parsed batch by batch while
streaming, each batch reduced at once to what the engine keeps (topic codes, docnos, scores, docno
hashes), so the file is never held whole, parsed, in memory; any other file takes the checked path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from workbench.formats import checks
from workbench.formats.arrays import from_numpy, to_numpy
from workbench.formats.chunks import CHUNK_SIZE, parallel_chunks
from workbench.formats.columns import Column, LineMap, NotClean, read_columns
from workbench.formats.errors import Problems
from workbench.formats.runs import _check_duplicates, _check_empty, _check_scores, _describe
from workbench.formats.sources import Source, display_name, is_path, read_buffer

#: the run's six fields (the rank is only checked: an integer)
ARRAY_COLUMNS = (Column("qid", pa.string()), Column("q0", pa.string(), keep=False),
                 Column("docno", pa.string()), Column("rank", pa.int64()),
                 Column("score", pa.float64()), Column("tag", pa.string()))


@dataclass(frozen=True)
class RunArrays:
    """One run as arrays, lines in file order: what the evaluation engine needs, nothing more.

    ``topics`` are the distinct qids sorted like ``strcmp``, ``topic`` the code (int32) of each line's
    qid in ``topics``, ``docno`` arrow strings (chunked), ``score`` float32 (read as a double, then
    stored as a C ``float``, as trec_eval 9.0.8 does), ``docno_hash`` the uint64
    :func:`~workbench.formats.checks.string_hashes` of ``docno``. ``tag`` is the last line's (trec_eval).
    """

    tag: str
    topics: list[str]
    topic: np.ndarray
    docno: pa.ChunkedArray
    score: np.ndarray
    docno_hash: np.ndarray
    name: str


def read_run_arrays(source: Source, *, name: str | None = None, max_problems: int = 20) -> RunArrays:
    """Read a run the way trec_eval 9.0.8 does, as arrays; raise :class:`FormatError` on bad input.

    Fields after the tag are ignored, the tag is the last line's; every line is checked for its
    columns, an integer rank and a finite score, and no docno may appear twice in a topic.

    >>> import io
    >>> run = read_run_arrays(io.StringIO("302 Q0 D1 1 2.5 a\\n301 Q0 D2 1 1.5 b\\n"))
    >>> run.tag, run.topics, run.topic.tolist(), run.docno.to_pylist(), run.score.tolist()
    ('b', ['301', '302'], [1, 0], ['D1', 'D2'], [2.5, 1.5])
    >>> float(read_run_arrays(io.StringIO("1 Q0 D1 1 0.1 a\\n")).score[0]) == float(np.float32(0.1))
    True
    """
    name = display_name(source, name)
    problems = Problems(name, max_problems)
    data = read_buffer(source, populate=False, kind="runs")
    path = source if is_path(source) else None
    try:
        tag, qids, codes, docno, score, hashes = _stream(data, path)
        lines = LineMap(data)
    except NotClean:
        table, lines = read_columns(data, ARRAY_COLUMNS, problems, _describe, extra_fields=True, path=path)
        _check_empty(table, problems)
        codes, qids = checks.sorted_categories(table.column("qid"))
        docno, score = table.column("docno"), to_numpy(table.column("score"))
        hashes = checks.string_hashes(docno)
        tag = table.column("tag")[-1].as_py() if table.num_rows else ""
        _check_scores(score, lines, problems)
        score = _float32(score)
    _check_duplicates(codes, qids, docno, lines, problems, hashes)
    problems.raise_if_any()
    return RunArrays(tag=tag, topics=qids, topic=codes, docno=docno, score=score, docno_hash=hashes,
                     name=name)


def _float32(score: np.ndarray) -> np.ndarray:
    """C's double -> float conversion (beyond float's range: +-inf, as in trec_eval)."""
    with np.errstate(over="ignore"):
        return score.astype(np.float32)


class _Growing:
    """A numpy array filled batch by batch, its capacity guessed from the file size (grown if short), so
    that no list of parts and no concatenated copy of them are ever held together."""

    def __init__(self, dtype) -> None:
        self.values = np.empty(0, dtype=dtype)
        self.size = 0

    def add(self, part: np.ndarray, expected: int) -> None:
        end = self.size + part.size
        if end > self.values.size:
            grown = np.empty(max(end, expected, self.values.size + self.values.size // 4), self.values.dtype)
            grown[: self.size] = self.values[: self.size]
            self.values = grown
        self.values[self.size: end] = part
        self.size = end

    def result(self) -> np.ndarray:
        return self.values[: self.size]


def _codes(qid: pa.Array, position: dict[str, int]) -> np.ndarray:
    """Codes of a batch's qids in ``position`` (extended with new ones): the qids of a run come in long
    runs of one value, so only the first qid of each run is looked at in Python."""
    if not len(qid):
        return np.zeros(0, dtype=np.int32)
    change = pc.indices_nonzero(pc.not_equal(qid.slice(1), qid.slice(0, len(qid) - 1)))
    starts = np.concatenate(([0], to_numpy(change).astype(np.int64) + 1))
    if starts.size * 4 > len(qid):  # no long runs: encode each distinct value
        encoded = pc.dictionary_encode(qid)
        remap = np.array([position.setdefault(q, len(position)) for q in encoded.dictionary.to_pylist()],
                         dtype=np.int32)
        return remap[to_numpy(encoded.indices)]
    firsts = qid.take(from_numpy(starts)).to_pylist()
    values = np.array([position.setdefault(q, len(position)) for q in firsts], dtype=np.int32)
    return np.repeat(values, np.diff(np.append(starts, len(qid))))


def _chunk_arrays(table: pa.Table) -> tuple:
    """What a chunk of a clean run gives (in a worker thread): qids, docnos, float32 scores, docno hashes,
    its last tag."""
    docno = table.column("docno")
    score = to_numpy(table.column("score"))
    if not np.isfinite(score).all():
        raise NotClean  # the checked path words it
    return (table.column("qid").combine_chunks(), docno, _float32(score), checks.string_hashes(docno),
            table.column("tag")[-1].as_py())


def _stream(data, path) -> tuple:
    """The clean file's arrays, chunk by chunk (raises :class:`NotClean` for any other file)."""
    total = len(data)
    position: dict[str, int] = {}  # qid -> code, in order of first appearance
    codes, scores, hashes = _Growing(np.int32), _Growing(np.float32), _Growing(np.uint64)
    docnos, tag, expected = [], "", 0
    for qid, docno, score, hashed, last_tag in parallel_chunks(data, ARRAY_COLUMNS, _chunk_arrays, path=path):
        tag = last_tag  # the tag is the last line's
        if not expected:  # lines in the file, guessed from the first chunk (about one chunk of bytes)
            expected = int(total / CHUNK_SIZE * len(score) * 1.02) + len(score)
        codes.add(_codes(qid, position), expected)
        scores.add(score, expected)
        hashes.add(hashed, expected)
        docnos.extend(docno.chunks)
    qids = sorted(position)
    order = np.empty(len(qids), dtype=np.int32)
    order[[position[q] for q in qids]] = np.arange(len(qids), dtype=np.int32)
    return (tag, qids, order[codes.result()], pa.chunked_array(docnos, pa.string()), scores.result(),
            hashes.result())

"""Small, clean qrels and run files read and ranked in plain Python: ``trec_eval`` on them without pyarrow.

Importing pyarrow (and building ``pyarrow.compute``'s function wrappers) costs more than the whole
evaluation of a file of a few thousand lines, and most command-line uses are such files. For them
:mod:`evaluation.engine.cli` asks this module first; it answers only when it is sure that the readers of
:mod:`workbench.formats` would read the file without a problem, a warning or a normalisation, and gives the
same :class:`~evaluation.engine.qrels.Qrels` numbers and the same :class:`~evaluation.engine.ranking.Ranked`
arrays as :func:`~evaluation.engine.ranking.rank_runs` would; otherwise (None) the command line takes its
usual path, which finds and words every problem. So a file is taken here only if it is:

- a plain file (not gzip, not standard input) of at most :data:`MAX_BYTES`, within the reader's limits;
- valid UTF-8 without a byte order mark, no control character but the blanks the readers normalise
  (fields are separated by runs of spaces, tabs, CR, VT or FF, which may also start or end a line);
- lines (blank lines skipped) of exactly 4 fields for qrels, at least 6 for a run (those after the tag are
  ignored, as trec_eval ignores them), grades and ranks plain integers
  (``0``, ``-1``, ``12``: no sign ``+``, no leading zero), scores plain finite decimals (``1.5``, ``-2``,
  ``3e-05``);
- at least one line, no docno twice in a topic.

Ranking is trec_eval 9.0.8's (see :mod:`evaluation.engine.ranking`): per topic, score as a 32-bit float
descending, then docno descending (``strcmp``: Python compares ``str`` by code point, the order of UTF-8
bytes); ``-M`` keeps the first documents of that order, ``-J`` the judged ones.
"""

from __future__ import annotations

import os
import re
from typing import NamedTuple

import numpy as np

from evaluation.engine.qrels import Qrels
from evaluation.engine.ranking import UNJUDGED, Ranked

#: the largest file read here; beyond it pyarrow's readers are the faster (see docs/benchmarks.md, Start-up)
MAX_BYTES = 1 << 20

_BLANKS = str.maketrans("\t\r\x0b\x0c", "    ")  # what workbench.formats.columns.normalise makes spaces of
_UNSAFE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")  # control characters other than those and newlines
_DECIMAL = re.compile(r"-?[0-9]{1,30}(?:\.[0-9]{1,30})?(?:[eE][-+]?[0-9]{1,3})?")


class SmallRun(NamedTuple):
    """A run's lines: per topic id, its (docno, score as a 32-bit float) in file order; the last line's tag."""

    tag: str
    topics: dict[str, list[tuple[str, float]]]


def _integer(text: str) -> bool:
    """A plain integer within int64: ``0``, ``-1``, ``12`` (no ``+``, no leading zero)."""
    digits = text[1:] if text.startswith("-") else text
    return digits.isascii() and digits.isdigit() and len(digits) <= 18 and (digits[0] != "0" or text == "0")


def _text(path: str, kind: str) -> str | None:
    """The content of a small, plain, UTF-8 file without a byte order mark or an unusual control character,
    or None."""
    from workbench.formats import limits

    if path == "-" or path.endswith(".gz"):
        return None
    try:  # a FIFO or a device is left unread: the usual path reads it
        if not os.path.isfile(path) or os.stat(path).st_size > min(MAX_BYTES, limits.current().bytes_for(kind)):
            return None
        with open(path, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
        text = data.decode("utf-8")
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        return None
    if len(data) > MAX_BYTES or data[:2] == b"\x1f\x8b" or text.startswith("\ufeff") or _UNSAFE.search(text):
        return None
    return text


def _lines(path: str, kind: str, n_fields: int, more: bool = False) -> list[list[str]] | None:
    """The fields of every non-blank line (``n_fields`` of them, or more if ``more``), or None when the file
    is not one for here."""
    text = _text(path, kind)
    if text is None:
        return None
    rows = []
    for line in text.translate(_BLANKS).split("\n"):
        fields = [field for field in line.split(" ") if field]
        if not fields:
            continue
        if len(fields) != n_fields and not (more and len(fields) > n_fields):
            return None
        rows.append(fields)
    return rows or None


def read_qrels(path: str) -> Qrels | None:
    """The qrels of a small, clean file (integer grades), or None (see the module docstring)."""
    rows = _lines(path, "qrels", 4)
    if rows is None or not all(_integer(rel) for _, _, _, rel in rows):
        return None
    topics = sorted({qid for qid, _, _, _ in rows})
    topic_code = {qid: code for code, qid in enumerate(topics)}
    doc_code: dict[str, int] = {}
    tcode = np.fromiter((topic_code[qid] for qid, _, _, _ in rows), dtype=np.int64, count=len(rows))
    dcode = np.fromiter((doc_code.setdefault(docno, len(doc_code)) for _, _, docno, _ in rows), dtype=np.int64,
                        count=len(rows))
    grades = np.fromiter((int(rel) for _, _, _, rel in rows), dtype=np.int64, count=len(rows))
    try:
        return Qrels.from_codes(topics, list(doc_code), tcode, dcode, grades)
    except ValueError:  # a docno judged twice: the reader words it
        return None


def read_run(path: str) -> SmallRun | None:
    """The lines of a small, clean run file, or None (see the module docstring)."""
    rows = _lines(path, "runs", 6, more=True)
    if rows is None or not all(_integer(row[3]) and _DECIMAL.fullmatch(row[4]) for row in rows):
        return None
    with np.errstate(over="ignore"):  # C's double -> float (beyond float's range: inf), as the reader
        scores = np.array([float(row[4]) for row in rows], dtype=np.float64)
        if not np.isfinite(scores).all():
            return None
        scores = scores.astype(np.float32).tolist()
    topics: dict[str, list[tuple[str, float]]] = {}
    seen: set[tuple[str, str]] = set()
    for (qid, _, docno, *_), score in zip(rows, scores, strict=True):
        if (qid, docno) in seen:  # a docno twice in a topic: the reader refuses it
            return None
        seen.add((qid, docno))
        topics.setdefault(qid, []).append((docno, score))
    return SmallRun(tag=rows[-1][5], topics=topics)


def rank(qrels: Qrels, run: SmallRun, *, max_depth: int | None = None, judged_only: bool = False) -> Ranked:
    """What :func:`~evaluation.engine.ranking.rank_runs` gives for this one run against ``qrels``."""
    judgment = {}
    n_docs = qrels.n_docs
    docnos = qrels.docnos
    for index, key in enumerate(qrels.keys.tolist()):
        judgment[(key // n_docs, docnos[key % n_docs])] = index
    grades = qrels.grades.tolist()
    seg_topic, lengths, e_seg, e_pos, e_rel, e_judgment = [], [], [], [], [], []
    for t, qid in enumerate(qrels.topics):
        lines = run.topics.get(qid)
        if not lines:
            continue
        ordered = sorted(lines, key=lambda line: line[0], reverse=True)  # docno descending ...
        ordered.sort(key=lambda line: line[1], reverse=True)  # ... within score descending (stable)
        if max_depth is not None:
            ordered = ordered[: max(max_depth, 0)]
        segment = len(lengths)
        seg_topic.append(t)
        lengths.append(len(ordered))
        for pos, (docno, _) in enumerate(ordered):
            found = judgment.get((t, docno))
            if found is not None:
                e_seg.append(segment)
                e_pos.append(pos)
                e_rel.append(grades[found] if grades[found] >= 0 else UNJUDGED)
                e_judgment.append(found)
    ranked = Ranked(seg_run=np.zeros(len(lengths), dtype=np.int64), seg_topic=np.array(seg_topic, dtype=np.int64),
                    lengths=np.array(lengths, dtype=np.int64), e_seg=np.array(e_seg, dtype=np.int64),
                    e_pos=np.array(e_pos, dtype=np.int64), e_rel=np.array(e_rel, dtype=np.int32),
                    e_judgment=np.array(e_judgment, dtype=np.int64))
    return ranked.judged_only() if judged_only else ranked

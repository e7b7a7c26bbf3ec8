"""A machine judge's labels made elsewhere, as files: TREC qrels (grades, e.g. UMBRELA's output) or the
probability CSVs LARA writes, with a header row:

- ``topic_id,doc_id,annotation,prob_yes,prob_no``: the grade is ``annotation``, the probability of relevance
  ``prob_yes``;
- ``topic_id,doc_id,prob_0,...,prob_k``: the grade is the most probable one (the lower of a tie), the
  probability of relevance the share of the grades from ``relevant_from`` up.

Django-free. The whole file is checked before anything is returned: every problem is one line
``file:LINE: what`` (:class:`~workbench.formats.errors.FormatError`), within the limits every qrels file
has (``workbench.formats.limits``). The file's sha256 (of its content, decompressed) comes with the labels.
"""

from __future__ import annotations

import csv
import hashlib
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from workbench.formats.errors import FormatError, Problems
from workbench.formats.identifiers import identifier_problem
from workbench.formats.qrels import read_qrels
from workbench.formats.sources import Source, display_name, read_buffer

__all__ = ["LABEL_FORMATS", "MachineLabels", "read_machine_labels"]

#: the formats a labels file may have, as :attr:`MachineLabels.format` names them
LABEL_FORMATS = ("qrels", "annotation", "probabilities")
_ANNOTATION = ["topic_id", "doc_id", "annotation", "prob_yes", "prob_no"]


@dataclass
class MachineLabels:
    """One label per (topic, document), in file order; ``probability`` is None where the file has none."""

    format: str
    sha256: str
    qid: list[str] = field(default_factory=list)
    docno: list[str] = field(default_factory=list)
    grade: list[int] = field(default_factory=list)
    probability: list[float | None] = field(default_factory=list)
    #: each label's line in the file
    line: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.qid)


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _header_format(header: list[str]) -> tuple[str, str]:
    """The CSV format its header names, or "" and why not."""
    names = [h.strip().lower() for h in header]
    if names == _ANNOTATION:
        return "annotation", ""
    k = len(names) - 2
    if names[:2] == ["topic_id", "doc_id"] and k >= 2 and names[2:] == [f"prob_{g}" for g in range(k)]:
        return "probabilities", ""
    return "", (f"the header must be {','.join(_ANNOTATION)} or topic_id,doc_id,prob_0,...,prob_k, "
                f"not {','.join(header)[:120]!r}")


class _Rows:
    """The checks of one CSV row at a time, collecting problems and labels."""

    def __init__(self, kind: str, grades: Sequence[int] | None, relevant_from: int, problems: Problems) -> None:
        self.kind, self.grades, self.relevant_from, self.problems = kind, grades, relevant_from, problems
        self.labels = MachineLabels(kind, "")
        self.seen: dict[tuple[str, str], int] = {}

    def add(self, number: int, row: list[str], width: int) -> None:
        if len(row) != width:
            self.problems.add(number, f"{len(row)} fields, the header has {width}")
            return
        qid, docno = row[0].strip(), row[1].strip()
        why = identifier_problem("qid", qid) or identifier_problem("docno", docno)
        if why:
            self.problems.add(number, why)
            return
        values = [_number(v) for v in row[2:]]
        grade, probability, why = self._grade(row[2:], values)
        if not why and self.grades is not None and grade not in self.grades:
            why = f"grade {grade} is not one of the collection's grades ({', '.join(map(str, self.grades))})"
        if not why and (qid, docno) in self.seen:
            why = f"document {docno!r} is labelled more than once for topic {qid!r} (first at line " \
                  f"{self.seen[(qid, docno)]})"
        if why:
            self.problems.add(number, why)
            return
        self.seen[(qid, docno)] = number
        self.labels.line.append(number)
        for name, value in (("qid", qid), ("docno", docno), ("grade", grade), ("probability", probability)):
            getattr(self.labels, name).append(value)

    def _grade(self, texts: list[str], values: list[float | None]) -> tuple[int, float | None, str]:
        if self.kind == "annotation":
            annotation, yes = values[0], values[1]
            if annotation is None or annotation != int(annotation):
                return 0, None, f"annotation {texts[0]!r} is not an integer grade"
            if texts[1].strip() == "":
                return int(annotation), None, ""
            if yes is None or not 0 <= yes <= 1:
                return 0, None, f"prob_yes {texts[1]!r} is not a probability (0 to 1)"
            return int(annotation), yes, ""
        bad = next((i for i, v in enumerate(values) if v is None or v < 0), None)
        if bad is not None:
            return 0, None, f"prob_{bad} {texts[bad]!r} is not a probability (a number, at least 0)"
        total = sum(values)
        if total <= 0:
            return 0, None, "the probabilities are all 0"
        grade = max(range(len(values)), key=lambda g: (values[g], -g))
        return grade, sum(values[self.relevant_from:]) / total, ""


def _read_csv(text: str, name: str, grades, relevant_from: int, max_problems: int) -> MachineLabels:
    problems = Problems(name, max_problems)
    reader = csv.reader(io.StringIO(text))
    header = next(reader, None)
    kind, why = _header_format(header or [])
    if not kind:
        raise FormatError([f"{name}:1: {why}"])
    rows = _Rows(kind, grades, relevant_from, problems)
    for row in reader:
        if row and any(v.strip() for v in row):
            rows.add(reader.line_num, row, len(header))
    if not rows.labels.qid and not problems:
        problems.add(2, "no labels after the header")
    problems.raise_if_any()
    return rows.labels


def _read_trec(data: bytes, name: str, grades, max_problems: int) -> MachineLabels:
    frame = read_qrels(io.BytesIO(data), name=name, max_problems=max_problems)
    # the frame is in file order, one label a line that is not blank
    labels = MachineLabels("qrels", "", frame["qid"].astype(str).tolist(), frame["docno"].astype(str).tolist(),
                           [int(g) for g in frame["rel"]], [None] * len(frame), _label_lines(data)[:len(frame)])
    if grades is not None:
        bad = [i for i, g in enumerate(labels.grade) if g not in grades]
        if bad:
            problems = Problems(name, max_problems)
            for i in bad[:max_problems]:
                problems.add(labels.line[i], f"grade {labels.grade[i]} is not one of the collection's grades "
                                       f"({', '.join(map(str, grades))})")
            problems.total = len(bad)
            problems.raise_if_any()
    return labels


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _label_lines(data: bytes) -> list[int]:
    return [n for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]


def read_machine_labels(source: Source, *, name: str | None = None, grades: Sequence[int] | None = None,
                        relevant_from: int = 1, max_problems: int = 20) -> MachineLabels:
    """Read a labels file (its format told by its first line: a CSV header, else TREC qrels); with ``grades``,
    every grade must be one of them. :class:`FormatError` lists every problem.

    >>> labels = read_machine_labels(io.StringIO("topic_id,doc_id,prob_0,prob_1,prob_2\\n7,d1,0.1,0.3,0.6\\n"))
    >>> labels.format, labels.grade, round(labels.probability[0], 2)
    ('probabilities', [2], 0.9)
    """
    shown = display_name(source, name)
    data = bytes(read_buffer(source, kind="qrels"))
    digest = hashlib.sha256(data).hexdigest()
    nul = data.find(b"\x00")
    if nul >= 0:
        raise FormatError([f"{shown}:{_line_of(data, nul)}: a NUL character (\\0)"])
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FormatError([f"{shown}:{_line_of(data, exc.start)}: not UTF-8 text"]) from None
    first = next((line for line in text.splitlines() if line.strip()), "")
    if first.lower().lstrip().startswith("topic_id"):
        labels = _read_csv(text, shown, grades, relevant_from, max_problems)
    else:
        labels = _read_trec(data, shown, grades, max_problems)
    labels.sha256 = digest
    return labels

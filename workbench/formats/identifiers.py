"""What a topic id, a docno and a run tag may be, checked by every reader so that SQLite and PostgreSQL
accept and refuse the same files. Django-free.

An identifier is a non-empty string of valid UTF-8 without control characters (NUL, which PostgreSQL
cannot store, and the rest of C0 and DEL), at most ``MAX_LENGTH[kind]`` characters long (the columns'
sizes): qid 64, docno 200, tag 200. Anything else is accepted, ``/ $ % # < > " ' \\`` and any script
included: pages pass identifiers through URL paths (``<path:...>``), plot labels (no maths parsing),
CSV and TREC files safely. TREC files cannot hold whitespace inside a field; topic and document files
in JSONL or TSV can, and it is kept.
"""

from __future__ import annotations

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from workbench.formats.arrays import to_numpy
from workbench.formats.errors import Problems

__all__ = ["MAX_LENGTH", "check_column", "clean_text", "identifier_problem", "text_problem"]

MAX_LENGTH = {"qid": 64, "docno": 200, "tag": 200}
_LABEL = {"qid": "topic id", "docno": "docno", "tag": "run tag"}
_CONTROL = "[\\x00-\\x1f\\x7f]"
_CONTROL_RE = re.compile(_CONTROL)
_SURROGATE_RE = re.compile("[\\ud800-\\udfff]")  # bytes that were not UTF-8, read with surrogateescape


def identifier_problem(kind: str, value: str) -> str | None:
    """What is wrong with one identifier, or None.

    >>> identifier_problem("qid", "x" * 65)
    'topic id is 65 characters long, more than 64'
    >>> identifier_problem("docno", "a/b $c$ <d>") is None
    True
    """
    label = _LABEL[kind]
    if not value:
        return f"empty {label}"
    if _SURROGATE_RE.search(value):
        return f"{label} is not valid UTF-8"
    if len(value) > MAX_LENGTH[kind]:
        return f"{label} is {len(value)} characters long, more than {MAX_LENGTH[kind]}"
    if _CONTROL_RE.search(value):
        return f"{label} {value!r} contains a control character"
    return None


def text_problem(field: str, value: str) -> str | None:
    """What is wrong with a text field (a title, a narrative, a document's text), or None: a NUL, which
    PostgreSQL cannot store (bytes that are not UTF-8 are no problem in text: see :func:`clean_text`)."""
    if "\x00" in value:
        return f"{field} contains a NUL character"
    return None


def clean_text(value: str) -> str:
    """Text read with ``surrogateescape``, its bytes that are not UTF-8 shown as U+FFFD (a latin-1 é in a
    document's text must not stop an import; in an identifier it is refused, since no run could name it).

    >>> clean_text(bytes([99, 97, 102, 0xE9]).decode("utf-8", "surrogateescape"))
    'caf\\ufffd'
    """
    if value.isascii():
        return value
    try:
        value.encode("utf-8")  # fails on exactly the escaped bytes, at C speed
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return value


def check_column(kind: str, column: pa.Array | pa.ChunkedArray, lines, problems: Problems) -> None:
    """Every identifier of a column checked at once (lines: row -> line number, a ``LineMap``)."""
    if len(column) == 0:
        return
    too_long = pc.greater(pc.utf8_length(column), MAX_LENGTH[kind])
    control = pc.match_substring_regex(column, _CONTROL)
    bad = to_numpy(pc.indices_nonzero(pc.or_(too_long, control))).astype(np.int64)
    if not bad.size:
        return
    shown = bad[: problems.cap]
    values = column.take(pa.array(shown)).to_pylist()
    problems.add_many(((lines.line(int(row)), identifier_problem(kind, value))
                       for row, value in zip(shown, values, strict=True)), bad.size)


def clean_value(value):
    """:func:`clean_text` through the strings of a JSON-like value (the extra fields of a record)."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, list | tuple):
        return [clean_value(v) for v in value]
    if isinstance(value, dict):
        return {clean_text(str(k)): clean_value(v) for k, v in value.items()}
    return value

"""Whitespace-separated columns (runs, qrels) into a pyarrow table, fast when the file is clean.

Three paths, each taken only when the one before cannot be:

1. **fast**: the file uses one separator (a single space, or a single tab) and nothing else that is
   whitespace: pyarrow's multithreaded CSV reader parses it as is (:func:`clean_batches` streams it
   batch by batch, for readers that keep only part of each batch).
2. **normalised**: tabs, runs of blanks, blanks at the ends of lines, CR/VT/FF are rewritten to single
   spaces (line numbers are kept: newlines are never touched), then pyarrow parses that.
3. **line by line**: pyarrow refused the normalised text (wrong column count, a value of the wrong
   type, invalid UTF-8). Python walks the lines, records every problem with its line number, and
   builds the table from the good lines so that later checks still see them.

Blank lines are skipped everywhere (trec_eval does the same), so a row is not always line ``row + 1``:
:class:`LineMap` finds the line of any row, lazily, only when a message needs it.
"""

from __future__ import annotations

import contextlib
import mmap
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from workbench.formats.errors import Problems

_INT = re.compile(rb"[+-]?\d+")
_FLOAT = re.compile(rb"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|nan|inf|infinity)", re.IGNORECASE)
_INT64_MAX = 2**63 - 1


@dataclass(frozen=True)
class Column:
    """One whitespace-separated field: its name, its arrow type, and whether the table keeps it."""

    name: str
    type: pa.DataType
    keep: bool = True


def parse_int(raw: bytes) -> int | None:
    if _INT.fullmatch(raw) is None:
        return None
    value = int(raw)
    return value if -_INT64_MAX - 1 <= value <= _INT64_MAX else None


def parse_float(raw: bytes) -> float | None:
    return float(raw) if _FLOAT.fullmatch(raw) is not None else None


class LineMap:
    """Row index -> 1-based line number, for the rows that messages mention.

    Built either from the parsed bytes (row ``r`` is the ``r``-th non-empty line, computed on first
    use) or from an explicit array of line numbers (line-by-line path).
    """

    def __init__(self, data: bytes | mmap.mmap | None = None, lines: np.ndarray | None = None) -> None:
        self._data = data
        self._lines = lines

    def _table(self) -> np.ndarray:
        if self._lines is None:
            raw = np.frombuffer(self._data if self._data is not None else b"", dtype=np.uint8)
            newlines = np.flatnonzero(raw == 10)
            starts = np.concatenate(([0], newlines + 1))
            ends = np.concatenate((newlines, [raw.size]))
            self._lines = np.flatnonzero(ends > starts) + 1
            self._data = None
        return self._lines

    def __call__(self, rows: np.ndarray | Sequence[int]) -> np.ndarray:
        return self._table()[np.asarray(rows, dtype=np.int64)]

    def line(self, row: int) -> int:
        return int(self._table()[row])


def normalise(data: bytes) -> bytes:
    """Every run of blanks (space, tab, CR, VT, FF) -> one space; no blank at either end of a line.

    >>> normalise(b" 1\\tQ0  D1 \\r\\n\\n2 Q0 D2")
    b'1 Q0 D1\\n\\n2 Q0 D2'
    """
    data = data.translate(_BLANKS)
    while b"  " in data:
        data = data.replace(b"    ", b" ").replace(b"  ", b" ")
    data = data.replace(b"\n ", b"\n").replace(b" \n", b"\n")
    if data.startswith(b" "):
        data = data[1:]
    if data.endswith(b" "):
        data = data[:-1]
    return data


_BLANKS = bytes.maketrans(b"\t\r\x0b\x0c", b"    ")


class _Refused(Exception):
    """pyarrow parsed the bytes, but not as their whitespace-split fields (a field came out empty)."""


class NotClean(Exception):
    """The file needs the checked path (:func:`read_columns`): it is not clean, or not all converts."""


def _csv_options(columns: Sequence[Column], delimiter: str, block_size: int) -> dict:
    return {
        "read_options": pa_csv.ReadOptions(column_names=[c.name for c in columns], block_size=block_size),
        "parse_options": pa_csv.ParseOptions(delimiter=delimiter, quote_char=False, escape_char=False,
                                             double_quote=False, newlines_in_values=False),
        "convert_options": pa_csv.ConvertOptions(
            column_types={c.name: c.type for c in columns}, null_values=[], true_values=[],
            false_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False),
    }


def _input(data: bytes | mmap.mmap | str) -> pa.NativeFile:
    return pa.OSFile(data) if isinstance(data, str) else pa.BufferReader(pa.py_buffer(data))


def _refuse_empty_fields(chunks: Callable[[str], list], columns: Sequence[Column]) -> None:
    """An empty string or dictionary value means two separators in a row: not the whitespace split."""
    for column in columns:
        if pa.types.is_dictionary(column.type):  # the distinct values of each chunk tell
            values = [chunk.dictionary for chunk in chunks(column.name)]
        elif pa.types.is_string(column.type):
            values = chunks(column.name)
        else:
            continue
        if any(len(v) and pc.min(pc.binary_length(v)).as_py() == 0 for v in values):
            raise _Refused(column.name)


def _arrow_read(data: bytes | mmap.mmap | str, columns: Sequence[Column], delimiter: str) -> pa.Table:
    """pyarrow's reader (of the bytes, or of a file path); a table with an empty field is refused."""
    table = pa_csv.read_csv(_input(data), **_csv_options(columns, delimiter, 1 << 22))
    _refuse_empty_fields(lambda name: table.column(name).chunks, columns)
    return table.select([c.name for c in columns if c.keep])


def _empty(columns: Sequence[Column]) -> pa.Table:
    return pa.table({c.name: pa.array([], type=c.type) for c in columns if c.keep})


def _clean_separator(data: bytes | mmap.mmap) -> str | None:
    """The single separator of a file that needs no normalising, or None."""
    if data.find(b"\r") >= 0 or data.find(b"\x0b") >= 0 or data.find(b"\x0c") >= 0:
        return None
    has_tab = data.find(b"\t") >= 0
    if has_tab and data.find(b" ") >= 0:
        return None
    return "\t" if has_tab else " "


def _release(data: bytes | mmap.mmap, path: str | os.PathLike | None) -> bytes | mmap.mmap | str:
    """What pyarrow should read: the file itself when ``data`` maps it (the mapping's scanned pages are
    then released: the page cache keeps them, and a :class:`LineMap` may still read them)."""
    if path is None or not isinstance(data, mmap.mmap):
        return data
    with contextlib.suppress(AttributeError, OSError, ValueError):
        data.madvise(mmap.MADV_DONTNEED)
    return os.fspath(path)


def clean_batches(data: bytes | mmap.mmap, columns: Sequence[Column], *,
                  path: str | os.PathLike | None = None,
                  block_size: int = 1 << 20) -> Iterator[pa.RecordBatch]:
    """The kept ``columns`` of a clean file, batch by batch, parsed while streaming (``path``: the file
    that ``data`` maps; it is then read from the file, the mapping's pages released once scanned).

    Clean: one separator and no other blank, no empty field, every line with exactly the columns, every
    value converting, at least one line. Raises :class:`NotClean` otherwise, possibly after some batches:
    the caller then starts again with :func:`read_columns`, which finds and words the problems.
    """
    if not len(data) or data[:3] == b"\xef\xbb\xbf":
        raise NotClean
    separator = _clean_separator(data)
    if separator is None:
        raise NotClean
    kept = [c.name for c in columns if c.keep]
    rows = 0
    try:
        options = _csv_options(columns, separator, block_size)
        with pa_csv.open_csv(_input(_release(data, path)), **options) as reader:
            for batch in reader:
                _refuse_empty_fields(lambda name, b=batch: [b.column(name)], columns)
                rows += batch.num_rows
                yield batch.select(kept)
    except (pa.ArrowInvalid, UnicodeDecodeError, _Refused) as exc:
        raise NotClean from exc
    if not rows:
        raise NotClean


def read_columns(data: bytes | mmap.mmap, columns: Sequence[Column], problems: Problems,
                 describe: Callable[[str, bytes], str], *, extra_fields: bool = False,
                 path: str | os.PathLike | None = None) -> tuple[pa.Table, LineMap]:
    """Parse ``data`` into the typed, kept ``columns``; structural problems go to ``problems``.

    ``describe(column_name, raw_value)`` words the message for a value that does not convert.
    ``extra_fields=True`` ignores fields after the last column (as trec_eval does for runs).
    ``path``: the file, when ``data`` is a memory map of it: pyarrow then reads the file itself and the
    mapping's pages are released once scanned, so the whole file is never resident twice.
    """
    if data[:3] == b"\xef\xbb\xbf":  # a UTF-8 byte order mark is not part of the first qid
        data = b"   " + data[3:]
    if not len(data):
        return _empty(columns), LineMap(lines=np.zeros(0, dtype=np.int64))
    separator = _clean_separator(data)
    if separator is not None:
        try:
            return _arrow_read(_release(data, path), columns, separator), LineMap(data)
        except (pa.ArrowInvalid, UnicodeDecodeError, _Refused):
            pass
    data = normalise(bytes(data))
    try:
        return _arrow_read(data, columns, " "), LineMap(data)
    except (pa.ArrowInvalid, UnicodeDecodeError, _Refused):
        return _read_lines(data, columns, problems, describe, extra_fields)


#: the shape of a line of TREC's other file, where one file was given for the other: (layout expected, columns
#: found) -> the hint
_OTHER_FILE = {("qid q0 docno rank score tag", 4): " (a qrels line has 4: qid iter docno rel)",
               ("qid iter docno rel", 6): " (a run line has 6: qid Q0 docno rank score tag)"}


def _line_problem(fields: list[bytes], line: bytes, columns: Sequence[Column], extra_fields: bool) -> str | None:
    """What is wrong with a line's shape or encoding, or None."""
    expected = len(columns)
    layout = " ".join(c.name for c in columns)
    if len(fields) < expected and extra_fields:
        return f"expected at least {expected} columns ({layout}), found {len(fields)}"
    if len(fields) != expected and not extra_fields:
        hint = _OTHER_FILE.get((layout, len(fields)), "")
        return f"expected {expected} columns ({layout}), found {len(fields)}{hint}"
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return "line is not valid UTF-8"
    return None


_CONVERTERS = {pa.int64(): parse_int, pa.float64(): parse_float}


def _converted(fields: list[bytes], kept: list[tuple[int, Column]],
               describe: Callable[[str, bytes], str]) -> tuple[list | None, str | None]:
    """The kept fields converted to their columns' types, or the problem with the first that is not."""
    row = []
    for i, column in kept:
        convert = _CONVERTERS.get(column.type)
        value = fields[i].decode("utf-8") if convert is None else convert(fields[i])
        if value is None:
            return None, describe(column.name, fields[i])
        row.append(value)
    return row, None


def _read_lines(data: bytes, columns: Sequence[Column], problems: Problems,
                describe: Callable[[str, bytes], str], extra_fields: bool) -> tuple[pa.Table, LineMap]:
    """The slow path: every line checked in Python, every problem recorded with its line number."""
    kept = [(i, c) for i, c in enumerate(columns) if c.keep]
    values: dict[str, list] = {c.name: [] for _, c in kept}
    lines: list[int] = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line:
            continue
        fields = line.split(b" ")
        row, problem = None, _line_problem(fields, line, columns, extra_fields)
        if problem is None:
            row, problem = _converted(fields, kept, describe)
        if problem is not None:
            problems.add(number, problem)
            continue
        for (_, column), value in zip(kept, row, strict=True):
            values[column.name].append(value)
        lines.append(number)
    table = pa.table({c.name: pa.array(values[c.name], type=c.type) for _, c in kept})
    return table, LineMap(lines=np.asarray(lines, dtype=np.int64))

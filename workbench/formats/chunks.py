"""A clean whitespace-separated file parsed a chunk of whole lines at a time, two chunks side by side.

pyarrow's streaming CSV reader parses on one core. Here the file is read in chunks of about
:data:`CHUNK_SIZE` bytes cut after a newline; each chunk is parsed by pyarrow (which releases the GIL) and
handed to the caller's ``work`` in a worker thread, and the results come back in file order. At most
``workers + 1`` chunks are in flight, so memory stays a few chunks above what the caller keeps, and a
file given by its path is read, not mapped: its pages never count in the process's memory.

Clean means what :func:`workbench.formats.columns.clean_batches` means: one separator (a single space or
a single tab) and no other blank, no empty field, every line with exactly the columns, every value
converting, at least one line. Anything else raises :class:`~workbench.formats.columns.NotClean` (perhaps
after some chunks): the caller then takes the checked path, which finds and words the problems.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor

import pyarrow as pa
import pyarrow.csv as pa_csv

from workbench.formats.columns import Column, NotClean, _csv_options, _refuse_empty_fields, _Refused, _release

CHUNK_SIZE = 1 << 20
_OTHER_BLANKS = (b"\r", b"\x0b", b"\x0c")


def _pieces(data, path: str | os.PathLike | None, size: int) -> Iterator[bytes]:
    """The content in pieces of whole lines (the last one may lack its newline)."""
    if path is not None:
        with open(path, "rb") as handle:
            carry = b""
            while True:
                block = handle.read(size)
                if not block:
                    break
                block = carry + block
                cut = block.rfind(b"\n") + 1
                carry = block[cut:]
                if cut:
                    yield block[:cut]
            if carry:
                yield carry
        return
    start, total = 0, len(data)
    while start < total:
        end = min(start + size, total)
        if end < total:
            cut = data.rfind(b"\n", start, end)
            if cut < 0:  # a line longer than a chunk: the chunk goes to its end
                cut = data.find(b"\n", end)
                end = total if cut < 0 else cut + 1
            else:
                end = cut + 1
        yield bytes(data[start:end])
        start = end


def _separator(piece: bytes, known: str | None) -> str:
    """The file's single separator, checked against this piece; NotClean if it has another blank."""
    if any(blank in piece for blank in _OTHER_BLANKS):
        raise NotClean
    has_tab, has_space = b"\t" in piece, b" " in piece
    separator = known or ("\t" if has_tab else " ")
    if (separator == "\t" and has_space) or (separator == " " and has_tab):
        raise NotClean
    return separator


def _parse(piece: bytes, columns: Sequence[Column], separator: str, work: Callable[[pa.Table], object]):
    try:
        options = _csv_options(columns, separator, len(piece) + 1)
        options["read_options"].use_threads = False
        table = pa_csv.read_csv(pa.BufferReader(piece), **options)
        _refuse_empty_fields(lambda name: table.column(name).chunks, columns)
    except (pa.ArrowInvalid, UnicodeDecodeError, _Refused) as exc:
        raise NotClean from exc
    if not table.num_rows:  # blank lines only
        return 0, None
    return table.num_rows, work(table.select([c.name for c in columns if c.keep]))


def parallel_chunks(data, columns: Sequence[Column], work: Callable[[pa.Table], object], *,
                    path: str | os.PathLike | None = None, chunk_size: int | None = None,
                    workers: int = 2) -> Iterator[object]:
    """``work(table)`` of every chunk of a clean file, in file order (see the module docstring).

    ``data``: the content (bytes or a memory map), used when ``path`` is None; ``path``: the file itself.
    """
    if not len(data) or data[:3] == b"\xef\xbb\xbf":
        raise NotClean
    if path is not None:  # the file is read, not the mapping: its pages are released (the page cache keeps them)
        _release(data, path)
    rows, separator = 0, None
    pending: deque = deque()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            for piece in _pieces(data, path, chunk_size or CHUNK_SIZE):
                separator = _separator(piece, separator)
                pending.append(pool.submit(_parse, piece, columns, separator, work))
                while len(pending) > workers:
                    count, result = pending.popleft().result()
                    rows += count
                    if count:
                        yield result
            while pending:
                count, result = pending.popleft().result()
                rows += count
                if count:
                    yield result
        finally:
            for future in pending:
                future.cancel()
    if not rows:
        raise NotClean

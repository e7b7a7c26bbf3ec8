"""Where the bytes of a corpus used by reference come from: the one module that opens such files.

A location is a path on this machine today; a storage backend (object storage) goes under these few
functions and nothing above them changes. Offsets are always offsets in the *uncompressed* bytes: a
``.gz`` file is decompressed on the fly, read forward only (seeking back restarts it), so fetching from
it is one forward pass per batch of documents, and an uncompressed file is the fast case.
"""

from __future__ import annotations

import contextlib
import gzip
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

from workbench.formats.errors import FormatError
from workbench.formats.sources import GZIP_MAGIC, READ_ERRORS, unreadable


def _path(location: str | os.PathLike) -> Path:
    return Path(os.fspath(location))


def resolve(location: str | os.PathLike) -> str:
    """The canonical location of a corpus file (a folder stands for its ``corpus.jsonl``, as BEIR lays it out),
    checked to be a readable file; else one line (:class:`FormatError`)."""
    shown = str(location)[:200]
    try:
        path = _path(location).expanduser()
        if path.is_dir():
            path = path / "corpus.jsonl"
            if path.is_symlink():  # a folder stands for its own file, never one a link leads to
                raise FormatError([f"{shown}: corpus.jsonl is a link; a BEIR folder's files must be plain files "
                                   "inside it (links are not followed)"])
        if not path.is_file():
            raise FormatError([f"{shown}: no such file on this machine."])
        with open_raw(path) as handle:
            handle.read(1)
        return str(path.resolve())
    except FormatError:
        raise
    except (OSError, ValueError) as exc:  # a name too long, a NUL byte
        raise FormatError([f"{shown}: cannot be read: {exc.strerror if isinstance(exc, OSError) else exc}"]) from None


def identity(location: str | os.PathLike) -> dict:
    """What says the file is the one that was indexed: its size and modification time."""
    try:
        stat = _path(location).stat()
    except READ_ERRORS as exc:
        raise unreadable(str(location), exc) from None
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def is_gzip(location: str | os.PathLike) -> bool:
    with open_raw(location) as handle:
        return handle.read(2) == GZIP_MAGIC


@contextlib.contextmanager
def open_raw(location: str | os.PathLike) -> Iterator[IO[bytes]]:
    """The file's stored bytes (compressed if it is compressed); a missing or unreadable file is one line."""
    path = _path(location)
    try:
        if path.is_dir():
            raise IsADirectoryError(str(path))
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except READ_ERRORS as exc:
        raise unreadable(str(location), exc) from None
    with handle:
        yield handle


@contextlib.contextmanager
def open_bytes(location: str | os.PathLike) -> Iterator[IO[bytes]]:
    """The file's uncompressed bytes, read forward."""
    with open_raw(location) as raw:
        if raw.read(2) == GZIP_MAGIC:
            raw.seek(0)
            with gzip.GzipFile(fileobj=raw, mode="rb") as unpacked:
                yield unpacked
        else:
            raw.seek(0)
            yield raw


def read_spans(location: str | os.PathLike, spans: Iterable[tuple[int, int]]) -> Iterator[tuple[int, int, bytes]]:
    """(start, end, bytes) of each span ``[start, end)`` of the uncompressed file, in the order of the spans
    sorted by start (a compressed file is then read in one forward pass)."""
    ordered = sorted(set(spans))
    with open_bytes(location) as handle:
        try:
            for start, end in ordered:
                handle.seek(start)
                yield start, end, handle.read(end - start)
        except READ_ERRORS as exc:
            raise unreadable(str(location), exc) from None

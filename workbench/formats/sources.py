"""Opening inputs: a path (``.gz`` decompressed transparently), or a text or binary file object.

Gzip is recognised by the ``.gz`` suffix of a path or by the gzip magic bytes at the start of a binary
stream. File objects given by the caller are never closed here.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import io
import mmap
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, TextIO

from workbench.formats.errors import FormatError

Source = str | os.PathLike | IO[Any]

#: what reading a missing, unreadable, corrupt or truncated (gzip) file raises
READ_ERRORS = (OSError, EOFError, zlib.error)

GZIP_MAGIC = b"\x1f\x8b"


def unreadable(name: str, exc: BaseException) -> FormatError:
    """One line saying why a file cannot be read: ``name: cannot read: reason``."""
    if isinstance(exc, gzip.BadGzipFile | zlib.error):
        reason = "not a valid gzip file (corrupt compressed data)"
    elif isinstance(exc, EOFError):
        reason = "the compressed file is truncated"
    elif isinstance(exc, FileNotFoundError):
        reason = "no such file"
    elif isinstance(exc, IsADirectoryError):
        reason = "it is a directory"
    elif isinstance(exc, PermissionError):
        reason = "permission denied"
    else:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return FormatError([f"{name}: cannot read: {reason}"])


def _reading(function):
    """Errors of reading ``source`` (the first argument) become one :func:`unreadable` line."""

    @functools.wraps(function)
    def wrapped(source, *args, **kwargs):
        try:
            return function(source, *args, **kwargs)
        except READ_ERRORS as exc:
            raise unreadable(display_name(source), exc) from None

    return wrapped


def is_path(source: object) -> bool:
    return isinstance(source, str | os.PathLike)


def display_name(source: object, name: str | None = None) -> str:
    """The name used in messages: ``name`` if given, else the path, else the file object's name."""
    if name is not None:
        return name
    if is_path(source):
        return os.fspath(source)  # type: ignore[arg-type]
    candidate = getattr(source, "name", None)
    return candidate if isinstance(candidate, str) else "<stream>"


def is_gzip_path(path: str | os.PathLike) -> bool:
    if str(path).endswith(".gz"):
        return True
    with open(path, "rb") as handle:
        return handle.read(2) == GZIP_MAGIC


def _peek(stream: IO[bytes], size: int) -> bytes | None:
    """The first bytes of a binary stream without consuming them, or None when that is impossible."""
    peek = getattr(stream, "peek", None)
    if peek is not None:
        with contextlib.suppress(OSError, ValueError):
            return peek(size)[:size]
    if getattr(stream, "seekable", lambda: False)():
        position = stream.tell()
        head = stream.read(size)
        stream.seek(position)
        return head
    return None


def is_text_stream(source: object) -> bool:
    return isinstance(source, io.TextIOBase) or (hasattr(source, "read") and hasattr(source, "encoding")
                                                 and not hasattr(source, "readinto"))


@contextlib.contextmanager
def open_text(source: Source, *, encoding: str = "utf-8", errors: str = "replace") -> Iterator[TextIO]:
    """Open ``source`` for reading text; failing to open or read it (inside the block too: a truncated
    gzip shows only as it is read) raises :class:`FormatError` naming the file.

    ``source`` is a path (``str`` or ``Path``; ``.gz`` or gzip content is decompressed), a text file
    object (used as is), or a binary file object (decoded; gzip content is decompressed). Bytes that are
    not valid ``encoding`` become U+FFFD unless ``errors`` says otherwise.

    >>> import io
    >>> with open_text(io.BytesIO(b"301 0 D1 1\\n")) as handle:
    ...     handle.read()
    '301 0 D1 1\\n'
    """
    try:
        with _open_text(source, encoding=encoding, errors=errors) as handle:
            yield handle
    except READ_ERRORS as exc:
        raise unreadable(display_name(source), exc) from None


@contextlib.contextmanager
def _open_text(source: Source, *, encoding: str, errors: str) -> Iterator[TextIO]:
    if is_path(source):
        path = Path(source)  # type: ignore[arg-type]
        if is_gzip_path(path):
            with gzip.open(path, "rt", encoding=encoding, errors=errors, newline=None) as handle:
                yield handle  # type: ignore[misc]
        else:
            with open(path, encoding=encoding, errors=errors) as handle:
                yield handle
        return
    if is_text_stream(source):
        yield source  # type: ignore[misc]
        return
    binary: IO[bytes] = source  # type: ignore[assignment]
    if not isinstance(binary, io.BufferedIOBase | io.BufferedReader) and not hasattr(binary, "peek"):
        binary = io.BufferedReader(binary) if isinstance(binary, io.RawIOBase) else binary
    head = _peek(binary, 2)
    inner: IO[bytes] = gzip.GzipFile(fileobj=binary, mode="rb") if head == GZIP_MAGIC else binary
    wrapper = io.TextIOWrapper(inner, encoding=encoding, errors=errors)  # type: ignore[arg-type]
    try:
        yield wrapper
    finally:
        wrapper.detach()  # leave the caller's file object open


@_reading
def read_buffer(source: Source, *, populate: bool = True) -> bytes | mmap.mmap:
    """The whole content of ``source``: a read-only memory map for a plain file (no copy), else bytes.
    ``populate=False``: the map's pages are read only when touched (a reader that reads the file itself
    touches one)."""
    if is_path(source) and not is_gzip_path(source):  # type: ignore[arg-type]
        with open(source, "rb") as handle:  # type: ignore[arg-type]
            if os.fstat(handle.fileno()).st_size > 0:
                if populate:
                    with contextlib.suppress(OSError, ValueError, AttributeError):  # MAP_POPULATE: Linux only
                        return mmap.mmap(handle.fileno(), 0, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE,
                                         prot=mmap.PROT_READ)
                with contextlib.suppress(OSError, ValueError):
                    return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    return read_bytes(source)


@_reading
def read_bytes(source: Source) -> bytes:
    """The whole (decompressed) content of ``source`` as bytes; text streams are encoded as UTF-8."""
    if is_path(source):
        path = Path(source)  # type: ignore[arg-type]
        if is_gzip_path(path):
            with gzip.open(path, "rb") as handle:
                return handle.read()
        return path.read_bytes()
    if is_text_stream(source):
        return source.read().encode("utf-8")  # type: ignore[union-attr]
    data = source.read()  # type: ignore[union-attr]
    if isinstance(data, str):
        return data.encode("utf-8")
    data = bytes(data)
    if data[:2] == GZIP_MAGIC:
        return gzip.decompress(data)
    return data

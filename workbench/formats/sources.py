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
import tempfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, TextIO

from workbench.formats import limits
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


class _Counted(io.RawIOBase):
    """A binary stream that counts the bytes read from it (the compressed side of a gzip file)."""

    def __init__(self, inner: IO[bytes]) -> None:
        self.inner, self.count = inner, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.inner.read(len(buffer))
        self.count += len(data)
        buffer[: len(data)] = data
        return len(data)


class _Bounded(io.RawIOBase):
    """The decompressed (or plain) bytes of a file, refused with one line (:class:`FormatError`) as soon as
    they pass the limit of their kind, or expand more than the ratio limit over the compressed bytes read."""

    def __init__(self, inner: IO[bytes], name: str, kind: str, compressed: _Counted | None) -> None:
        self.inner, self.name, self.kind, self.compressed = inner, name, kind, compressed
        self.limits = limits.current()
        self.limit = self.limits.bytes_for(kind)
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self.inner.read(min(len(buffer), _BLOCK))
        if isinstance(data, str):
            data = data.encode("utf-8")
        self.count += len(data)
        buffer[: len(data)] = data
        self.check()
        return len(data)

    def check(self) -> None:
        if self.count > self.limit:
            raise too_large(self.name, self.kind, self.limit, self.compressed is not None)
        if self.compressed is not None and self.count > self.limits.ratio_after:
            ratio = self.count / max(1, self.compressed.count)
            if ratio > self.limits.max_ratio:
                raise FormatError([f"{self.name}: refused: it expands more than {self.limits.max_ratio:.0f} times "
                                   f"when decompressed ({ratio:.0f} times after {limits.human(self.count)}), "
                                   "a compression bomb, not a real file"])


_BLOCK = 1 << 20


def too_large(name: str, kind: str, limit: int, compressed: bool) -> FormatError:
    what = "once decompressed" if compressed else ""
    return FormatError([f"{name}: refused: it holds more than {limits.human(limit)} {what}".rstrip()
                        + f", the limit for {kind if kind != 'other' else 'such'} files"])


def _bounded_binary(source: Source, name: str, kind: str, stack: contextlib.ExitStack) -> IO[bytes] | None:
    """``source`` as a bounded binary stream (decompressed if it is gzip); None for a text stream."""
    if is_path(source):
        path = Path(source)  # type: ignore[arg-type]
        raw: IO[bytes] = stack.enter_context(open(path, "rb"))
        if is_gzip_path(path):
            counted = _Counted(raw)
            return _Bounded(gzip.GzipFile(fileobj=counted, mode="rb"), name, kind, counted)  # type: ignore[arg-type]
        limit = limits.current().bytes_for(kind)
        if os.fstat(raw.fileno()).st_size > limit:
            raise too_large(name, kind, limit, False)
        return _Bounded(raw, name, kind, None)
    if is_text_stream(source):
        return None
    binary: IO[bytes] = source  # type: ignore[assignment]
    if not isinstance(binary, io.BufferedIOBase | io.BufferedReader) and not hasattr(binary, "peek"):
        binary = io.BufferedReader(binary) if isinstance(binary, io.RawIOBase) else binary
    if _peek(binary, 2) == GZIP_MAGIC:
        counted = _Counted(binary)
        return _Bounded(gzip.GzipFile(fileobj=counted, mode="rb"), name, kind, counted)  # type: ignore[arg-type]
    return _Bounded(binary, name, kind, None)


@contextlib.contextmanager
def open_text(source: Source, *, encoding: str = "utf-8", errors: str = "replace",
              kind: str = "other") -> Iterator[TextIO]:
    """Open ``source`` for reading text; failing to open or read it (inside the block too: a truncated
    gzip shows only as it is read) raises :class:`FormatError` naming the file.

    ``source`` is a path (``str`` or ``Path``; ``.gz`` or gzip content is decompressed), a text file
    object (used as is), or a binary file object (decoded; gzip content is decompressed). Bytes that are
    not valid ``encoding`` become U+FFFD unless ``errors`` says otherwise. A path or binary stream is read
    within the limits of its ``kind`` (:mod:`workbench.formats.limits`): past them, reading raises
    :class:`FormatError` (one line).

    >>> import io
    >>> with open_text(io.BytesIO(b"301 0 D1 1\\n")) as handle:
    ...     handle.read()
    '301 0 D1 1\\n'
    """
    try:
        with contextlib.ExitStack() as stack:
            binary = _bounded_binary(source, display_name(source), kind, stack)
            if binary is None:
                yield source  # type: ignore[misc]
                return
            wrapper = io.TextIOWrapper(io.BufferedReader(binary, _BLOCK), encoding=encoding,  # type: ignore[arg-type]
                                       errors=errors)
            try:
                yield wrapper
            finally:
                if not is_path(source):
                    wrapper.detach()  # leave the caller's file object open
    except READ_ERRORS as exc:
        raise unreadable(display_name(source), exc) from None


@_reading
def read_buffer(source: Source, *, populate: bool = True, kind: str = "other") -> bytes | mmap.mmap:
    """The whole content of ``source``: a read-only memory map for a plain file (no copy); a compressed file
    is decompressed, within the limits of its ``kind``, into an unnamed temporary file that is mapped; else
    bytes. ``populate=False``: the map's pages are read only when touched (a reader that reads the file
    itself touches one)."""
    if is_path(source) and not is_gzip_path(source):  # type: ignore[arg-type]
        with open(source, "rb") as handle:  # type: ignore[arg-type]
            size = os.fstat(handle.fileno()).st_size
            limit = limits.current().bytes_for(kind)
            if size > limit:
                raise too_large(display_name(source), kind, limit, False)
            if size > 0:
                return _map(handle, populate)
        return b""
    if is_text_stream(source):
        return read_bytes(source, kind=kind)
    with contextlib.ExitStack() as stack:
        binary = _bounded_binary(source, display_name(source), kind, stack)
        assert binary is not None
        if binary.compressed is None:  # type: ignore[attr-defined]
            return b"".join(iter(lambda: binary.read(_BLOCK), b""))
        with tempfile.TemporaryFile(prefix="workbench-decompressed-") as spool:
            for block in iter(lambda: binary.read(_BLOCK), b""):
                spool.write(block)
            spool.flush()
            if spool.tell() == 0:
                return b""
            return _map(spool, populate)


def _map(handle: IO[bytes], populate: bool) -> mmap.mmap | bytes:
    if populate:
        with contextlib.suppress(OSError, ValueError, AttributeError):  # MAP_POPULATE: Linux only
            return mmap.mmap(handle.fileno(), 0, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE, prot=mmap.PROT_READ)
    with contextlib.suppress(OSError, ValueError):
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    handle.seek(0)
    return handle.read()


@_reading
def read_bytes(source: Source, *, kind: str = "other") -> bytes:
    """The whole (decompressed) content of ``source`` as bytes, within the limits of its ``kind``; text
    streams are encoded as UTF-8."""
    if is_text_stream(source):
        return source.read().encode("utf-8")  # type: ignore[union-attr]
    with contextlib.ExitStack() as stack:
        binary = _bounded_binary(source, display_name(source), kind, stack)
        assert binary is not None
        return b"".join(iter(lambda: binary.read(_BLOCK), b""))

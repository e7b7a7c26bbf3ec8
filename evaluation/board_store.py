"""Where the boards (:mod:`evaluation.board`) and the figures stored beside them (:mod:`evaluation.board_extras`)
are kept. Each has a *name* relative to the boards' folder (``12/<version>.<policy>.parquet``,
``12/extras/<version>.<policy>.<extra>.parquet``), and where names live follows the project's files
(:mod:`workbench.collections.files`):

* files on the local disk (the default): under ``BOARD_DIR`` (default ``VAR_DIR/boards``), read in place, as
  they always were;
* files in an S3 bucket (``S3_BUCKET``): in the bucket under ``boards/``, put there by the worker that built
  them, so that any web process serves them. A process reads a stored file once into its own ``BOARD_DIR``
  (then a cache of this machine only) and from there on from its disk; it keeps the files of the newest
  :data:`CACHE_VERSIONS` versions per folder.

A name holds the collection's version (:func:`evaluation.board.version_key`, a digest of every id, checksum and
time a score depends on), and nothing stored under a name is ever replaced by other content: a rebuilt board
is a new version under a new name, so a cached file is never stale.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pyarrow as pa
import pyarrow.parquet as pq
from django.conf import settings

from evaluation import cache
from workbench.collections import files

__all__ = ["CACHE_VERSIONS", "PREFIX", "cached", "delete", "listing", "local", "read_local", "root", "shared",
           "stored", "write"]

#: the folder of the boards in the bucket
PREFIX = "boards"
#: versions whose files a process keeps in its cache, per collection folder (the current one, the one shown
#: while it is computed, and one more)
CACHE_VERSIONS = 3

T = TypeVar("T")


def root() -> Path:
    """The boards on this machine's disk: the boards themselves (local files), or this process's cache (S3)."""
    return Path(getattr(settings, "BOARD_DIR", None) or Path(settings.VAR_DIR) / "boards")


def shared() -> bool:
    """Whether boards live in the bucket (files in object storage) rather than in ``BOARD_DIR``."""
    return not files.is_local()


def _key(name: str) -> str:
    return f"{PREFIX}/{name}"


def write(name: str, table: pa.Table) -> Path:
    """Store ``table`` under ``name``, whole or not at all, and give its file on this machine's disk: written
    aside and renamed into place (a reader never sees half); with S3, put in the bucket (a PUT is whole)
    and kept in this process's cache too."""
    path = root() / name
    if not shared():
        _write_aside(path, lambda aside: pq.write_table(table, aside, compression="zstd"))
        return path
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="zstd")
    data = sink.getvalue().to_pybytes()
    files.put_bytes(_key(name), data)
    _write_aside(path, lambda aside: Path(aside).write_bytes(data))
    _trim(path)
    return path


def _write_aside(path: Path, writer: Callable[[str], object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, aside = tempfile.mkstemp(dir=path.parent, prefix=".partial.")
    os.close(descriptor)
    try:
        writer(aside)
        os.replace(aside, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(aside)


def stored(name: str) -> bool:
    """Whether ``name`` is stored (in the bucket with S3: what this process cached may have been pruned)."""
    return files.exists(_key(name)) if shared() else (root() / name).exists()


def local(name: str) -> Path | None:
    """A file of ``name`` on this machine's disk to read, or None when none is stored: the file itself, or its
    copy in this process's cache (fetched from the bucket the first time)."""
    path = root() / name
    if path.exists() or not shared():
        return path if path.exists() else None
    try:
        source = files.open_file(_key(name))
    except FileNotFoundError:
        return None
    with source:
        _write_aside(path, lambda aside: _copy(source, aside))
    _trim(path)
    return path


def _copy(source, aside: str) -> None:
    with open(aside, "wb") as handle:
        shutil.copyfileobj(source, handle, 1 << 20)


def read_local(name: str, reader: Callable[[Path], T]) -> T | None:
    """``reader`` of the file of ``name`` (:func:`local`), or None when none is stored. A cached copy removed
    meanwhile by another thread's trim is fetched again."""
    for _ in range(2):
        path = local(name)
        if path is None:
            return None
        try:
            return reader(path)
        except FileNotFoundError:
            continue
    return None


def cached(key: tuple, name: str, reader: Callable[[Path], T]) -> T | None:
    """``reader`` of ``name`` once per ``key`` in this process (:mod:`evaluation.cache`), or None (not stored:
    nothing is kept, so a file stored later is read)."""
    found = cache.cache.get(key)
    if found is None:
        found = read_local(name, reader)
        if found is not None:
            cache.cache.put(key, found)
    return found


def listing(folder: str, suffix: str) -> list[tuple[str, float]]:
    """(name, time written) of the stored files in ``folder`` (not below it) whose name ends with ``suffix``,
    newest first."""
    if not shared():
        where = root() / folder
        found = [(f"{folder}/{p.name}", p.stat().st_mtime) for p in where.glob(f"*{suffix}")
                 if not p.name.startswith(".")] if where.exists() else []
    else:
        store = files.storage()
        try:
            _, names = store.listdir(_key(folder))
        except (FileNotFoundError, NotADirectoryError):
            names = []
        found = [(f"{folder}/{n}", store.get_modified_time(_key(f"{folder}/{n}")).timestamp())
                 for n in names if n.endswith(suffix) and not n.startswith(".")]
    return sorted(found, key=lambda item: (item[1], item[0]), reverse=True)


def names(folder: str, suffix: str = ".parquet") -> list[str]:
    """The stored files' names in ``folder`` ending with ``suffix`` (no times: one listing, even with S3)."""
    if not shared():
        where = root() / folder
        return [f"{folder}/{p.name}" for p in where.glob(f"*{suffix}")
                if not p.name.startswith(".")] if where.exists() else []
    try:
        _, found = files.storage().listdir(_key(folder))
    except (FileNotFoundError, NotADirectoryError):
        return []
    return [f"{folder}/{n}" for n in found if n.endswith(suffix) and not n.startswith(".")]


def delete(name: str) -> None:
    """Remove ``name`` from the store (and from this process's cache)."""
    (root() / name).unlink(missing_ok=True)
    if shared():
        files.delete(_key(name))


def _trim(kept: Path) -> None:
    """Keep in ``kept``'s cache folder the files of the :data:`CACHE_VERSIONS` newest versions (and ``kept``)."""
    newest: dict[str, float] = {}
    entries = []
    for path in kept.parent.glob("*.parquet"):
        with contextlib.suppress(FileNotFoundError):  # another thread's trim removed it
            entries.append((path, path.stat().st_mtime))
    for path, mtime in entries:
        version = path.name.split(".", 1)[0]
        newest[version] = max(newest.get(version, 0.0), mtime)
    keep = set(sorted(newest, key=newest.get, reverse=True)[:CACHE_VERSIONS]) | {kept.name.split(".", 1)[0]}
    for path, _ in entries:
        if path.name.split(".", 1)[0] not in keep:
            path.unlink(missing_ok=True)

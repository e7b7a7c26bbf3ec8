"""Uploaded archives (``.zip``, ``.tar``, ``.tar.gz``/``.tgz``) unpacked into plain files, bounded like files.

Each regular member is streamed to a fresh flat name of one folder (folders flattened: nothing is written
anywhere else); links, devices and encrypted members are problems named ``archive.zip:member``. An archive is
refused with one line (:class:`ArchiveRefused`) as soon as it passes a limit of :class:`Budget`:

- its entries, counted before anything is written (a zip's central directory; a tar's headers), count with the
  upload's other files against the most files one upload may carry;
- each member's bytes and the archive's total, counted as they are written (never the sizes the headers
  declare), against the size limit of the upload's kind (``limits.bytes_for``);
- each member's and the archive's expansion (bytes out over compressed bytes read) against the ratio limit,
  once past ``ratio_after`` bytes, as for a gzip file.

The over-limit block is never written; the caller removes what the archive had unpacked. Django-free.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import re
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from workbench.formats import limits
from workbench.formats.sources import too_large

__all__ = ["ArchiveRefused", "Budget", "DiskFull", "UsedNames", "count_files", "fresh_name", "is_zip", "safe_name", "unpack"]

_CHUNK = 1 << 20
#: a member is read in blocks this small: a zip member reads ahead at most one block of compressed bytes, so
#: the bytes read measure the expansion of a bomb (1,000:1) from its first MB, not only once it is all read
_BLOCK = 64 << 10


class ArchiveRefused(Exception):
    """An archive over a limit: its one line."""


class DiskFull(Exception):
    """Unpacking would leave less than the reserve free on the disk."""


@dataclass(frozen=True)
class Budget:
    #: the most files the upload may carry, archives' entries counted (0: no limit)
    max_files: int
    #: the kind of the files inside (``runs``, ``documents``...): its size limit applies
    kind: str = "other"
    #: unpacking stops before the disk has less than this free
    reserve: int = 0

    @property
    def max_bytes(self) -> int:
        return limits.current().bytes_for(self.kind)


class UsedNames(set):
    """Names taken in one folder, with the next number to try for each base name, so that 20,000 members of
    one name get ``a.run``, ``2-a.run``, … ``20000-a.run`` in linear time (no rescan from 1 for each)."""

    def __init__(self, names=()) -> None:
        super().__init__(names)
        self.next: dict[str, int] = {}


_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def safe_name(name: str, taken: set[str] | None = None) -> str:
    """A file name safe on any disk, from the name the user gave (its folders dropped; unique within ``taken``,
    added to it: ``a.run``, then ``2-a.run``...)."""
    base = _UNSAFE.sub("_", PurePosixPath(name or "upload").name).lstrip(".") or "upload"
    return fresh_name(base[:150], set() if taken is None else taken)


def fresh_name(base: str, taken: set[str]) -> str:
    """``base``, or ``N-base`` with the lowest N not tried yet for it, unique within ``taken`` (added to it)."""
    counters = getattr(taken, "next", {})
    candidate, n = base, counters.get(base, 1)
    if n > 1:
        candidate = f"{n}-{base}"
    while candidate in taken:
        n += 1
        candidate = f"{n}-{base}"
    counters[base] = n
    taken.add(candidate)
    return candidate


def is_zip(shown: str) -> bool:
    return shown.lower().endswith(".zip")


def skipped(member: str) -> bool:
    """Folders' housekeeping files that are not anyone's data (macOS resource forks, .DS_Store)."""
    parts = [part for part in member.split("/") if part and part != "."]
    return not parts or "__MACOSX" in parts or parts[-1].startswith(".")


class _Counted(io.BufferedReader):
    """The archive file, counting the (compressed) bytes read from it."""

    count = 0

    def read(self, size: int | None = -1) -> bytes:
        data = super().read(size)
        self.count += len(data)
        return data


def _opened(path: Path) -> _Counted:
    return _Counted(io.FileIO(path, "rb"), _CHUNK)


def _too_many(shown: str, found: int, budget: Budget) -> ArchiveRefused:
    holds = "it holds" if found > budget.max_files else "with it this upload holds"
    return ArchiveRefused(f"{shown}: refused: {holds} more than {budget.max_files:,} files, the most one upload may "
                          "carry (UPLOAD_MAX_FILES; an archive's files count one by one); upload them in several parts")


def count_files(path: Path, shown: str, before: int, budget: Budget) -> int:
    """The files of the archive (folders and housekeeping files not counted), refused as soon as they and the
    ``before`` files of the upload pass ``budget.max_files``; nothing is written. A tar's headers are read in
    one pass (a compressed tar decompressed, bounded by the ratio limit, never written)."""
    cap = budget.max_files - before if budget.max_files else None
    found = 0
    with _opened(path) as raw:
        if is_zip(shown):
            with zipfile.ZipFile(raw) as archive:
                for info in archive.infolist():
                    if not info.is_dir() and not skipped(info.filename):
                        found += 1
                        if cap is not None and found > cap:
                            raise _too_many(shown, found, budget)
            return found
        with _tar(raw, _Meter(shown, budget, raw)) as archive:
            for info in archive:
                if info.isdir() or skipped(info.name):
                    continue
                found += 1
                if cap is not None and found > cap:
                    raise _too_many(shown, found, budget)
    return found


class _Meter:
    """Bytes out of one archive, member by member, checked against the size and ratio limits as they grow."""

    def __init__(self, shown: str, budget: Budget, raw: _Counted) -> None:
        self.shown, self.raw, self.limits = shown, raw, limits.current()
        self.max_bytes, self.kind = budget.max_bytes, budget.kind
        self.total = self.out = self.start = 0
        self.member = ""

    def begin(self, member: str) -> None:
        self.member, self.out, self.start = member, 0, self.raw.count

    def add(self, size: int) -> None:
        """Count ``size`` more bytes of the member before they are written; over a limit: refused."""
        self.out += size
        self.total += size
        named = f"{self.shown}:{self.member}"
        if self.out > self.max_bytes:
            raise ArchiveRefused(too_large(named, self.kind, self.max_bytes, True).problems[0])
        self._ratio(named, self.out, self.raw.count - self.start)
        self.check_total(self.total)

    def check_total(self, total: int) -> None:
        """The archive's ``total`` bytes out so far (its members', or a compressed tar's whole stream)."""
        if total > self.max_bytes:
            raise ArchiveRefused(f"{self.shown}: refused: its files hold more than {limits.human(self.max_bytes)} "
                                 f"once unpacked, the limit for "
                                 f"{self.kind if self.kind != 'other' else 'such'} files")
        self._ratio(self.shown, total, self.raw.count)

    def _ratio(self, named: str, out: int, read: int) -> None:
        if out <= self.limits.ratio_after:
            return
        ratio = out / max(1, read)
        if ratio > self.limits.max_ratio:
            raise ArchiveRefused(f"{named}: refused: it expands more than {self.limits.max_ratio:.0f} times when "
                                 f"decompressed ({ratio:.0f} times after {limits.human(out)}), a compression bomb, "
                                 "not a real file")


class _Expanded(io.RawIOBase):
    """A compressed tar's decompressed stream, its bytes checked against the archive's limits as they are read
    (a tar's headers are found by reading past every member: a bomb is refused as it expands, even unwritten)."""

    def __init__(self, inner, meter: _Meter) -> None:
        self.inner, self.meter, self.count = inner, meter, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        try:
            data = self.inner.read(min(len(buffer), _BLOCK))
        except (EOFError, zlib.error, OSError) as exc:  # a cut or damaged stream: the archive, not the disk
            raise tarfile.ReadError("unexpected end of data" if isinstance(exc, EOFError) else str(exc)) from None
        self.count += len(data)
        buffer[: len(data)] = data
        self.meter.check_total(self.count)
        return len(data)


_COMPRESSED = ((b"\x1f\x8b", lambda raw: gzip.GzipFile(fileobj=raw, mode="rb")), (b"BZh", bz2.BZ2File),
               (b"\xfd7zXZ\x00", lzma.LZMAFile))


def _tar(raw: _Counted, meter: _Meter) -> tarfile.TarFile:
    """The archive as a tar stream (members in order, never all in memory), decompressed through
    :class:`_Expanded` if it is gzip, bzip2 or xz."""
    head = raw.peek(6)[:6]
    for magic, opener in _COMPRESSED:
        if head.startswith(magic):
            stream = io.BufferedReader(_Expanded(opener(raw), meter), _BLOCK)
            return tarfile.open(fileobj=stream, mode="r|")
    return tarfile.open(fileobj=raw, mode="r|")


def _copy_out(source, directory: Path, member: str, taken: set[str], meter: _Meter, reserve: int) -> Path:
    """The member streamed to a fresh flat name in ``directory``, each block counted before it is written and
    the free disk checked as it grows; the partial file removed if it is refused."""
    target = directory / safe_name(member, taken)
    meter.begin(member)
    try:
        with open(target, "xb") as handle:
            unchecked = 0
            while chunk := source.read(_BLOCK):
                meter.add(len(chunk))
                handle.write(chunk)
                unchecked += len(chunk)
                if unchecked >= 64 * _CHUNK:
                    unchecked = 0
                    _check_disk(directory, reserve)
        _check_disk(directory, reserve)
    except BaseException:
        target.unlink(missing_ok=True)
        raise
    return target


def _check_disk(directory: Path, reserve: int) -> None:
    if reserve and shutil.disk_usage(directory).free < reserve:
        raise DiskFull


def unpack(path: Path, shown: str, directory: Path, taken: set[str], problems: list[str],
           budget: Budget) -> Iterator[tuple[str, Path]]:
    """(member, extracted path) for each regular file of the archive, streamed one by one to a flat name in
    ``directory``; links, devices and encrypted members added to ``problems``; over a limit:
    :class:`ArchiveRefused` (or :class:`DiskFull`)."""
    with _opened(path) as raw:
        meter = _Meter(shown, budget, raw)
        if is_zip(shown):
            yield from _unpack_zip(raw, shown, directory, taken, problems, meter, budget.reserve)
            return
        with _tar(raw, meter) as archive:
            for info in archive:
                member = info.name
                if info.isdir() or skipped(member):
                    continue
                if info.issym() or info.islnk():
                    problems.append(f"{shown}:{member}: a link, not a file (links are not followed)")
                    continue
                if not info.isfile():
                    problems.append(f"{shown}:{member}: not a regular file")
                    continue
                source = archive.extractfile(info)
                if source is not None:
                    yield member, _copy_out(source, directory, member, taken, meter, budget.reserve)


def _unpack_zip(raw: _Counted, shown: str, directory: Path, taken: set[str], problems: list[str], meter: _Meter,
                reserve: int) -> Iterator[tuple[str, Path]]:
    with zipfile.ZipFile(raw) as archive:
        for info in archive.infolist():
            member = info.filename.replace("\\", "/")
            if info.is_dir() or skipped(member):
                continue
            if stat.S_ISLNK(info.external_attr >> 16):
                problems.append(f"{shown}:{member}: a link, not a file (links are not followed)")
                continue
            if info.flag_bits & 0x1:
                problems.append(f"{shown}:{member}: encrypted; upload it unencrypted")
                continue
            with archive.open(info) as source:
                yield member, _copy_out(source, directory, member, taken, meter, reserve)

"""Uploads from the console: files streamed to disk, then imported by a background job.

Every upload goes straight to a temporary file on disk (``FILE_UPLOAD_HANDLERS``); :func:`stage` moves
each one into its own folder ``uploads/<hex>`` of the file store (``workbench.files``: on the local disk a
rename, nothing is read in the request) and records the name the user gave it, so that problems read
``runs.txt:12: ...``. The job takes a local copy of the folder and opens it with :func:`open_staged`, which unpacks archives (``.zip``, ``.tar``, ``.tar.gz``/``.tgz``)
into plain files named ``runs.tar.gz:alpha.run``, and removes the directory when it ends.

Each kind of upload (topics, documents, runs here; qrels registered by judging, the app above) names
the task that imports it and the options it takes, so the console offers every kind with one form.
:class:`UploadLimitsMiddleware` answers an upload over the limits (too many files) with a plain page.
"""

from __future__ import annotations

import json
import re
import shutil
import stat
import tarfile
import uuid
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse
from django.http.multipartparser import MultiPartParserError, TooManyFilesSent
from django.shortcuts import render

from workbench import files as store
from workbench.services import ImportRefused

__all__ = ["ARCHIVE_SUFFIXES", "GONE", "KINDS", "Staged", "UploadKind", "UploadLimitsMiddleware", "is_archive",
           "max_files", "open_staged", "register", "relative_problems", "safe_name", "stage", "staged_files",
           "shown_names", "staged_names", "staged_prefix"]

#: what a job whose staged upload is no longer there says
GONE = "the uploaded files are gone (the job ran before, or they were removed)"
#: archives a job unpacks into their files (runs and documents)
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")
_NAMES = ".names.json"  # the staged files' names as the user gave them (staged names never start with '.')
_CHUNK = 1 << 20


@dataclass(frozen=True)
class UploadKind:
    name: str
    label: str
    #: the django-tasks task that imports a job's staged files
    task: Callable = field(repr=False)
    multiple: bool = False
    #: the upload form's options this kind takes besides the files
    options: Sequence[str] = ()
    help: str = ""
    #: archives of files are unpacked by the job
    archives: bool = False


KINDS: dict[str, UploadKind] = {}


def register(kind: UploadKind) -> None:
    KINDS[kind.name] = kind


def max_files() -> int:
    """The most files one upload may carry (``UPLOAD_MAX_FILES``)."""
    return int(settings.DATA_UPLOAD_MAX_NUMBER_FILES or 0)


def is_archive(name: str) -> bool:
    return name.lower().endswith(ARCHIVE_SUFFIXES)


_UNSAFE = re.compile(r"[^A-Za-z0-9._+-]+")


def safe_name(name: str, taken: set[str] | None = None) -> str:
    """A file name safe on any disk, from the name the user gave (unique within ``taken``)."""
    taken = set() if taken is None else taken
    base = _UNSAFE.sub("_", Path(name or "upload").name).lstrip(".") or "upload"
    candidate, n = base[:150], 1
    while candidate in taken:
        n += 1
        candidate = f"{n}-{base[:150]}"
    taken.add(candidate)
    return candidate


def stage(files, *, manifest=None) -> str:
    """Store the uploaded files (and an optional manifest) under a fresh name prefix of the file store
    (``uploads/<hex>``, see ``workbench.files``): on the local disk a move, with no copy (Django spooled
    them to disk already); to S3 a streamed upload. The prefix goes in the job's parameters."""
    prefix = f"uploads/{uuid.uuid4().hex}"
    taken: set[str] = set()
    names: dict = {"files": []}
    for upload in files:
        name = safe_name(upload.name, taken)
        store.put(f"{prefix}/{name}", upload)
        upload.close()
        names["files"].append([name, Path(upload.name or name).name])
    if manifest is not None:
        name = safe_name(manifest.name, taken)
        store.put(f"{prefix}/{name}", manifest)
        manifest.close()
        names["manifest"] = [name, Path(manifest.name or name).name]
    store.put_bytes(f"{prefix}/{_NAMES}", json.dumps(names).encode())
    return prefix


def shown_names(names: Sequence[str]) -> str | list[str]:
    """The uploaded files' names as a job's page lists them (the first and last of many)."""
    names = list(names)
    return names if len(names) <= 10 else f"{len(names)} files ({', '.join(names[:3])}, …, {names[-1]})"


def staged_prefix(value) -> str:
    """The staged upload a job's parameter names (``uploads/<hex>``, or the path under ``VAR_DIR/uploads``
    earlier versions recorded), only if it lies under ``uploads/`` (never anything else); else ""."""
    name = store.key(value) if isinstance(value, str) else ""
    return name if name.startswith("uploads/") and name.count("/") >= 1 else ""


@dataclass
class Staged:
    """A job's uploaded files (archives unpacked), each with the name the user knows it by."""

    directory: Path
    files: list[Path]
    names: dict[Path, str]
    manifest: Path | None = None

    def __iter__(self):
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)

    def name(self, path: Path) -> str:
        return self.names.get(path, path.name)

    def rename(self, text: str) -> str:
        """``text`` naming files as the user named them, not by their staged path."""
        for path in sorted(self.names, key=lambda p: len(str(p)), reverse=True):
            text = text.replace(str(path), self.names[path])
        return text.replace(f"{self.directory}/", "")

    def refused(self, exc: BaseException) -> ImportRefused:
        problems = getattr(exc, "problems", None) or [str(exc) or type(exc).__name__]
        return ImportRefused([self.rename(str(p)) for p in problems])


def staged_names(prefix: str) -> dict | None:
    """The staged upload's record of its files' names (``{"files": [[staged, original], …], "manifest": …}``),
    read from the file store without copying the files; None if there is none."""
    name = f"{prefix}/{_NAMES}"
    if not prefix or not store.exists(name):
        return None
    try:
        with store.open_file(name) as handle:
            return json.loads(handle.read())
    except (OSError, ValueError):
        return None


def _recorded(directory: Path) -> dict | None:
    try:
        return json.loads((directory / _NAMES).read_text())
    except (OSError, ValueError):
        return None


def staged_files(directory: str | Path) -> list[Path]:
    """A job's files, in the order they were given (names are unique within the directory)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ImportRefused([GONE])
    recorded = _recorded(directory)
    if recorded is not None:
        return [directory / staged for staged, _ in recorded["files"]]
    return sorted((p for p in directory.iterdir() if p.is_file() and not p.name.startswith(".")),
                  key=lambda p: p.stat().st_mtime_ns)


def open_staged(directory: str | Path, *, archives: bool = False) -> Staged:
    """The job's files with the names the user gave them; with ``archives``, every archive unpacked into
    its files (named ``archive.zip:member``) in its place. Problems of the archives: :class:`ImportRefused`."""
    directory = Path(directory)
    files = staged_files(directory)
    recorded = _recorded(directory) or {}
    names = {directory / staged: original for staged, original in recorded.get("files", [])}
    manifest = None
    if recorded.get("manifest"):
        manifest = directory / recorded["manifest"][0]
        names[manifest] = recorded["manifest"][1]
    staged = Staged(directory, files, names, manifest)
    if archives:
        _unpack_all(staged)
    return staged


def _unpack_all(staged: Staged) -> None:
    taken = {p.name for p in staged.directory.iterdir()}
    files: list[Path] = []
    problems: list[str] = []
    for path in staged.files:
        shown = staged.name(path)
        if not is_archive(shown):
            files.append(path)
            continue
        found: list[Path] = []
        try:
            for member, target in _unpack(path, shown, staged.directory, taken, problems):
                staged.names[target] = f"{shown}:{member}"
                found.append(target)
        except _DiskFull:
            problems.append(f"{shown}: unpacking it would fill the server's disk (less than "
                            f"{DISK_RESERVE >> 30} GB left); upload fewer or smaller files")
            break
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, OSError, NotImplementedError) as exc:
            if isinstance(exc, EOFError):
                reason = "the archive is truncated"
            elif isinstance(exc, OSError) and exc.errno is not None:  # the server's disk, not the archive
                reason = f"unpacking it failed on the server ({exc.strerror})"
            else:
                reason = f"not a valid {'zip' if shown.lower().endswith('.zip') else 'tar'} archive ({exc})"
            problems.append(f"{shown}: cannot read: {reason}")
            continue
        if not found and not any(p.startswith(f"{shown}:") for p in problems):
            problems.append(f"{shown}: the archive holds no files")
        files.extend(found)
        path.unlink(missing_ok=True)  # its files are out: the disk holds each byte once
    if problems:
        raise ImportRefused(problems)
    staged.files = files


def _skipped(member: str) -> bool:
    """Folders' housekeeping files that are not anyone's data (macOS resource forks, .DS_Store)."""
    parts = PurePosixPath(member).parts
    return not parts or "__MACOSX" in parts or parts[-1].startswith(".")


#: unpacking stops before the disk holding the uploads has less than this free (an archive that would fill it)
DISK_RESERVE = 1 << 30


class _DiskFull(Exception):
    pass


def _copy_out(source, directory: Path, member: str, taken: set[str]) -> Path:
    """The member streamed to a fresh flat name in ``directory``, checking the free disk as it grows."""
    target = directory / safe_name(PurePosixPath(member).name, taken)
    with open(target, "xb") as handle:
        unchecked = 0
        while chunk := source.read(_CHUNK):
            handle.write(chunk)
            unchecked += len(chunk)
            if unchecked >= 64 * _CHUNK:
                unchecked = 0
                if shutil.disk_usage(directory).free < DISK_RESERVE:
                    raise _DiskFull
    if shutil.disk_usage(directory).free < DISK_RESERVE:
        raise _DiskFull
    return target


def _unpack(path: Path, shown: str, directory: Path, taken: set[str], problems: list[str]):
    """(member, extracted path) for each regular file of the archive, streamed one by one to a flat name in
    ``directory`` (folders flattened: no member is written anywhere but there); links and devices refused."""
    if shown.lower().endswith(".zip"):
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                member = info.filename.replace("\\", "/")
                if info.is_dir() or _skipped(member):
                    continue
                mode = info.external_attr >> 16
                if stat.S_ISLNK(mode):
                    problems.append(f"{shown}:{member}: a link, not a file (links are not followed)")
                    continue
                if info.flag_bits & 0x1:
                    problems.append(f"{shown}:{member}: encrypted; upload it unencrypted")
                    continue
                with archive.open(info) as source:
                    yield member, _copy_out(source, directory, member, taken)
        return
    with tarfile.open(path, mode="r|*") as archive:  # a stream: members read in order, never all in memory
        for info in archive:
            member = info.name
            if info.isdir() or _skipped(member):
                continue
            if info.issym() or info.islnk():
                problems.append(f"{shown}:{member}: a link, not a file (links are not followed)")
                continue
            if not info.isfile():
                problems.append(f"{shown}:{member}: not a regular file")
                continue
            source = archive.extractfile(info)
            if source is not None:
                yield member, _copy_out(source, directory, member, taken)


def relative_problems(exc: ImportRefused, directory: str | Path) -> ImportRefused:
    """The same problems, naming files as the user named them rather than by their staged path."""
    directory = Path(directory)
    recorded = _recorded(directory) or {}
    names = {directory / staged: original for staged, original in recorded.get("files", [])}
    return Staged(directory, [], names).refused(exc)


def _limits_refusal(exc: Exception) -> str:
    if isinstance(exc, TooManyFilesSent):
        return (f"This upload holds more than {max_files():,} files, the most one upload may carry. Upload the "
                f"files in several parts, or pack them into one archive ({', '.join(ARCHIVE_SUFFIXES)}).")
    if isinstance(exc, TooManyFieldsSent):
        return (f"This form sent more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS:,} fields, the most one "
                "request may carry. Choose fewer items at once.")
    if isinstance(exc, RequestDataTooBig):
        return (f"This form's fields (besides its files) are over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} "
                "bytes, the most one request may carry.")
    return "The upload arrived incomplete or malformed (was it interrupted?). Please send it again."


class UploadLimitsMiddleware:
    """A form over the limits (too many files or fields, an interrupted upload) answers a plain page
    saying what is wrong (400), not a debug page or a 500. It reads the form before the CSRF check does,
    so it sits just before ``CsrfViewMiddleware``; files are streamed to disk as usual."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST":
            try:
                request.POST  # noqa: B018 - parses the form (files to disk) here, where a refusal is caught
            except (TooManyFilesSent, TooManyFieldsSent, RequestDataTooBig, MultiPartParserError) as exc:
                return render(request, "workbench/upload_refused.html",
                              {"reason": _limits_refusal(exc), "back": request.path}, status=400)
        return self.get_response(request)

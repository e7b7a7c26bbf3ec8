"""Uploads from the console: files streamed to disk, then imported by a background job.

Every upload goes straight to a temporary file on disk (``FILE_UPLOAD_HANDLERS``); :func:`stage` moves
each one into its own folder ``uploads/<hex>`` of the file store (``workbench.collections.files``: on the local disk a
rename, nothing is read in the request) and records the name the user gave it, so that problems read
``runs.txt:12: ...``. The job takes a local copy of the folder and opens it with :func:`open_staged`, which unpacks archives (``.zip``, ``.tar``, ``.tar.gz``/``.tgz``)
into plain files named ``runs.tar.gz:alpha.run``, and removes the directory when it ends.

Each kind of upload (topics, documents, runs here; qrels registered by judging, the app above) names
the task that imports it and the options it takes, so the console offers every kind with one form.
:class:`UploadLimitsMiddleware` answers an upload over the limits (too many files) with a plain page.
"""

from __future__ import annotations

import json
import tarfile
import uuid
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError, TooManyFilesSent
from django.shortcuts import render

from workbench.collections import files as store
from workbench.collections.refusals import ImportRefused
from workbench.formats import archives as unpacking
from workbench.formats.archives import safe_name

__all__ = ["ARCHIVE_SUFFIXES", "GONE", "KINDS", "Staged", "UploadKind", "UploadLimitsMiddleware", "is_archive",
           "max_files", "open_staged", "register", "relative_problems", "safe_name", "stage", "staged_files",
           "shown_names", "staged_names", "staged_prefix"]

#: what a job whose staged upload is no longer there says
GONE = "the uploaded files are gone (the job ran before, or they were removed)"
#: archives a job unpacks into their files (runs and documents)
ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz")
_NAMES = ".names.json"  # the staged files' names as the user gave them (staged names never start with '.')


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


def stage(files, *, manifest=None) -> str:
    """Store the uploaded files (and an optional manifest) under a fresh name prefix of the file store
    (``uploads/<hex>``, see ``workbench.collections.files``): on the local disk a move, with no copy (Django spooled
    them to disk already); to S3 a streamed upload. The prefix goes in the job's parameters."""
    prefix = f"uploads/{uuid.uuid4().hex}"
    taken = unpacking.UsedNames()
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


def open_staged(directory: str | Path, *, archives: bool = False, kind: str = "other") -> Staged:
    """The job's files with the names the user gave them; with ``archives``, every archive unpacked into
    its files (named ``archive.zip:member``) in its place, within the limits of ``kind`` (``workbench.formats.
    archives``: entries counted as files, each member's and each archive's bytes and expansion). Problems of
    the archives: :class:`ImportRefused`."""
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
        _unpack_all(staged, kind)
    return staged


def _unpack_all(staged: Staged, kind: str) -> None:
    budget = unpacking.Budget(max_files(), kind, DISK_RESERVE)
    _count_all(staged, budget)
    taken = unpacking.UsedNames(p.name for p in staged.directory.iterdir())
    files: list[Path] = []
    problems: list[str] = []
    for path in staged.files:
        shown = staged.name(path)
        if not is_archive(shown):
            files.append(path)
            continue
        found: list[Path] = []
        try:
            for member, target in unpacking.unpack(path, shown, staged.directory, taken, problems, budget):
                staged.names[target] = f"{shown}:{member}"
                found.append(target)
        except (unpacking.ArchiveRefused, unpacking.DiskFull) as exc:
            _remove(files + found)  # nothing half-unpacked is left on the disk
            raise ImportRefused([_said(shown, exc)]) from None
        except _UNREADABLE as exc:
            problems.append(f"{shown}: cannot read: {_unreadable(shown, exc)}")
            continue
        if not found and not any(p.startswith(f"{shown}:") for p in problems):
            problems.append(f"{shown}: the archive holds no files")
        files.extend(found)
        path.unlink(missing_ok=True)  # its files are out: the disk holds each byte once
    if problems:
        raise ImportRefused(problems)
    staged.files = files


_UNREADABLE = (zipfile.BadZipFile, tarfile.TarError, EOFError, zlib.error, OSError, NotImplementedError)


def _count_all(staged: Staged, budget: unpacking.Budget) -> None:
    """Every archive's files counted with the plain files against the most one upload may carry, before
    anything is unpacked (an archive that cannot be read is left for unpacking to name)."""
    count = sum(1 for path in staged.files if not is_archive(staged.name(path)))
    for path in staged.files:
        shown = staged.name(path)
        if is_archive(shown):
            try:
                count += unpacking.count_files(path, shown, count, budget)
            except unpacking.ArchiveRefused as exc:
                raise ImportRefused([str(exc)]) from None
            except _UNREADABLE:
                continue


def _said(shown: str, exc: Exception) -> str:
    if isinstance(exc, unpacking.DiskFull):
        return (f"{shown}: unpacking it would fill the server's disk (less than {DISK_RESERVE >> 30} GB left); "
                "upload fewer or smaller files")
    return str(exc)


def _unreadable(shown: str, exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "the archive is truncated"
    if isinstance(exc, OSError) and exc.errno is not None:  # the server's disk, not the archive
        return f"unpacking it failed on the server ({exc.strerror})"
    return f"not a valid {'zip' if unpacking.is_zip(shown) else 'tar'} archive ({exc})"


def _remove(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


#: unpacking stops before the disk holding the uploads has less than this free (an archive that would fill it)
DISK_RESERVE = 1 << 30


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
                if request.path.startswith("/api/"):  # the API answers JSON: too much is 413
                    status = 413 if isinstance(exc, TooManyFilesSent | RequestDataTooBig) else 400
                    return JsonResponse({"detail": _limits_refusal(exc), "problems": []}, status=status)
                return render(request, "workbench/upload_refused.html",
                              {"reason": _limits_refusal(exc), "back": request.path}, status=400)
        return self.get_response(request)

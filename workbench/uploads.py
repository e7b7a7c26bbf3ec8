"""Uploads from the console: files streamed to disk, then imported by a background job.

Django streams an upload over ``FILE_UPLOAD_MAX_MEMORY_SIZE`` to a temporary file; :func:`stage` moves
each one into its own directory under ``VAR_DIR/uploads/`` (keeping the name the user gave it, so
that problems read ``runs.txt:12: ...``) and the job imports from there, then removes the directory.

Each kind of upload (topics, documents, runs here; qrels registered by judging, the app above) names
the task that imports it and the options it takes, so the console offers every kind with one form.
"""

from __future__ import annotations

import re
import shutil
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from django.conf import settings

from workbench.services import ImportRefused

__all__ = ["KINDS", "UploadKind", "register", "relative_problems", "safe_name", "stage", "staged_files"]


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


KINDS: dict[str, UploadKind] = {}


def register(kind: UploadKind) -> None:
    KINDS[kind.name] = kind


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


def stage(files) -> Path:
    """Move the uploaded files into a fresh directory (no copy when Django already spooled them to
    disk); its path goes in the job's parameters."""
    directory = Path(settings.VAR_DIR) / "uploads" / uuid.uuid4().hex
    directory.mkdir(parents=True)
    taken: set[str] = set()
    for upload in files:
        target = directory / safe_name(upload.name, taken)
        temporary = getattr(upload, "temporary_file_path", None)
        if temporary is not None:
            # move first: closing a TemporaryUploadedFile deletes its file (the move makes that a no-op)
            shutil.move(temporary(), target)
            upload.close()
        else:
            with open(target, "wb") as handle:
                for chunk in upload.chunks():
                    handle.write(chunk)
    return directory


def staged_files(directory: str | Path) -> list[Path]:
    """A job's files, in the order they were given (names are unique within the directory)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ImportRefused(["the uploaded files are gone (the job ran before, or they were removed)"])
    return sorted((p for p in directory.iterdir() if p.is_file()), key=lambda p: p.stat().st_mtime_ns)


def relative_problems(exc: ImportRefused, directory: str | Path) -> ImportRefused:
    """The same problems, naming files as the user named them rather than by their staged path."""
    prefix = f"{Path(directory)}/"
    return ImportRefused([line.replace(prefix, "") for line in exc.problems])

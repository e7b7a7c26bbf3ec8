"""Files that outlive a request, through Django's storage API: uploads staged for a job, participants' run
files, job outputs (release bundles, evaluation reports).

Every such file has a *name* (``uploads/<hex>/runs.txt``, ``jobs/12/track-release.zip``), never a path on the
web server's disk, so that the worker that runs a job may be on another machine. ``STORAGES["default"]``
says where names live: by default :class:`LocalStorage`, the disk under ``VAR_DIR`` (the layout the workbench
always had); with ``S3_BUCKET`` set, an S3-compatible store (django-storages' S3 backend).

Parsers read paths: :func:`local_copy` gives the files under a name prefix as a local folder, the store's own
folder when it is the local disk (no copy), else a download into the worker's own ``WORK_DIR``, removed after.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import FileSystemStorage, Storage, storages

__all__ = ["LocalStorage", "delete", "delete_tree", "exists", "is_local", "key", "list_tree", "local_copy",
           "local_path", "open_file", "put", "put_bytes", "size", "storage"]


class LocalStorage(FileSystemStorage):
    """The local disk under ``VAR_DIR`` (read when used, so that a test's own ``VAR_DIR`` is followed)."""

    @property
    def base_location(self) -> str:
        return str(self._location or settings.VAR_DIR)

    @property
    def location(self) -> str:
        return os.path.abspath(self.base_location)


def storage() -> Storage:
    return storages["default"]


def local_path(name: str) -> Path | None:
    """Where ``name`` lives on this machine's disk, or None when the store is not a disk (S3)."""
    try:
        return Path(storage().path(name))
    except NotImplementedError:
        return None


def is_local() -> bool:
    return local_path("x") is not None


def key(stored: str) -> str:
    """The storage name of ``stored``: a name already, or a path under ``VAR_DIR`` that earlier versions
    recorded (made relative). Anything else (another absolute path, ``..``) gives ""."""
    if os.path.isabs(stored):
        root = Path(settings.VAR_DIR).resolve()
        path = Path(stored).resolve()
        if root not in path.parents:
            return ""
        stored = path.relative_to(root).as_posix()
    parts = PurePosixPath(stored).parts
    return "" if not parts or ".." in parts else PurePosixPath(*parts).as_posix()


def put(name: str, content) -> str:
    """Store ``content`` (an upload, a file object, or bytes) under exactly ``name``, replacing a file of that
    name. An upload Django spooled to disk is moved, not copied, when the store is the local disk."""
    if isinstance(content, bytes):
        return put_bytes(name, content)
    store, path = storage(), local_path(name)
    if store.exists(name):
        store.delete(name)
    temporary = getattr(content, "temporary_file_path", None)
    if path is not None and temporary is not None:  # a rename (closing the upload then removes nothing)
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(temporary(), path)
        return name
    saved = store.save(name, content)
    if saved != name:  # another writer took the name between the two calls: nothing of ours is half-kept
        store.delete(saved)
        raise OSError(f"{name}: could not store the file under its name")
    return saved


def put_bytes(name: str, data: bytes) -> str:
    """Store ``data`` under ``name`` whole or not at all: on disk written aside and renamed into place (a
    reader never sees half a file); an S3 PUT is whole by itself."""
    path = local_path(name)
    if path is None:
        return put(name, ContentFile(data))
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, aside = tempfile.mkstemp(dir=path.parent, prefix=".partial.")
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    os.replace(aside, path)
    return name


def open_file(name: str):
    """The stored file, opened for reading in binary (streamed from S3, never read whole)."""
    return storage().open(name, "rb")


def exists(name: str) -> bool:
    return bool(name) and storage().exists(name)


def size(name: str) -> int:
    return storage().size(name)


def delete(name: str) -> None:
    if name and storage().exists(name):
        storage().delete(name)


def list_tree(prefix: str) -> list[str]:
    """Every file's name under the folder ``prefix`` (recursively)."""
    store, found = storage(), []
    try:
        folders, names = store.listdir(prefix)
    except (FileNotFoundError, NotADirectoryError):
        return []
    found.extend(f"{prefix}/{n}" for n in names)
    for folder in folders:
        found.extend(list_tree(f"{prefix}/{folder}"))
    return found


def delete_tree(prefix: str) -> None:
    """Remove the folder ``prefix`` and everything in it (nothing if it is not there)."""
    if not prefix:
        return
    path = local_path(prefix)
    if path is not None:
        shutil.rmtree(path, ignore_errors=True)
        return
    for name in list_tree(prefix):
        storage().delete(name)


def work_dir() -> Path:
    """This machine's own scratch folder for jobs (``WORK_DIR``; by default ``VAR_DIR/work``)."""
    path = Path(getattr(settings, "WORK_DIR", None) or Path(settings.VAR_DIR) / "work")
    path.mkdir(parents=True, exist_ok=True)
    return path


@contextlib.contextmanager
def local_copy(prefix: str, only: Sequence[str] | None = None) -> Iterator[Path]:
    """The files under ``prefix`` (``only`` these, named relative to it, if given) as a local folder for the
    block: the store's own folder on a local disk, else each file downloaded (streamed) into a fresh folder of
    :func:`work_dir`, removed when the block ends."""
    path = local_path(prefix)
    if path is not None:
        yield path
        return
    folder = Path(tempfile.mkdtemp(prefix="job-", dir=work_dir()))
    try:
        for name in list_tree(prefix) if only is None else [f"{prefix}/{name}" for name in only]:
            target = folder / PurePosixPath(name).relative_to(prefix)
            target.parent.mkdir(parents=True, exist_ok=True)
            with open_file(name) as source, open(target, "wb") as handle:
                shutil.copyfileobj(source, handle, 1 << 20)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)

"""Archives are bounded like files: their entries count towards the most files one upload may carry (counted
before anything is unpacked), each member and each archive's total are held to the size and ratio limits as
they are unpacked (a bomb is refused before much reaches the disk, and nothing it wrote is left), and 20,000
members of one name get their names in linear time. The archives are generated here, never committed."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import threading
import time
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from workbench.collections import uploads
from workbench.collections.services import ImportRefused, collection_create
from workbench.formats import archives, limits
from workbench.models import Job

MB = 1 << 20


def _zeros_zip(path: Path, size: int, name: str = "big.run") -> Path:
    """A zip whose one member is ``size`` zero bytes (deflate: about 1,000 to 1; 600 MB is about 0.6 MB)."""
    block = b"\0" * MB
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive, \
            archive.open(name, "w", force_zip64=True) as out:
        for _ in range(size // MB):
            out.write(block)
    return path


def _zeros_tgz(path: Path, size: int) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo("big.run")
        info.size = size
        archive.addfile(info, io.BufferedReader(_Zeros(size)))
    return path


class _Zeros(io.RawIOBase):
    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        n = min(len(buffer), self.left)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def _staged(folder: Path, *names: str) -> Path:
    (folder / ".names.json").write_text(json.dumps({"files": [[name, name] for name in names]}))
    return folder


class _Largest:
    """The most bytes the folder held at once, polled every few milliseconds while the block runs."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.most, self._stop = folder, 0, threading.Event()

    def _poll(self) -> None:
        while not self._stop.is_set():
            held = sum(p.stat().st_size for p in self.folder.iterdir() if p.name.endswith(".run"))
            self.most = max(self.most, held)
            time.sleep(0.002)

    def __enter__(self):
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


@pytest.mark.parametrize("make", [_zeros_zip, _zeros_tgz], ids=["zip", "tar.gz"])
def test_a_member_expanding_1000_to_1_is_refused_before_500_mb_reach_the_disk(tmp_path, settings, make):
    archive = make(tmp_path / ("bomb.zip" if make is _zeros_zip else "bomb.tar.gz"), 600 * MB)
    assert archive.stat().st_size < 2 * MB
    folder = _staged(tmp_path, archive.name)
    with _Largest(folder) as disk, pytest.raises(ImportRefused) as refused:
        uploads.open_staged(folder, archives=True, kind="runs")
    assert len(refused.value.problems) == 1
    assert refused.value.problems[0].startswith(f"{archive.name}")
    assert "refused: it expands more than 100 times when decompressed" in refused.value.problems[0]
    assert disk.most < 64 * MB, f"{disk.most / MB:.0f} MB written before the refusal"
    assert sorted(p.name for p in folder.iterdir()) == [".names.json", archive.name]  # nothing half-written


def test_an_archives_total_is_held_to_the_size_limit_of_its_kind(tmp_path):
    members = {f"part{i}.run": bytes(range(256)) * 2048 for i in range(3)}  # 512 KB each, barely compressible
    with zipfile.ZipFile(tmp_path / "runs.zip", "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    folder = _staged(tmp_path, "runs.zip")
    limits.configure(max_bytes={"runs": MB})
    try:
        with pytest.raises(ImportRefused) as refused:
            uploads.open_staged(folder, archives=True, kind="runs")
    finally:
        from workbench import settings as workbench_settings

        workbench_settings._configure_file_limits()
    assert refused.value.problems == ["runs.zip: refused: its files hold more than 1 MB once unpacked, the limit for "
                                      "runs files"]
    assert not list(folder.glob("*.run"))


@pytest.fixture
def org_client(client, organizer, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    collection_create(slug="track", name="Track")
    client.force_login(organizer)
    return client


def _job(client, kind: str, files) -> Job:
    response = client.post(reverse("workbench:upload", args=["track"]), {"kind": kind, f"{kind}-files": files})
    assert response.status_code == 302, response.content[:800]
    return Job.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))


@pytest.mark.parametrize("suffix", ["zip", "tar.gz"])
def test_an_archive_of_5000_entries_is_refused_at_once_naming_the_limit(org_client, settings, tmp_path, suffix):
    assert settings.DATA_UPLOAD_MAX_NUMBER_FILES == 1000
    buffer = io.BytesIO()
    if suffix == "zip":
        with zipfile.ZipFile(buffer, "w") as archive:
            for i in range(5000):
                archive.writestr(f"runs/r{i}.run", f"1 Q0 d{i} 1 1.0 r{i}\n")
    else:
        with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
            for i in range(5000):
                data = f"1 Q0 d{i} 1 1.0 r{i}\n".encode()
                info = tarfile.TarInfo(f"runs/r{i}.run")
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    started = time.perf_counter()
    job = _job(org_client, "runs", [SimpleUploadedFile(f"many.{suffix}", buffer.getvalue())])
    seconds = time.perf_counter() - started
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error == (f"many.{suffix}: refused: it holds more than 1,000 files, the most one upload may carry "
                         "(UPLOAD_MAX_FILES; an archive's files count one by one); upload them in several parts")
    assert seconds < 10, f"{seconds:.1f} s"
    assert not (tmp_path / "uploads").exists() or not [p for p in (tmp_path / "uploads").iterdir() if p.name != "tmp"]


def test_archive_entries_count_with_the_uploads_other_files(org_client, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 5
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for i in range(3):
            archive.writestr(f"r{i}.run", f"1 Q0 d{i} 1 1.0 r{i}\n")
    files = [SimpleUploadedFile(f"p{i}.run", b"1 Q0 d 1 1.0 p\n") for i in range(3)]
    job = _job(org_client, "runs", [*files, SimpleUploadedFile("three.zip", buffer.getvalue())])
    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error.startswith("three.zip: refused: with it this upload holds more than 5 files")


class _CountingNames(archives.UsedNames):
    lookups = 0

    def __contains__(self, name) -> bool:
        type(self).lookups += 1
        return super().__contains__(name)


def test_members_of_one_name_are_named_in_linear_time(tmp_path, settings):
    """5,000 names ``a.run`` (20,000 members of one name took 383 s in the review): each name is found with a
    lookup or two, not by trying 1, 2, 3... again for each member (12.5 million lookups); an archive's members
    are named so."""
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 20_000
    names = _CountingNames()
    given = [archives.safe_name(f"folder{i}/a.run", names) for i in range(5000)]
    assert given[:3] == ["a.run", "2-a.run", "3-a.run"] and given[-1] == "5000-a.run" and len(set(given)) == 5000
    assert _CountingNames.lookups < 3 * 5000
    with zipfile.ZipFile(tmp_path / "same.zip", "w") as archive:
        for i in range(500):
            archive.writestr(f"f{i}/a.run", b"1 Q0 d 1 1.0 a\n")
    folder = _staged(tmp_path, "same.zip")
    staged = uploads.open_staged(folder, archives=True, kind="runs")
    assert [p.name for p in staged.files[:2]] == ["a.run", "2-a.run"] and staged.files[-1].name == "500-a.run"
    assert staged.name(staged.files[-1]) == "same.zip:f499/a.run"
    shutil.rmtree(folder)

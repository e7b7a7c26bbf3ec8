"""Files in object storage: with ``S3_BUCKET`` set, an upload, a participant's run file and a job's output live
in the bucket of a real S3 server (SeaweedFS on 127.0.0.1, see tests/s3server.py), never on the web server's
disk, and a worker with a disk of its own does the job."""

from __future__ import annotations

import uuid
import zipfile
from io import BytesIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests import factories
from workbench.collections import files as store
from workbench.jobs import lifecycle as jobs
from workbench.models import Job, Run
from workbench.tasks import import_runs

pytestmark = pytest.mark.django_db


@pytest.fixture
def bucket(settings, s3, tmp_path):
    """The workbench's files in the S3 bucket (under a prefix of this test's own); the web server's disk
    (``VAR_DIR``) and the worker's (``WORK_DIR``) are two folders that share nothing."""
    prefix = f"t-{uuid.uuid4().hex[:8]}"
    settings.STORAGES = s3.storages(prefix)
    settings.VAR_DIR = tmp_path / "web"
    settings.WORK_DIR = tmp_path / "worker"
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}  # queued, not run
    return lambda sub="": s3.keys(f"{prefix}/{sub}")


def _files_under(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_a_console_upload_lives_in_the_bucket_and_a_worker_without_the_web_disk_imports_it(
        client, organizer, collection, bucket, settings, tmp_path):
    client.force_login(organizer)
    alpha = factories.run_lines("alpha", {"301": ["d1", "d2"], "302": ["d4"]})
    response = client.post(reverse("workbench:upload", args=[collection.slug]), {
        "kind": "runs", "runs-files": [SimpleUploadedFile("alpha.run", alpha.encode())]})
    job = Job.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))
    assert job.status == Job.Status.QUEUED
    staged = bucket("uploads/")
    assert [k.rsplit("/", 1)[1] for k in staged] == [".names.json", "alpha.run"]
    assert not [n for n in _files_under(tmp_path / "web") if n.endswith(".run")]  # nothing on the web disk
    # the worker: another disk (not the web server's folder), the same database and bucket
    settings.VAR_DIR = tmp_path / "elsewhere"
    import_runs.call(job.pk)
    job.refresh_from_db()
    assert (job.status, job.error) == (Job.Status.DONE, "")
    assert Run.objects.get(tag="alpha").num_entries == 3
    assert bucket("uploads/") == []  # the staged files are removed once imported
    assert _files_under(tmp_path / "worker") == []  # and so is the worker's copy


def test_a_job_output_is_kept_in_the_bucket_and_downloaded_through_the_web_server(
        client, organizer, collection, bucket):
    job = Job.objects.create(kind="release bundle", collection=collection, status=Job.Status.DONE,
                             result={"file": "track-release.zip"})
    buffer = BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("qrels.txt", "301 0 d1 1\n")
    name = jobs.write_output(job, "track-release.zip", buffer.getvalue())
    assert bucket("jobs/") == [f"{bucket()[0].split('/')[0]}/{name}"]
    assert store.local_path(name) is None  # not a path on any disk
    client.force_login(organizer)
    response = client.get(reverse("evaluation:download_release_file", args=[collection.slug, job.pk]))
    assert response.status_code == 200 and response["Content-Disposition"].endswith('filename="track-release.zip"')
    data = b"".join(response.streaming_content)
    assert zipfile.ZipFile(BytesIO(data)).read("qrels.txt") == b"301 0 d1 1\n"
    missing = Job.objects.create(kind="release bundle", collection=collection, status=Job.Status.DONE,
                                 result={"file": "gone.zip"})
    assert client.get(reverse("evaluation:download_release_file", args=[collection.slug, missing.pk])
                      ).status_code == 404


def test_an_upload_whose_files_are_gone_from_the_bucket_fails_its_job_in_one_line(
        client, organizer, collection, bucket, s3):
    client.force_login(organizer)
    response = client.post(reverse("workbench:upload", args=[collection.slug]), {
        "kind": "runs", "runs-files": [SimpleUploadedFile("alpha.run", b"301 Q0 d1 1 2.0 alpha\n")]})
    job = Job.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))
    for key in bucket("uploads/"):
        s3.client().delete_object(Bucket=s3.bucket, Key=key)
    import_runs.call(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED
    assert job.error == "the uploaded files are gone (the job ran before, or they were removed)"


def test_the_local_disk_is_the_default_store_and_s3_bucket_selects_s3(tmp_path):
    import subprocess
    import sys

    code = ("import os, django; os.environ['DJANGO_SETTINGS_MODULE']='workbench.settings'; django.setup();"
            "from django.core.files.storage import storages; s=storages['default'];"
            "print(type(s).__name__, getattr(s, 'bucket_name', s.location), getattr(s, 'endpoint_url', ''))")
    root = Path(__file__).resolve().parents[2]
    env = {"PATH": "/usr/bin:/bin", "WORKBENCH_VAR_DIR": str(tmp_path)}
    local = subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True)
    assert local.stdout.split() == ["LocalStorage", str(tmp_path)], local.stderr
    s3 = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, env={
        **env, "S3_BUCKET": "track-files", "S3_ENDPOINT_URL": "http://127.0.0.1:8333"})
    assert s3.stdout.split() == ["S3Storage", "track-files", "http://127.0.0.1:8333"], s3.stderr

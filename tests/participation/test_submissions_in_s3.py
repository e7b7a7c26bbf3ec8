"""Participants' run files in object storage: kept in the bucket of a real S3 server (SeaweedFS, see
tests/s3server.py), a file kept from a refused form too, and checked by a worker with a disk of its own."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from participation.models import Submission
from participation.tasks import check_submission
from tests.participation.conftest import run_upload, submit
from workbench.collections import files as store
from workbench.models import Run


@pytest.fixture
def bucket(settings, s3, tmp_path):
    prefix = f"p-{uuid.uuid4().hex[:8]}"
    settings.STORAGES = s3.storages(prefix)
    settings.WORK_DIR = tmp_path / "worker"
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}  # queued, not run
    return lambda sub="": [k.split("/", 1)[1] for k in s3.keys(f"{prefix}/{sub}")]


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def test_a_submission_kept_from_a_refused_form_lives_in_the_bucket_and_a_worker_elsewhere_checks_it(
        client, track, teams, bucket, settings, tmp_path):
    client.force_login(teams["red"][1])
    response = submit(client, track, run_upload("red-a", name="my run.txt"), description="")
    assert response.status_code == 400 and "Keep the file you chose: my run.txt" in response.content.decode()
    assert [k.rsplit("/", 1)[1] for k in bucket("uploads/participation/")] == ["my_run.txt"]
    response = client.post(f"/participate/{track.collection.slug}/", {
        "keep_file": "on", "run_type": "automatic", "priority": "1", "description": "BM25"})
    assert response.status_code == 302, response.content.decode()[:2000]
    submission = Submission.objects.get()
    assert submission.status == "checking" and bucket("uploads/participation/") == []
    assert bucket("submissions/") == [submission.stored] and store.local_path(submission.stored) is None
    web_disk = Path(settings.VAR_DIR)
    assert not [n for n in _files(web_disk) if n.endswith((".run", ".txt"))]
    settings.VAR_DIR = tmp_path / "worker-var"  # the worker: a disk of its own
    check_submission.call(submission.job_id)
    submission.refresh_from_db()
    assert submission.status == "accepted" and len(submission.sha256) == 64
    assert Run.objects.get(tag="red-a").num_entries == 9
    assert bucket("submissions/") == [submission.stored]  # the accepted file stays, in the bucket
    assert _files(tmp_path / "worker") == []  # the worker's copy is gone
    download = client.get(f"/participate/{track.collection.slug}/submissions/{submission.pk}/file")
    assert b"".join(download.streaming_content).startswith(b"301 Q0 d1 1")


def test_a_refused_submission_leaves_nothing_in_the_bucket(client, track, teams, bucket):
    client.force_login(teams["red"][1])
    submit(client, track, run_upload("red-x", extra="302 Q0 d9 seven 1.0 red-x\n", name="bad.run"))
    submission = Submission.objects.get()
    check_submission.call(submission.job_id)
    submission.refresh_from_db()
    assert submission.status == "refused" and submission.problems == ["bad.run:10: rank 'seven' is not an integer"]
    assert bucket("submissions/") == []

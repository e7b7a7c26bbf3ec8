"""The console's upload form offers answer runs, nugget banks and nugget assignments; each job imports all or none."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from answers.models import AnswerRun, NuggetAssignment, NuggetBank
from tests.answers.generated import write_track
from workbench.collections.services import collection_create
from workbench.models import Job, Topic


def _upload(client, kind: str, path, **fields):
    data = {"kind": kind, f"{kind}-files": SimpleUploadedFile(path.name, path.read_bytes()),
            **{f"{kind}-{k}": v for k, v in fields.items()}}
    response = client.post("/console/rag/upload/", data)
    assert response.status_code == 302 and response["Location"].startswith("/jobs/"), response.content[:300]
    return Job.objects.get(pk=response["Location"].strip("/").split("/")[-1])


@pytest.fixture
def files(db, tmp_path):
    collection = collection_create(slug="rag", name="RAG")
    Topic.objects.bulk_create(Topic(collection=collection, qid=q, title=q) for q in ("1", "2"))
    return write_track(tmp_path, runs=2, qids=["1", "2"], nuggets=3)


def test_answers_nuggets_and_assignments_upload_through_the_console(client, organizer, files):
    client.force_login(organizer)
    page = client.get("/console/rag/upload/").content.decode()
    assert "Answer runs" in page and "Nugget banks" in page and "Nugget assignments" in page
    job = _upload(client, "answers", files["answers"][0], contributes="on")
    assert job.status == Job.Status.DONE, job.error
    assert "answer run 'run000': 2 topics" in " ".join(job.result["lines"])
    assert _upload(client, "answers", files["answers"][1]).status == Job.Status.DONE
    assert _upload(client, "nuggets", files["banks"]).status == Job.Status.DONE
    job = _upload(client, "nugget_assignments", files["assignments"], assessor="nist")
    assert job.status == Job.Status.DONE, job.error
    assert AnswerRun.objects.count() == 2 and NuggetBank.objects.count() == 2
    assert set(NuggetAssignment.objects.values_list("assessor", flat=True)) == {"nist"}


def test_a_bad_answer_upload_fails_with_its_file_and_line_and_imports_nothing(client, organizer, files, tmp_path):
    client.force_login(organizer)
    bad = tmp_path / "broken.jsonl"
    bad.write_text(files["answers"][0].read_text() + "[1, 2]\n")
    job = _upload(client, "answers", bad)
    assert job.status == Job.Status.FAILED
    assert "broken.jsonl:3: an answer is a JSON object, not a list" in job.error
    assert not AnswerRun.objects.exists()

"""Near-duplicate detection split into parts any worker claims (``JOB_PARTS``): each part computes the signatures
of a slice of the documents, the join finds the classes; they are those of one worker, a part whose worker died
is done again by another, once."""

from __future__ import annotations

import random

import pytest

from tests.formats.test_neardup import planted_corpus
from tests.split_jobs import DB_TASKS, assert_each_part_done_once, kill_worker_of, run_worker
from workbench.collections import files as store
from workbench.jobs import lifecycle as jobs
from workbench.jobs import subjobs
from workbench.models import Document, DuplicateClass, Job
from workbench.tasks import find_duplicates


@pytest.fixture
def planted(collection, settings, tmp_path):
    """About 1,700 short passages (some with a title) with planted exact and near copies; parts of 300 at least."""
    settings.VAR_DIR = tmp_path
    settings.DUPLICATES_PART_MIN = 300
    docs, _ = planted_corpus(n_docs=1500, n_exact=60, n_near=120, seed=11)
    rng = random.Random(5)
    Document.objects.bulk_create([Document(collection=collection, docno=d, text=t, title="a title" if rng.random() < .2
                                           else "") for d, t in docs], batch_size=1000)
    return collection


def _detect(collection, settings, parts: int, *, params=None) -> Job:
    settings.JOB_PARTS = parts
    job = jobs.job_start(find_duplicates, kind="near-duplicates", collection=collection,
                         params=params or {"threshold": 0.7, "shingle": 3})
    job.refresh_from_db()
    return job


def _classes(collection) -> list[tuple]:
    """Every class as stored: representative, status, similarity, parameters, and its members with theirs."""
    return [(c.representative, c.status, c.similarity, c.threshold, c.shingle,
             sorted(c.members.values_list("docno", "similarity")))
            for c in DuplicateClass.objects.filter(collection=collection).order_by("representative")]


def _done(job: Job) -> Job:
    job.refresh_from_db()
    assert (job.status, job.error) == (Job.Status.DONE, ""), job.error
    return job


@pytest.mark.django_db
@pytest.mark.parametrize("parts", [2, 3])
def test_a_split_detection_stores_the_classes_of_one_worker(planted, settings, parts):
    whole_job = _done(_detect(planted, settings, 1))
    whole = _classes(planted)
    assert len(whole) > 100 and whole_job.parts.count() == 0
    DuplicateClass.objects.filter(collection=planted).delete()
    job = _done(_detect(planted, settings, parts))
    assert _classes(planted) == whole
    assert job.result["lines"] == whole_job.result["lines"]
    assert job.result["lines"][0].startswith(f"{planted.documents.count():,} documents read: ")
    assert (job.done, job.total, job.parts.count()) == (parts, parts, parts)
    counts = [p["documents"] for p in job.parts.order_by("pk").values_list("params", flat=True)]
    assert sum(counts) == planted.documents.count() and max(counts) - min(counts) <= 1
    assert list(job.parts.values_list("status", flat=True)) == ["done"] * parts
    assert not store.list_tree(subjobs.parts_folder(job))  # the parts' signatures removed once joined


@pytest.mark.django_db
def test_classes_the_organizer_decided_are_kept_as_one_worker_keeps_them(planted, settings):
    _done(_detect(planted, settings, 1))
    first, second = DuplicateClass.objects.filter(collection=planted).order_by("representative")[:2]
    first.status, second.status = "accepted", "split"
    first.save(), second.save()
    Document.objects.create(collection=planted, docno="late", text=Document.objects.get(
        collection=planted, docno=first.representative).text + " and one more")
    whole_job = _done(_detect(planted, settings, 1))
    whole = _classes(planted)
    job = _done(_detect(planted, settings, 3))
    assert _classes(planted) == whole
    assert "2 classes already decided were kept" in job.result["lines"] == whole_job.result["lines"]
    assert job.parts.count() == 3
    # the decided classes are as they were; their documents (and the late copy of one) are in no proposed class
    decided = {c[0]: c for c in whole if c[1] != "proposed"}
    assert set(decided) == {first.representative, second.representative}
    proposed = {d for c in whole if c[1] == "proposed" for d in (c[0], *(m for m, _ in c[5]))}
    assert first.representative not in proposed and "late" not in proposed


@pytest.mark.django_db
def test_too_few_documents_or_bad_parameters_are_not_split(planted, settings):
    settings.DUPLICATES_PART_MIN = 1000  # 1,680 documents: fewer than two parts of 1,000
    assert _done(_detect(planted, settings, 3)).parts.count() == 0
    settings.DUPLICATES_PART_MIN = 300
    job = _detect(planted, settings, 3, params={"threshold": 2, "shingle": 3})
    assert job.status == Job.Status.FAILED and job.parts.count() == 0
    assert "threshold must be above 0 and at most 1" in job.error and "\n" not in job.error


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("killed", ["while running it", "right after claiming it"])
def test_a_part_whose_worker_died_is_done_by_another_worker_once_and_the_classes_are_the_same(
        planted, settings, client, organizer, killed):
    _done(_detect(planted, settings, 1))
    whole = _classes(planted)
    DuplicateClass.objects.filter(collection=planted).delete()
    settings.TASKS = DB_TASKS
    job = _detect(planted, settings, 2)
    run_worker("--max-tasks", "1")  # plans: 2 parts queued
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == (Job.Status.RUNNING, 0, 2)
    client.force_login(organizer)
    assert "0 of 2 parts done (waiting for workers)" in client.get(f"/jobs/{job.pk}/?fragment=1").content.decode()
    dead = job.parts.order_by("pk")[1]
    kill_worker_of(dead, began=killed == "while running it")
    run_worker()
    job = _done(job)
    assert _classes(planted) == whole
    assert (job.done, job.total) == (2, 2)
    assert job.result["lines"][0].startswith(f"{planted.documents.count():,} documents read: ")
    dead.refresh_from_db()
    assert dead.status == Job.Status.DONE and dead.params["retried"]
    assert_each_part_done_once("workbench.corpora.duplicate_tasks.duplicates_part", "workbench.corpora.duplicate_tasks.join_duplicates", 2)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "classes proposed" in page

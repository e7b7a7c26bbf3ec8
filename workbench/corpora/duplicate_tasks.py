"""The near-duplicate detection job (``workbench.corpora.duplicates``; re-exported by ``workbench.tasks``). With
``JOB_PARTS`` > 1 and at least ``DUPLICATES_PART_MIN`` documents a part, it is split into parts any worker
claims (``workbench.jobs.subjobs``): each part computes the MinHash signatures of one slice of the documents (most of
the time), the join finds the classes among all of them as one worker does and stores them in one transaction."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django_tasks import task

from workbench.collections import files as store
from workbench.corpora import duplicates
from workbench.formats import neardup
from workbench.jobs import lifecycle as jobs
from workbench.jobs import subjobs
from workbench.models import Job

#: fewest documents a part: a part's own cost (a worker claiming it, its signatures written and read back,
#: about a second) must stay small beside its work (about 0.2 ms a short passage, 1 s for 5,000)
PART_MIN = 5000


def _params(job: Job) -> dict:
    return {"threshold": job.params.get("threshold", neardup.DEFAULT_THRESHOLD),
            "shingle": job.params.get("shingle", neardup.DEFAULT_SHINGLE)}


def _slices(job: Job) -> list[dict]:
    """The parts of a split detection (primary key ranges of about the same count of documents); [] (one
    worker) with ``JOB_PARTS`` 1, too few documents, or parameters one worker refuses in one line."""
    shares = int(getattr(settings, "JOB_PARTS", 1) or 1)
    if shares <= 1:
        return []
    try:
        duplicates.validate_detection_params(**_params(job))
    except (ValidationError, TypeError):
        return []
    minimum = int(getattr(settings, "DUPLICATES_PART_MIN", PART_MIN) or PART_MIN)
    return duplicates.duplicates_slices(job.collection, shares, minimum)


def _finish(progress: jobs.Progress, summary: duplicates.DetectionSummary) -> None:
    members = sum(len(c.members) for c in summary.classes)
    progress.finish(lines=[f"{summary.documents:,} documents read: {len(summary.classes):,} classes proposed "
                           f"({members:,} documents that need not be judged on their own)"]
                    + ([f"{summary.kept:,} classes already decided were kept"] if summary.kept else []))


@task()
def find_duplicates(job_id: int) -> None:
    """Near-duplicate classes of the collection's documents (``workbench.corpora.duplicates.duplicates_detect``), split
    into parts (:func:`duplicates_part`, :func:`join_duplicates`) with ``JOB_PARTS`` > 1 and enough documents."""
    job = Job.objects.get(pk=job_id)
    slices = _slices(job)
    if slices or job.parts.exists():  # split (a planner retried after it split keeps its parts)
        subjobs.split(job_id, task=duplicates_part, parts=slices, join=join_duplicates, on_failed=_discard_parts)
        return
    with jobs.running(job_id) as progress:
        job = progress.job
        total = job.collection.documents.count()
        progress.step(f"reading {total:,} documents", done=0, total=total)
        _finish(progress, duplicates.duplicates_detect(
            collection=job.collection, **_params(job),
            progress=lambda n: progress.step(f"signatures of {n:,} of {total:,} documents", done=n)))


@task(takes_context=True)
def duplicates_part(context, job_id: int) -> None:
    """One part of a split detection: the signatures of its slice of the documents, kept for the join."""
    with subjobs.part(job_id, context) as progress:
        if progress is None:
            return
        job, parent = progress.job, progress.job.parent
        said, total = f"part {job.params['part'] + 1} of {parent.total}", job.params["documents"]
        progress.step(f"{said}: reading about {total:,} documents", done=0, total=total)
        subjobs.keep(progress, duplicates.duplicates_signatures(
            collection=job.collection, start=job.params["start"], stop=job.params["stop"], **_params(parent),
            progress=lambda n: progress.step(f"{said}: signatures of {n:,} of about {total:,} documents", done=n)))


@task(takes_context=True)
def join_duplicates(context, job_id: int) -> None:
    """The classes of a split detection from its parts' signatures (in order), stored as one worker stores them."""
    job = Job.objects.get(pk=job_id)
    if job.finished or subjobs.superseded(job, context):
        return
    with jobs.running(job_id) as progress:
        try:
            job = progress.job
            progress.step(f"joining the parts: reading the signatures of {job.total} parts")
            _finish(progress, duplicates.duplicates_join(
                collection=job.collection, slices=subjobs.each_output(job), **_params(job),
                progress=lambda n: progress.step(f"{n:,} documents read by {job.total} parts: finding the classes")))
        finally:
            _discard_parts(job)


def _discard_parts(job: Job) -> None:
    """A split detection's parts' signatures removed (its join ended, or it failed)."""
    store.delete_tree(subjobs.parts_folder(job))


# the planner and the join each store the classes in one transaction, a part writes only its own signatures:
# each is retried once if its worker died (a planner retried after it split keeps its parts)
# its kind (retried, split into parts) is declared in workbench.tasks.JOB_KINDS

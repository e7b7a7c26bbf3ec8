"""Long jobs split into parts (sub-jobs) that any worker claims, on any machine.

A job's task *plans* (:func:`split`): it records one part per slice of the work (a batch of topics, of runs,
a section) as a :class:`~workbench.models.Job` whose ``parent`` is the job, and queues each part's task in the
same transaction; ``db_worker`` processes claim them (django-tasks-db: ``SELECT … FOR UPDATE SKIP LOCKED`` on
PostgreSQL), so each part runs on one worker. A part's task opens :func:`part` and stores what it found with
:func:`keep` (in the file store, :func:`parts_folder`: another machine may join them); the last part
to finish queues the job's *join* task once, which reads every part's output in order (:func:`outputs`)
and finishes the job as it finished before it was split. The result never depends on how many workers ran it.

The job shows the progress of all: ``done`` of ``total`` parts. A part whose worker died is settled by the
sweep (``workbench.jobs.lifecycle``) like any job: queued again once (registered with :func:`recovery`), then the job
fails saying which part could not finish. A part's task that was superseded (a retry queued it again) or
that finds its part done does nothing: no part's work is done twice. A job may name a clean-up (``split``'s
``on_failed``: its staged upload removed, say) called once if it fails in a part, or its join dies.
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import json
import logging
from collections.abc import Iterator, Sequence

from django.db import transaction
from django.utils import timezone
from django.utils.module_loading import import_string

from workbench.collections import files as store
from workbench.jobs import lifecycle as jobs
from workbench.models import Job

__all__ = ["balanced", "each_output", "keep", "outputs", "part", "recovery", "split", "superseded"]

logger = logging.getLogger("workbench.jobs.lifecycle")


def superseded(job: Job, context) -> bool:
    """This task run is not the one the job points to (the sweep queued it again): it must do nothing."""
    return bool(job.task_id) and context is not None and job.task_id != str(context.task_result.id)[:64]


def balanced(sizes: Sequence[int], parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous slices ``(start, stop)`` of items of these sizes (in their order), each of about the
    same total size and none empty (fewer when there are fewer items)."""
    parts = max(1, min(parts, len(sizes)))
    totals = list(itertools.accumulate(sizes, initial=0))
    cuts = [0]
    for i in range(1, parts):
        target = totals[-1] * i / parts
        at = bisect.bisect_left(totals, target, lo=cuts[-1] + 1, hi=len(sizes) - (parts - i))
        if at > cuts[-1] + 1 and target - totals[at - 1] < totals[at] - target:
            at -= 1  # the cut just before the target is the nearer
        cuts.append(at)
    cuts.append(len(sizes))
    return list(itertools.pairwise(cuts))


def split(job_id: int, *, task, parts: Sequence[dict], join, on_failed=None) -> Job:
    """Mark the job running and queue ``task(part_id)`` for each of ``parts`` (the parameters of each part),
    in one transaction; ``join(job_id)`` is queued once the last part is done; ``on_failed(job)`` (a function
    of a module) is called once if the job fails in a part or its join dies. A job split before (its planner
    was retried) keeps its parts."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job_id)
        if job.parts.exists():
            return job
        now = timezone.now()
        job.status, job.started_at, job.heartbeat_at = Job.Status.RUNNING, job.started_at or now, now
        job.done, job.total, job.step = 0, len(parts), f"0 of {len(parts)} parts done (waiting for workers)"
        job.params = {**job.params, "join": join.module_path}
        if on_failed is not None:
            job.params["on_failed"] = f"{on_failed.__module__}.{on_failed.__qualname__}"
        job.save()
        for index, params in enumerate(parts):
            child = Job.objects.create(kind=f"{job.kind} (part)"[:64], parent=job, collection=job.collection,
                                       started_by=job.started_by, params={**params, "part": index})
            result = task.enqueue(child.pk)
            Job.objects.filter(pk=child.pk, task_id="").update(task_id=str(result.id)[:64])
    job.refresh_from_db()
    return job


@contextlib.contextmanager
def part(job_id: int, context=None) -> Iterator[jobs.Progress | None]:
    """Run a part (``None``: nothing to do, it is done or superseded, or its job has failed); when the block
    ends the part is done (or failed, and so is its job) and the job advances."""
    child = Job.objects.select_related("parent").get(pk=job_id)
    parent = child.parent
    if child.status == Job.Status.DONE or superseded(child, context) or parent.status != Job.Status.RUNNING:
        if parent.status == Job.Status.FAILED and not child.finished:
            Job.objects.filter(pk=child.pk).update(status=Job.Status.FAILED, error="its job failed in another part",
                                                   finished_at=timezone.now())
        yield None
        return
    with jobs.running(job_id) as progress:
        yield progress
    child.refresh_from_db()
    if child.status == Job.Status.FAILED:
        _fail(parent.pk, child)
    else:
        _advance(parent.pk)


def keep(progress: jobs.Progress, data) -> None:
    """What the part found (bytes, or JSON data), for the join."""
    job = progress.job
    name = f"{parts_folder(job.parent)}/{job.params['part']}"
    if isinstance(data, bytes):
        store.put_bytes(f"{name}.bin", data)
    else:
        store.put_bytes(f"{name}.json", json.dumps(data).encode())


def parts_folder(job: Job) -> str:
    """Where the parts of ``job`` keep their outputs: named by its id and its creation time, so that a job that
    has the id of an older one (a database reset since, or rows rolled back) never reads that one's outputs."""
    return f"jobs/{job.pk}/parts-{job.created_at:%Y%m%d%H%M%S%f}"


def outputs(job: Job) -> list:
    """Every part's output (bytes, or JSON data), in the parts' order."""
    return list(each_output(job))


def each_output(job: Job) -> Iterator:
    """Every part's output, in the parts' order, read one at a time (a join that lets each go once read holds
    one part's output at most)."""
    for index in range(job.parts.count()):
        name = f"{parts_folder(job)}/{index}"
        data = store.exists(f"{name}.json")
        with store.open_file(f"{name}.json" if data else f"{name}.bin") as handle:
            yield json.loads(handle.read()) if data else handle.read()


def _advance(parent_id: int) -> None:
    """Count the parts done (the job locked: two parts finishing at once count one after the other); the
    last one queues the join, once."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=parent_id)
        if job.status != Job.Status.RUNNING:
            return
        done = job.parts.filter(status=Job.Status.DONE).count()
        job.done, job.heartbeat_at = done, timezone.now()
        job.step = f"{done} of {job.total} parts done" + ("; joining them" if done == job.total else "")
        job.save(update_fields=["done", "step", "heartbeat_at"])
        if done < job.total or job.params.get("joining"):
            return
        Job.objects.filter(pk=job.pk).update(params={**job.params, "joining": True})
        result = import_string(job.params["join"]).enqueue(job.pk)
        Job.objects.filter(pk=job.pk).update(task_id=str(result.id)[:64])


def _fail(parent_id: int, child: Job) -> None:
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=parent_id)
        if job.finished:
            return
        index = (child.params or {}).get("part", 0)
        job.status, job.finished_at = Job.Status.FAILED, timezone.now()
        job.error = f"part {index + 1} of {job.total}: {child.error}"[:2000]
        job.save(update_fields=["status", "finished_at", "error"])
    _failed(job)


def _failed(job: Job) -> None:
    """The failed job's own clean-up (``split``'s ``on_failed``), if it names one; a clean-up that fails is
    logged (it never stops the sweep or a part)."""
    name = (job.params or {}).get("on_failed")
    if not name:
        return
    try:
        import_string(name)(job)
    except Exception as exc:  # noqa: BLE001 - left for a later clean-up
        logger.warning("job %s: its clean-up after failing did not finish: %s", job.pk, exc)


def _part_died(child: Job) -> None:
    """A part whose worker died twice: its job fails saying so."""
    if child.parent_id:
        _fail(child.parent_id, child)


def recovery(part_task, join_task, *, join_retry: bool = True) -> None:
    """Register the sweep's plan: a part whose worker died is queued again once (it writes only its own
    output), and fails its job if it dies again; so is the join with ``join_retry`` (it reads the parts and
    writes the job's output whole), else its job fails."""
    jobs.recovery(part_task, retry=True, on_failed=_part_died)
    jobs.recovery(join_task, retry=join_retry, on_failed=_failed)

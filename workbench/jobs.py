"""Background jobs: long work started from a page (or a script) and run by ``manage.py db_worker``.

A job is a :class:`~workbench.models.Job` row (who started it, its parameters, progress, result, error)
plus a django-tasks task that does the work. An app's ``tasks.py`` holds its tasks; each is thin, like a
command: it opens :func:`running` and calls one service::

    @task()
    def build_release(job_id: int) -> None:
        with jobs.running(job_id) as progress:
            progress.step("writing the zip")
            ...
            progress.finish(url=..., label="Download")

A view calls :func:`job_start` and redirects to the job's page, which follows the progress. A job that
raises is marked failed with one line saying why; its service writes in one transaction (and files
aside, then renamed into place), so nothing is left half-written. A job whose worker died stops showing
progress: after ``STALE_AFTER`` without a heartbeat it is shown as failed.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from workbench.models import Collection, Job

__all__ = ["STALE_AFTER", "Progress", "job_output", "job_start", "job_view_state", "one_line", "running", "write_output"]

#: a running job that has not reported for this long has lost its worker (``JOB_STALE_AFTER_SECONDS``)
STALE_AFTER = timedelta(seconds=getattr(settings, "JOB_STALE_AFTER_SECONDS", 600))
#: problems a failed job's report lists (the count of the others is kept)
MAX_PROBLEMS = 1000


def job_start(task, *, kind: str, user=None, collection: Collection | None = None, params: dict | None = None
              ) -> Job:
    """Record a job and queue its task (``task.enqueue(job_id)``); the worker picks it up."""
    job = Job.objects.create(kind=kind, started_by=user if user is not None and user.is_authenticated else None,
                             collection=collection, params=params or {})
    result = task.enqueue(job.pk)
    Job.objects.filter(pk=job.pk).update(task_id=str(result.id)[:64])
    job.refresh_from_db()
    return job


class Progress:
    """What a running task tells its job: the current step, how far it is, and its result."""

    def __init__(self, job: Job) -> None:
        self.job = job

    def step(self, text: str, *, done: int | None = None, total: int | None = None) -> None:
        self.job.step = text[:500]
        if done is not None:
            self.job.done = done
        if total is not None:
            self.job.total = total
        self.job.heartbeat_at = timezone.now()
        self.job.save(update_fields=["step", "done", "total", "heartbeat_at"])

    def finish(self, **result) -> None:
        self.job.result = result


def one_line(exc: BaseException) -> str:
    """An exception as the one line a job's page shows."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    problems = getattr(exc, "problems", None)
    if problems and len(problems) > 1:
        text = f"{problems[0]} (and {len(problems) - 1} more problems)"
    return text[:2000]


@contextlib.contextmanager
def running(job_id: int) -> Iterator[Progress]:
    """Mark the job running for the block; done when the block ends, failed (one line) if it raises.
    The failure is recorded rather than raised again: the job says why, nothing else needs to."""
    now = timezone.now()
    Job.objects.filter(pk=job_id).update(status=Job.Status.RUNNING, started_at=now, heartbeat_at=now)
    job = Job.objects.get(pk=job_id)
    progress = Progress(job)
    try:
        yield progress
    except Exception as exc:  # noqa: BLE001 - any failure of the work is the job's, told in one line
        job.status, job.error = Job.Status.FAILED, one_line(exc)
        problems = getattr(exc, "problems", None)
        if problems:  # the report lists every problem (file:line: what), not only the first
            job.result = {"problems": [str(p)[:1000] for p in problems[:MAX_PROBLEMS]],
                          "more_problems": max(0, len(problems) - MAX_PROBLEMS)}
    else:
        job.status = Job.Status.DONE
    job.finished_at = job.heartbeat_at = timezone.now()
    job.save()


def job_output(job: Job, filename: str) -> Path:
    """Where a job's file lives: ``VAR_DIR/jobs/<id>/<filename>``."""
    return Path(settings.VAR_DIR) / "jobs" / str(job.pk) / Path(filename).name


def write_output(job: Job, filename: str, data: bytes) -> Path:
    """Write a job's file whole or not at all (written aside, then renamed into place)."""
    path = job_output(job, filename)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, aside = tempfile.mkstemp(dir=path.parent, prefix=".partial.")
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    os.replace(aside, path)
    return path


def _duration(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    return f"{seconds // 60} minutes" if seconds >= 120 else f"{seconds} seconds"


def job_view_state(job: Job) -> tuple[str, str]:
    """(status, error) as a page shows them: a running job without a heartbeat for ``STALE_AFTER`` has lost
    its worker (killed, or the machine restarted) and is shown as failed."""
    stale = timedelta(seconds=getattr(settings, "JOB_STALE_AFTER_SECONDS", STALE_AFTER.total_seconds()))
    if job.status == Job.Status.RUNNING and job.heartbeat_at and timezone.now() - job.heartbeat_at > stale:
        return Job.Status.FAILED, (f"the worker stopped before the job finished (no progress for "
                                   f"{_duration(stale)}); nothing it was writing was kept")
    return job.status, job.error

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
progress: after ``STALE_AFTER`` without a heartbeat it is shown as failed, and the next ``db_worker`` (at
start-up and every minute; or ``manage.py sweep_jobs``) settles it: a job registered as safe to retry
(:func:`recovery`: it writes in one transaction, so a retry cannot double anything) is queued again, once;
any other, or one already retried, is marked failed with its django-tasks row, and its staged upload is
removed. While a job runs, its worker reports a heartbeat every few seconds even in a long step.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.utils import timezone
from django.utils.module_loading import import_string

from workbench.collections import files as store
from workbench.collections.selectors import is_organizer, may_organize, organized_collections
from workbench.collections.uploads import staged_prefix
from workbench.models import Collection, Job

__all__ = ["STALE_AFTER", "JobStartLimitMiddleware", "Progress", "TooManyJobStarts", "check_start_rate", "heartbeat", "job_output", "job_start", "job_view_state", "jobs_visible_to", "may_see_job", "one_line", "plans_from",
           "recovery", "running", "sweep_dead_jobs", "write_output"]

logger = logging.getLogger("workbench.jobs.lifecycle")

#: a running job that has not reported for this long has lost its worker (``JOB_STALE_AFTER_SECONDS``)
STALE_AFTER = timedelta(seconds=getattr(settings, "JOB_STALE_AFTER_SECONDS", 600))
#: problems a failed job's report lists (the count of the others is kept)
MAX_PROBLEMS = 1000


class TooManyJobStarts(Exception):
    """A user started more jobs in the last minute than ``JOB_STARTS_PER_MINUTE``; the page answers 429."""

    def __init__(self, started: int, limit: int, wait: int) -> None:
        self.started, self.limit, self.wait = started, limit, wait
        super().__init__(f"you started {started} jobs in the last minute, the most one person may start is {limit} "
                         f"a minute; try again in {wait} seconds")


def check_start_rate(user) -> None:
    """Refuse (:class:`TooManyJobStarts`) a user who started ``JOB_STARTS_PER_MINUTE`` jobs in the last minute;
    scripts and commands (no user) are not limited."""
    limit = int(getattr(settings, "JOB_STARTS_PER_MINUTE", 0) or 0)
    if user is None or not user.is_authenticated or limit <= 0:
        return
    since = timezone.now() - timedelta(minutes=1)
    recent = list(Job.objects.filter(started_by=user, created_at__gte=since).order_by("-created_at")
                  .values_list("created_at", flat=True)[:limit])
    if len(recent) >= limit:
        wait = max(1, int((recent[-1] + timedelta(minutes=1) - timezone.now()).total_seconds()) + 1)
        raise TooManyJobStarts(len(recent), limit, wait)


class JobStartLimitMiddleware:
    """A request refused for starting too many jobs answers 429 with a page saying when to try again."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, TooManyJobStarts):
            return None
        from django.shortcuts import render

        response = render(request, "workbench/too_many_jobs.html", {"reason": str(exception), "back": request.path},
                          status=429)
        response["Retry-After"] = str(exception.wait)
        return response


def job_start(task, *, kind: str, user=None, collection: Collection | None = None, params: dict | None = None
              ) -> Job:
    """Record a job and queue its task (``task.enqueue(job_id)``); the worker picks it up. A person who
    started ``JOB_STARTS_PER_MINUTE`` jobs in the last minute is refused (:class:`TooManyJobStarts`)."""
    check_start_rate(user)
    job = Job.objects.create(kind=kind, started_by=user if user is not None and user.is_authenticated else None,
                             collection=collection, params=params or {})
    result = task.enqueue(job.pk)
    Job.objects.filter(pk=job.pk).update(task_id=str(result.id)[:64])
    job.refresh_from_db()
    return job


def may_see_job(user, job: Job) -> bool:
    """Whoever started it, and the organizers of its collection (a job of no collection: every organizer, as a
    collection with no organizers)."""
    if not user.is_authenticated:
        return False
    if job.started_by_id == user.pk:
        return True
    return is_organizer(user) if job.collection is None else may_organize(user, job.collection)


def jobs_visible_to(user) -> QuerySet[Job]:
    """The jobs ``user`` may see (``may_see_job``), for the jobs listing."""
    if user.is_superuser:
        return Job.objects.all()
    mine = Q(started_by_id=user.pk) | Q(collection__in=organized_collections(user).values("pk"))
    return Job.objects.filter(mine | Q(collection=None) if is_organizer(user) else mine)


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


def job_output(job: Job, filename: str) -> str:
    """The storage name of a job's file (``workbench.collections.files``): ``jobs/<id>/<filename>``."""
    return f"jobs/{job.pk}/{Path(filename).name}"


def write_output(job: Job, filename: str, data: bytes) -> str:
    """Store a job's file whole or not at all (on disk written aside, then renamed into place); its name."""
    return store.put_bytes(job_output(job, filename), data)


def _duration(span: timedelta) -> str:
    seconds = int(span.total_seconds())
    return f"{seconds // 60} minutes" if seconds >= 120 else f"{seconds} seconds"


def job_view_state(job: Job) -> tuple[str, str]:
    """(status, error) as a page shows them: a running job without a heartbeat for ``STALE_AFTER`` has lost
    its worker (killed, or the machine restarted) and is shown as failed."""
    stale = stale_after()
    if job.status == Job.Status.RUNNING and job.heartbeat_at and timezone.now() - job.heartbeat_at > stale:
        return Job.Status.FAILED, (f"the worker stopped before the job finished (no progress for "
                                   f"{_duration(stale)}); nothing it was writing was kept")
    return job.status, job.error


#: what the sweep does with a dead job of a task (by its module path): retry it once, call ``on_failed(job)``
_RECOVERY: dict[str, dict] = {}
DIED = "the worker stopped before the job finished"


#: called before the sweep reads ``_RECOVERY``: the job kinds' registry (``workbench.jobs.kinds``), which imports
#: the apps' tasks the first time, so that their plans are known without importing them at start-up
_discover_plans: list = []


def plans_from(discover) -> None:
    """``discover()`` registers every task's plan (idempotent); the sweep calls it first."""
    _discover_plans[:] = [discover]


def recovery(task, *, retry: bool = False, on_failed=None) -> None:
    """Register what a dead job of ``task`` needs: ``retry`` (safe: the task writes in one transaction and
    reads only its inputs, still there) and ``on_failed(job)``, called once the job is marked failed."""
    _RECOVERY[task.module_path] = {"retry": retry, "on_failed": on_failed}


def stale_after() -> timedelta:
    return timedelta(seconds=getattr(settings, "JOB_STALE_AFTER_SECONDS", STALE_AFTER.total_seconds()))


def heartbeat(task_ids: list[str]) -> int:
    """The running jobs of these django-tasks rows are alive now (their worker's heartbeat)."""
    if not task_ids:
        return 0
    return Job.objects.filter(task_id__in=task_ids, status=Job.Status.RUNNING).update(heartbeat_at=timezone.now())


def _task_row(job: Job):
    """The django-tasks row of ``job``, if the database backend keeps one."""
    from django_tasks_db.models import DBTaskResult

    if not job.task_id:
        return None
    try:
        return DBTaskResult.objects.filter(id=job.task_id).first()
    except ValidationError:  # not a task row's id (another backend)
        return None


def _fail_row(row, job: Job, now) -> None:
    from django_tasks.base import TaskResultStatus

    if row is not None and row.status == TaskResultStatus.RUNNING:
        row.status, row.finished_at = TaskResultStatus.FAILED, now
        row.exception_class_path = "workbench.jobs.lifecycle.WorkerDied"
        row.traceback = f"{DIED} (no heartbeat since {job.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC)"
        row.save(update_fields=["status", "finished_at", "exception_class_path", "traceback"])


def _retry(job: Job, row) -> None:
    """Queue the job's task again (after the job row says so, so that a task run at once finds it queued)."""
    job.params = {**(job.params or {}), "retried": True}
    job.status, job.heartbeat_at, job.step = Job.Status.QUEUED, None, f"{DIED}; started again (once)"
    job.save(update_fields=["params", "status", "heartbeat_at", "step"])
    arguments = row.args_kwargs or {}
    result = import_string(row.task_path).enqueue(*arguments.get("args", []), **arguments.get("kwargs", {}))
    Job.objects.filter(pk=job.pk).update(task_id=str(result.id)[:64])


def _remove_leftovers(job: Job) -> None:
    """The dead job's staged upload (only under ``uploads/``, never anything else) and half-written outputs."""
    try:
        store.delete_tree(staged_prefix((job.params or {}).get("directory")))
    except Exception as exc:  # noqa: BLE001 - the store unreachable (S3 down): left for a later clean-up, never
        logger.warning("job %s: its staged files were not removed: %s", job.pk, exc)  # stops the sweep
    partial = store.local_path(job_output(job, "x"))
    for aside in partial.parent.glob(".partial.*") if partial is not None and partial.parent.is_dir() else ():
        aside.unlink(missing_ok=True)


def _settle(job_id: int, cutoff, now) -> str | None:
    """Retry or fail one dead job (re-checked under lock); what was done, None if it was alive after all."""
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id, status=Job.Status.RUNNING,
                                                     heartbeat_at__lt=cutoff).first()
        if job is None:
            return None
        row = _task_row(job)
        _fail_row(row, job, now)
        plan = _RECOVERY.get(row.task_path if row is not None else "", {})
        retried = bool((job.params or {}).get("retried"))
        if plan.get("retry") and not retried and row is not None:
            _retry(job, row)
            return "retried"
        job.status, job.finished_at = Job.Status.FAILED, now
        job.error = (f"{DIED} (no progress for {_duration(stale_after())}"
                     + ("; it had been started again once" if retried else "") + "); nothing it was writing was kept")
        job.save(update_fields=["status", "finished_at", "error"])
        if plan.get("on_failed"):
            plan["on_failed"](job)
    _remove_leftovers(job)
    return "failed"


def _claimed_then_lost(cutoff) -> None:
    """A worker killed between claiming a task and marking its job running leaves the job queued and its task
    row running: once the row is older than the stale delay, the job is taken as running since then, so
    that the sweep settles it like any job whose worker died."""
    from django_tasks.base import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    rows = DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING, started_at__lt=cutoff)
    for row_id, started in rows.values_list("id", "started_at"):
        Job.objects.filter(status=Job.Status.QUEUED, task_id=str(row_id)).update(
            status=Job.Status.RUNNING, started_at=started, heartbeat_at=started)


def sweep_dead_jobs(now=None) -> list[tuple[int, str]]:
    """Settle every running job whose worker stopped reporting ``STALE_AFTER`` ago: (job id, "retried" or
    "failed") for each. Each is settled in its own transaction, re-checked there, so two sweeping workers
    never settle one job twice."""
    for discover in _discover_plans:
        discover()
    now = now or timezone.now()
    cutoff = now - stale_after()
    settled = []
    _claimed_then_lost(cutoff)
    # a job waiting for its parts (workbench.jobs.subjobs) is alive while one of them is (the parts are swept themselves)
    waiting = Job.objects.filter(parent=OuterRef("pk"), status__in=[Job.Status.QUEUED, Job.Status.RUNNING])
    dead = Job.objects.filter(status=Job.Status.RUNNING, heartbeat_at__lt=cutoff).exclude(Exists(waiting))
    for job_id in dead.values_list("pk", flat=True):
        what = _settle(job_id, cutoff, now)
        if what:
            settled.append((job_id, what))
    return settled

"""``manage.py db_worker``: django-tasks' database worker, which also keeps the job it runs alive (a heartbeat
every few seconds, even in a long step) and settles the jobs of workers that died: at start-up and every
minute it runs :func:`workbench.jobs.sweep_dead_jobs` (a job safe to retry is queued again once; any other is
marked failed with its task row, its staged files removed)."""

from __future__ import annotations

import logging
import threading

from django.db import DatabaseError, close_old_connections, connection
from django_tasks_db.management.commands.db_worker import Command as BaseWorkerCommand

from workbench import jobs

logger = logging.getLogger("workbench.worker")

#: how often the dead jobs are swept (seconds); at most a third of the stale delay
SWEEP_EVERY = 60.0


class Command(BaseWorkerCommand):
    help = BaseWorkerCommand.help + ". Also sweeps the jobs of workers that died (see workbench.jobs)."

    def handle(self, *args, **options):
        worker_id = options["worker_id"]
        _sweep()
        stop = threading.Event()
        beat = threading.Thread(target=_beating, args=(worker_id, stop), name="job-heartbeat", daemon=True)
        beat.start()
        try:
            return super().handle(*args, **options)
        finally:
            stop.set()


def _sweep() -> None:
    try:
        for job_id, what in jobs.sweep_dead_jobs():
            logger.warning("job %s: its worker stopped; %s", job_id, what)
    except DatabaseError as exc:  # a locked or unreachable database: the next sweep tries again
        logger.warning("sweeping dead jobs failed: %s", exc)


def _beating(worker_id: str, stop: threading.Event) -> None:
    """Every few seconds: the heartbeat of this worker's running job; every ``SWEEP_EVERY``: a sweep."""
    from django_tasks.base import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    every = max(0.5, min(10.0, jobs.stale_after().total_seconds() / 3))
    sweep_every = max(every, min(SWEEP_EVERY, jobs.stale_after().total_seconds() / 3))
    since_sweep = 0.0
    try:
        while not stop.wait(every):
            try:
                close_old_connections()
                mine = [str(pk) for pk, workers in DBTaskResult.objects.filter(status=TaskResultStatus.RUNNING)
                        .values_list("id", "worker_ids") if worker_id in (workers or [])]
                jobs.heartbeat(mine)
            except DatabaseError as exc:  # the job's own transaction may hold the lock: beat again later
                logger.info("heartbeat skipped: %s", exc)
            since_sweep += every
            if since_sweep >= sweep_every:
                since_sweep = 0.0
                _sweep()
    finally:
        connection.close()

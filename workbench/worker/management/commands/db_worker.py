"""``manage.py db_worker``: django-tasks' database worker, which also keeps the job it runs alive (a heartbeat
every few seconds, even in a long step) and settles the jobs of workers that died: at start-up and every
minute it runs :func:`workbench.jobs.lifecycle.sweep_dead_jobs` (a job safe to retry is queued again once; any other is
marked failed with its task row, its staged files removed). A locked or unreachable database makes it wait
and try again, never exit (:mod:`workbench.worker.loop`)."""

from __future__ import annotations

import logging
import os
import threading

from django.conf import settings
from django.core.management.base import CommandError
from django.db import DatabaseError, close_old_connections, connection
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.management.commands.db_worker import Command as BaseWorkerCommand

from workbench.jobs import lifecycle as jobs
from workbench.worker.loop import PatientWorker

logger = logging.getLogger("workbench.worker")

#: how often the dead jobs are swept (seconds); at most a third of the stale delay
SWEEP_EVERY = 60.0


class Command(BaseWorkerCommand):
    help = (BaseWorkerCommand.help + ". Also sweeps the jobs of workers that died (see workbench.jobs.lifecycle) and waits out "
            "a locked or unreachable database.")

    def handle(self, *args, **options):
        worker_id = options["worker_id"]
        # with --reload this process only watches the code and starts a child that runs the jobs (and lowers its
        # own priority): lowering it here too would hand the child twice the setting
        if not (options["reload"] and not options["batch"] and os.environ.get(DJANGO_AUTORELOAD_ENV) != "true"):
            _lower_priority()
        _sweep()
        stop = threading.Event()
        beat = threading.Thread(target=_beating, args=(worker_id, stop), name="job-heartbeat", daemon=True)
        beat.start()
        try:
            return self.work(**options)
        finally:
            stop.set()

    def work(self, *, verbosity: int, queue_name: str, interval: float, batch: bool, backend_name: str,
             startup_delay: bool, reload: bool, max_tasks: int | None, worker_id: str, exclude_queues: str,
             **options) -> None:
        """django-tasks-db's ``handle`` with :class:`~workbench.worker.loop.PatientWorker` as the worker."""
        self.configure_logging(verbosity)
        queue_names = queue_name.split(",")
        excluded = exclude_queues.split(",") if exclude_queues else []
        if excluded and "*" not in queue_names:
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        worker = PatientWorker(queue_names=queue_names, interval=interval, batch=batch, backend_name=backend_name,
                               startup_delay=startup_delay, max_tasks=max_tasks, worker_id=worker_id,
                               excluded_queue_names=excluded)
        if reload and not batch:
            if os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":  # only the reloaded child handles signals
                worker.configure_signals()
            run_with_reloader(worker.run)
        else:
            worker.configure_signals()
            worker.run()


def _lower_priority() -> None:
    """``WORKER_NICE`` added to this process's niceness (the jobs' threads and the processes they start inherit
    it): the web server's requests get the processor first when both want it."""
    step = max(0, min(19, settings.WORKER_NICE))
    if step and hasattr(os, "nice"):
        try:
            os.nice(step)
        except OSError as exc:  # a system that refuses it: the worker runs at the priority it has
            logger.warning("could not lower the worker's priority by %s: %s", step, exc)


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

"""The worker loop of ``manage.py db_worker``, patient with its database.

django-tasks-db's worker exits when its claim loop meets a database error it does not expect: on SQLite, a
write lock held longer than the busy timeout (a long import) raises ``database is locked`` outside the part
it guards, and every idle worker stops for good; an unreachable PostgreSQL server does the same. Here a
database error in the loop logs one line, closes the connection, waits (1 s, doubling, at most
``MAX_WAIT``) and tries again; the worker never exits for it.

A task's own failure is the task's: it goes through the job's error path (:func:`workbench.jobs.lifecycle.running`
records it in one line) and the task row is marked failed, as always. What changes is the recording of a
task's outcome: when the database refuses it, the worker waits and writes it again (rather than giving up
after three tries and leaving the row running); and when the job could not record its own failure (the same
lock), the worker records it for the job once the database answers again.
"""

from __future__ import annotations

import logging
import random
import time

from django.db import DatabaseError, InterfaceError, OperationalError, close_old_connections, connections
from django.utils import timezone
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction

from workbench.models import Job

logger = logging.getLogger("workbench.worker")

#: the longest wait between two tries of a database that refused (seconds)
MAX_WAIT = 30.0
#: errors of a database that is locked, restarting or unreachable: worth another try, unlike a task's own
UNAVAILABLE = (OperationalError, InterfaceError)


def next_wait(waited: float) -> float:
    """The wait after one of ``waited`` seconds: 1 s first, then doubling, at most ``MAX_WAIT``."""
    return min(MAX_WAIT, max(1.0, waited * 2))


def one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


def close_connections() -> None:
    """Drop every database connection (a broken one is opened again at the next query)."""
    for conn in connections.all(initialized_only=True):
        try:
            conn.close()
        except DatabaseError:  # already broken: nothing to close
            pass


class PatientWorker(Worker):
    """django-tasks-db's worker, whose loop survives a locked or unreachable database."""

    def run(self) -> None:
        logger.info("Starting worker worker_id=%s queues=%s", self.worker_id, ",".join(self.queue_names))
        if self.startup_delay and self.interval:
            time.sleep(random.random())  # noqa: S311 - spreads the workers' first claims, nothing secret
        waited = 0.0
        while self.running:
            try:
                if self.turn():
                    return
            except DatabaseError as exc:
                waited = next_wait(waited)
                logger.warning("worker %s: the database refused (%s); trying again in %.0f s",
                               self.worker_id, one_line(exc), waited)
                close_connections()
                time.sleep(waited)
                continue
            if waited:
                logger.warning("worker %s: the database answers again", self.worker_id)
                waited = 0.0

    def turn(self) -> bool:
        """Claim one ready task and run it (or wait ``interval`` when there is none); True when the worker is done
        (``--batch`` with nothing left, or ``--max-tasks`` reached)."""
        close_old_connections()
        tasks = DBTaskResult.objects.ready().filter(backend_name=self.backend_name)
        if not self.process_all_queues:
            tasks = tasks.filter(queue_name__in=self.queue_names)
        if self.excluded_queue_names:
            tasks = tasks.exclude(queue_name__in=self.excluded_queue_names)
        with exclusive_transaction(tasks.db):
            task_result = tasks.get_locked()
            if task_result is not None:  # claimed, so that no other worker runs it
                task_result.claim(self.worker_id)
        if task_result is not None:
            self.run_task(task_result)
        elif self.batch:
            logger.info("No more tasks to run for worker_id=%s - exiting gracefully.", self.worker_id)
            return True
        if self.max_tasks is not None and self._run_tasks >= self.max_tasks:
            logger.info("Run maximum tasks (%d) on worker=%s - exiting gracefully.", self._run_tasks, self.worker_id)
            return True
        close_old_connections()
        if self.running and task_result is None:
            time.sleep(self.interval)
        return False

    def run_task(self, db_task_result: DBTaskResult) -> None:
        """Run the task as django-tasks-db does; its outcome is written again until the database takes it."""
        db_task_result.set_successful = self.patiently(db_task_result.set_successful)
        recorded_failed = self.patiently(db_task_result.set_failed)

        def set_failed(exc: BaseException) -> None:
            recorded_failed(exc)
            if isinstance(exc, DatabaseError):  # the job may not have recorded its failure: the same lock
                self.patiently(_job_failed)(str(db_task_result.id), exc)

        db_task_result.set_failed = set_failed
        super().run_task(db_task_result)

    def patiently(self, write):
        """``write`` tried again, after a wait, while the database is unavailable (and the worker not stopping)."""

        def again(*args, **kwargs):
            waited = 0.0
            while True:
                try:
                    return write(*args, **kwargs)
                except UNAVAILABLE as exc:
                    if not self.running:  # stopping: the row stays running, the next worker's sweep settles it
                        raise
                    waited = next_wait(waited)
                    logger.warning("worker %s: could not record a task's outcome (%s); trying again in %.0f s",
                                   self.worker_id, one_line(exc), waited)
                    close_connections()
                    time.sleep(waited)

        return again


def _job_failed(task_id: str, exc: BaseException) -> None:
    """The job of a task that failed on a database error, if it could not say so itself: failed, in one line."""
    now = timezone.now()
    Job.objects.filter(task_id=task_id, status=Job.Status.RUNNING).update(
        status=Job.Status.FAILED, error=f"the database refused a write ({one_line(exc)}); start the job again",
        finished_at=now, heartbeat_at=now)

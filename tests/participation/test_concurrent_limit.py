"""The run limit holds however many workers check at once: 20 submissions sent together by four teams, each
over a limit of one run, checked by two real ``db_worker`` processes at the same time, leave each team
exactly one accepted run, every time. On SQLite, and on PostgreSQL when ``DATABASE_URL`` names a server
(a fresh database of its own)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.browser.stack import ROOT, _database

pytestmark = [pytest.mark.track, pytest.mark.slow]

TEAMS, PER_TEAM = 4, 5

SETUP = """
from pathlib import Path
from django.contrib.auth.models import User
from participation.models import Team, Track
from participation.services import submission_receive
from participation.tasks import check_submission
from workbench.models import Collection, Topic
from workbench.collections.services import collection_create
c = Collection.objects.filter(slug="race").first() or collection_create(slug="race", name="Race")
Topic.objects.get_or_create(collection=c, qid="301", defaults={{"title": "one"}})
track, _ = Track.objects.get_or_create(collection=c, defaults={{"open": True, "require_description": False,
                                                                "max_runs_per_team": 1}})
Track.objects.filter(pk=track.pk).update(max_runs_per_team={round} + 1)  # each round allows one run more
track.refresh_from_db()
folder = Path("{folder}")
for t in range({teams}):
    team, _ = Team.objects.get_or_create(track=track, name="team{{}}".format(t))
    user, _ = User.objects.get_or_create(username="member{{}}".format(t))
    team.members.add(user)
    for k in range({per_team}):
        path = folder / "r{{}}-{{}}-{{}}.run".format({round}, t, k)
        tag = "team{{}}-r{{}}-{{}}".format(t, {round}, k)
        path.write_text("".join("301 Q0 d{{}} {{}} {{}} {{}}\\n".format(i, i, 10 - i, tag) for i in range(1, 6)))

        class Upload:
            name = path.name
            def temporary_file_path(self, path=path):
                return str(path)
            def close(self):
                pass

        submission_receive(team=team, user=user, upload=Upload(), task=check_submission)
print("queued")
"""

STATE = """
import json
from participation.models import Submission
from workbench.models import Run
rows = list(Submission.objects.values_list("team__name", "status"))
print(json.dumps({"checking": sum(s == "checking" for _, s in rows),
                  "accepted": {t: sum(1 for n, s in rows if n == t and s == "accepted") for t, _ in rows},
                  "runs": {t: Run.objects.filter(collection__slug="race", team=t).count() for t, _ in rows},
                  "problems": sorted({p for p in Submission.objects.filter(status="refused")
                                      .values_list("problems", flat=True) for p in p})[:3]}))
"""


def _manage(env, *args: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("rounds", [2])
def test_two_workers_checking_20_simultaneous_submissions_never_exceed_the_run_limit(tmp_path, rounds):
    with _database(tmp_path) as url:
        env = {**os.environ, "DATABASE_URL": url, "WORKBENCH_VAR_DIR": str(tmp_path / "var"), "PYTHONUNBUFFERED": "1"}
        _manage(env, "migrate", "--noinput")
        folder = tmp_path / "files"
        folder.mkdir()
        for round_ in range(rounds):
            _manage(env, "shell", "-c", SETUP.format(folder=folder, teams=TEAMS, per_team=PER_TEAM, round=round_))
            with open(tmp_path / "workers.log", "a") as log:
                workers = [subprocess.Popen([sys.executable, "manage.py", "db_worker", "--no-reload", "--interval",
                                             "0.1", "--no-startup-delay"], cwd=ROOT, env=env, stdout=log,
                                            stderr=subprocess.STDOUT) for _ in range(2)]
            try:
                deadline = time.monotonic() + 180
                state = json.loads(_manage(env, "shell", "-c", STATE).strip().splitlines()[-1])
                while state["checking"] and time.monotonic() < deadline:
                    time.sleep(0.5)
                    state = json.loads(_manage(env, "shell", "-c", STATE).strip().splitlines()[-1])
            finally:
                for worker in workers:
                    worker.terminate()
                for worker in workers:
                    worker.wait(timeout=20)
            assert state["checking"] == 0, state
            assert state["accepted"] == {f"team{t}": round_ + 1 for t in range(TEAMS)}, (round_, state)
            assert state["runs"] == {f"team{t}": round_ + 1 for t in range(TEAMS)}, (round_, state)
            assert any("the track's limit" in p for p in state["problems"]), state

"""The pictures of the run page, the topic page and a team's results are plain SVG in the page: every topic (or
depth) a mark named with its values, run tags and topic ids escaped, and no plotting library imported to draw
them (a fresh process renders the pages and shows which modules it loaded)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html import unescape
from pathlib import Path

from django.test import Client
from django.urls import reverse

from tests.test_hostile_identifiers import QIDS, TAGS, hostile  # noqa: F401 - the fixture

ROOT = Path(__file__).resolve().parents[2]


def _figure(html: str) -> str:
    [svg] = re.findall(r'<figure class="card"[^>]*>(<svg.*?</svg>)</figure>', html, re.S)
    return svg


def test_the_run_page_draws_every_topic_with_its_values_and_the_names_escaped(hostile):  # noqa: F811
    collection, organizer, _ = hostile
    client = Client()
    client.force_login(organizer)
    tag = "<script>alert(1)</script>"
    svg = _figure(client.get(reverse("evaluation:run", args=[collection.slug, tag]), {"measure": "P.5"})
                  .content.decode())
    assert "<script>" not in svg and "&lt;script&gt;alert(1)&lt;/script&gt;: P.5 per topic" in svg
    titles = [unescape(t) for t in re.findall(r'<g class="topic"><title>([^<]*)</title>', svg)]
    assert sorted(t.split(": this run")[0] for t in titles) == sorted(f"topic {q}" for q in QIDS)
    # the same values as the table under it: this run's P@5 per topic, and all runs' best, median and worst
    report = client.get(reverse("evaluation:run", args=[collection.slug, tag]), {"measure": "P.5"}).context["table"]
    for row in report.data:
        [told] = [t for t in titles if t.startswith(f"topic {row['qid']}: ")]
        for name, value in (("this run", row["score"]), ("median", row["median"]), ("best", row["best"])):
            assert re.search(rf"{name} {re.escape(f'{value:.4f}'.rstrip('0').rstrip('.'))}[, ]", told), told
    assert svg.count('<circle class="score"') == len(QIDS) and "<desc>" in svg and 'role="img"' in svg
    for label in re.findall(r'<text class="topic-id"[^>]*>([^<]*)</text>', svg):
        assert unescape(label).rstrip("…") in "".join(QIDS)  # a long id cut, whole in the mark's title


def test_the_topic_page_draws_the_pool_per_depth(hostile):  # noqa: F811
    collection, organizer, _ = hostile
    client = Client()
    client.force_login(organizer)
    page = client.get(reverse("evaluation:topic", args=[collection.slug, "<q>\"'&"]))
    svg = _figure(page.content.decode())
    depths = page.context["report"]["relevant_by_depth"]
    titles = re.findall(r'<g class="depth"><title>([^<]*)</title>', svg)
    assert titles == [f"depth {r.depth}: {r.pool_size} pooled documents, {r.relevant} relevant"
                      for r in depths.itertuples()]
    assert "pool depth k" in svg and "documents" in svg and svg.count("<polyline") == 2


PROBE = """
import json, os, sys
from pathlib import Path
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth.models import Group, User
from django.test import Client
from participation.models import Submission, Team, Track
from tests.evaluation.tracks import build_track

collection = build_track(Path(sys.argv[1]))
organizer = User.objects.create_user("olga")
organizer.groups.add(Group.objects.get_or_create(name="organizers")[0])
participant = User.objects.create_user("pia")
participant.groups.add(Group.objects.get_or_create(name="participants")[0])
track = Track.objects.create(collection=collection, results_released=True)
team = Team.objects.create(track=track, name="alpha")
team.members.add(participant)
Submission.objects.create(team=team, submitted_by=participant, file_name="alpha.txt", stored="-", sha256="0" * 64,
                          tag="alpha", status=Submission.Status.ACCEPTED, priority=1, run=collection.runs.get(tag="alpha"))
loaded = {}
for who, url in (("olga", "/collections/robust/runs/alpha/"), ("olga", "/collections/robust/topics/301/"),
                 ("olga", "/collections/robust/curves/"), ("pia", "/participate/robust/results/"),
                 ("olga", "/collections/robust/curves/?run=alpha&download=png")):
    client = Client()
    client.force_login(User.objects.get(username=who))
    response = client.get(url)
    loaded[url] = [response.status_code, response.content.count(b"<svg"), "matplotlib" in sys.modules]
print(json.dumps(loaded))
"""


def test_no_page_imports_matplotlib_to_draw_its_pictures_only_a_download_does(tmp_path):
    env = {**os.environ, "WORKBENCH_VAR_DIR": str(tmp_path / "var"), "SERVER_WARM_UP": "0", "PYTHONPATH": str(ROOT),
           "DJANGO_SETTINGS_MODULE": "workbench.settings", "ALLOWED_HOSTS": "testserver", "BOARD_ON_CHANGE": "0"}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded.pop("/collections/robust/curves/?run=alpha&download=png") == [200, 0, True]  # the probe sees it
    assert loaded == {"/collections/robust/runs/alpha/": [200, 1, False],
                      "/collections/robust/topics/301/": [200, 1, False],
                      "/collections/robust/curves/": [200, 1, False],
                      "/participate/robust/results/": [200, 1, False]}

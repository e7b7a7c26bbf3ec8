"""The examples of docs/api.md, run as they are written against a live server (a real socket) with real tokens:
each ``<!-- example: ROLE -->`` block (sh with curl, or Python with requests) in the order of the page, in one
folder holding the files they name (a gzipped run, and each ``<!-- example-file: NAME -->`` block); the test
checks what each prints, as a user reads it, and what it left on the server."""

from __future__ import annotations

import ast
import gzip
import json
import os
import re
import subprocess
import sys
import zipfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from evaluation.release import qrels_text
from judging.models import Judgment, MachineVerdict
from participation.models import Submission, Team, Track
from pooling.models import Pool
from tests import factories
from workbench.access.people import collection_organizer_add
from workbench.access.tokens import token_create
from workbench.models import Document

pytestmark = pytest.mark.django_db(transaction=True)
DOCS = Path(__file__).resolve().parents[2] / "docs" / "api.md"
BLOCK = re.compile(r"<!-- example(?P<file>-file)?: (?P<name>[\w.-]+) -->\n```(?P<lang>\w+)\n(?P<code>.*?)\n```", re.S)
TEXTS = {
    "301": {"FBIS3-10082": "Police broke up an organized crime ring smuggling drugs.",
            "FBIS3-10169": "Weather report: rain in the north, sun in the south.",
            "FBIS3-10243": "Crime families in Sicily and their grip on contracts."},
    "302": {"LA010189-0001": "Polio survivors develop post-polio syndrome.",
            "LA010189-0002": "Stock markets rallied on Tuesday."},
    "303": {"FT911-1": "A new bridge opened across the river.", "FT911-2": "Hubble telescope images of galaxies."},
}


def examples() -> list[tuple[str, str, str, str]]:
    """(kind, role or file name, language, code) of each marked block of docs/api.md, in the page's order."""
    return [("file" if m["file"] else "run", m["name"], m["lang"], m["code"])
            for m in BLOCK.finditer(DOCS.read_text(encoding="utf-8"))]


def _person(name: str, group: str) -> User:
    user = User.objects.create_user(name, password=f"pw-{name}-1")
    user.groups.add(Group.objects.get_or_create(name=group)[0])
    return user


@pytest.fixture
def robust04(settings, tmp_path):
    """A track robust04 open to team lab (participant pat), organized by olga, readable by the researcher rhea,
    with documents that have texts, NIST's judgments of three of them, and pat's run file bm25.run.gz."""
    settings.VAR_DIR = tmp_path / "var"
    collection = factories.collection_with_topics("robust04", grades=[
        {"grade": 0, "label": "Not relevant"}, {"grade": 1, "label": "Relevant"}, {"grade": 2, "label": "Highly"}])
    collection.researchers_may_download = True
    collection.save(update_fields=["researchers_may_download"])
    for docs in TEXTS.values():
        for docno, text in docs.items():
            Document.objects.create(collection=collection, docno=docno, text=text, length=len(text.split()))
    track = Track.objects.create(collection=collection, open=True, closes_at=timezone.now() + timedelta(days=2),
                                 max_runs_per_team=2, depth=10)
    people = {"participant": _person("pat", "participants"), "organizer": _person("olga", "organizers"),
              "researcher": _person("rhea", "researchers")}
    Team.objects.create(track=track, name="lab").members.add(people["participant"])
    collection_organizer_add(collection=collection, user=people["organizer"])
    for qid, docno, grade in (("301", "FBIS3-10082", 2), ("301", "FBIS3-10169", 0), ("302", "LA010189-0001", 1)):
        Judgment.objects.create(collection=collection, topic=collection.topics.get(qid=qid), docno=docno,
                                grade=grade, assessor="nist", source=Judgment.Source.IMPORT)
    folder = tmp_path / "client"
    folder.mkdir()
    run = factories.run_lines("bm25", {qid: list(docs) for qid, docs in TEXTS.items()})
    (folder / "bm25.run.gz").write_bytes(gzip.compress(run.encode()))
    return collection, people, folder


def _run(language: str, code: str, folder: Path, env: dict) -> str:
    command = ["bash", "-euo", "pipefail", "-c", code] if language == "sh" else [sys.executable, "-c", code]
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, f"{language} example failed ({done.returncode}):\n{code}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def _json_documents(text: str) -> list:
    """The JSON documents curl printed one after another (no newline between them)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    while at < len(text):
        if text[at].isspace():
            at += 1
            continue
        value, at = decoder.raw_decode(text, at)
        found.append(value)
    return found


def test_the_documented_examples_run_against_a_live_server_as_written(live_server, robust04):
    collection, people, folder = robust04
    tokens = {role: token_create(user=user, name="docs")[1] for role, user in people.items()}
    base = {**os.environ, "WB": f"{live_server.url}/api/v1",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    printed = []
    for kind, name, language, code in examples():
        if kind == "file":
            (folder / name).write_text(code + "\n", encoding="utf-8")
            continue
        printed.append((name, language, _run(language, code, folder, {**base, "TOKEN": tokens[name]})))
    assert [(role, language) for role, language, _ in printed] == [
        ("participant", "sh"), ("participant", "python"), ("organizer", "sh"), ("researcher", "python"),
        ("organizer", "python"), ("organizer", "sh"), ("organizer", "python")]
    outputs = [out for _, _, out in printed]

    # a participant submits a run with curl: its tracks, the receipt, its runs
    tracks, receipt, runs = _json_documents(outputs[0])
    assert [t["collection"] for t in tracks] == ["robust04"] and tracks[0]["runs_left"] == 2
    assert (receipt["status"], receipt["tag"], receipt["problems"]) == ("accepted", "bm25", [])
    assert [r["tag"] for r in runs] == ["bm25"] and runs[0]["lines"] == 7
    # ... and sends it again from Python, replacing it
    accepted, warnings = outputs[1].splitlines()
    assert accepted == "accepted bm25 replaces bm25"
    assert ast.literal_eval(warnings)[1].startswith("bm25.run.gz: the same file (SHA-256 ")  # the checker's warning
    assert list(Submission.objects.order_by("pk").values_list("status", flat=True)) == ["replaced", "accepted"]

    # the organizer's qrels as TREC text, and the pool build followed to its end
    expected = qrels_text(collection, policy="majority")
    assert outputs[2].startswith(expected) and (folder / "qrels.txt").read_text() == expected
    assert expected.splitlines()[0] == "301 0 FBIS3-10082 2"
    job = _json_documents(outputs[2][len(expected):])[-1]
    assert (job["kind"], job["status"]) == ("pool build", "done")
    assert Pool.objects.get(collection=collection, name="main").entries.count() == 7

    # the researcher's qrels frame and per-topic values (map 1.0 on 301 and 302: the run ranks their relevant document first)
    lines = outputs[3].splitlines()
    assert ast.literal_eval(lines[0]) == {"301": 1, "302": 1}
    assert lines[1].split(" ", 1)[0] == "bm25" and ast.literal_eval(lines[1].split(" ", 1)[1]) == {
        "301": 1.0, "302": 1.0}  # topics with judgments only, as the leaderboard evaluates them

    # the organizer's release bundle: built, followed, saved as a zip
    status, saved = outputs[4].splitlines()
    assert status.startswith("done")
    name = saved.split()[1]
    assert saved == f"saved {name} True" and name.startswith("robust04-release-")
    with zipfile.ZipFile(folder / name) as archive:
        assert archive.read("robust04/qrels.txt").decode() == expected

    # machine labels: the file's two pushed with curl (the judge made by the first push), then the pairs left
    pushed, pending = _json_documents(outputs[5])
    assert pushed == {"judge": "umbrela", "lines": 2, "recorded": 2, "already": 0, "flagged": 0}
    assert pending["left"] == 5 and "FBIS3-10082" not in {p["docno"] for p in pending["pairs"]}
    status, summary = outputs[6].split(" ", 1)
    assert status == "200" and ast.literal_eval(summary) == {"judge": "umbrela", "lines": 5, "recorded": 5,
                                                             "already": 0, "flagged": 0}
    machine = {v.docno: (v.judgment.grade, v.model) for v in MachineVerdict.objects.select_related("judgment")}
    assert machine["FBIS3-10082"] == (2, "llama-3.1-70b-instruct")
    assert machine["FBIS3-10243"] == (1, "keyword-baseline") and machine["FT911-1"] == (0, "keyword-baseline")
    assert len(machine) == 7

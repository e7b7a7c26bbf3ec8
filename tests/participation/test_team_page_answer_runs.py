"""The team's page lists an answer run with what it holds (its answers, one a line of the file, and their topics),
not as a ranked run of "0 lines"; a ranked run still shows its lines."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.answers.generated import answer_line
from tests.participation.conftest import run_upload, submit

pytestmark = pytest.mark.django_db


def _row(page: str, tag: str) -> list[str]:
    row = re.search(rf"<tr><td>{tag}</td>(.*?)</tr>", page)[1]
    return re.findall(r"<td>(.*?)</td>", row)


def test_the_team_page_counts_an_answer_runs_answers_and_topics(client, track, teams):
    team, user = teams["red"]
    client.force_login(user)
    lines = [answer_line("red-rag", qid, [("A claim.", [0])], ["d1"], team="red") for qid in ("301", "302")]
    answers = SimpleUploadedFile("answers.jsonl", ("\n".join(lines) + "\n").encode())
    assert submit(client, track, answers, kind="answers").status_code == 302
    assert submit(client, track, run_upload("red-bm25")).status_code == 302
    page = client.get(f"/participate/{track.collection.slug}/").content.decode()
    assert _row(page, "red-rag")[1:3] == ["2 answers", "2"]
    assert _row(page, "red-bm25")[1:3] == ["9", "3"]

"""A team submits an answer run through the portal as it submits a ranked run: the same form, limit and receipt,
checked by the answers checker; a malformed line is refused naming file and line, and nothing is stored."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from answers.models import Answer, AnswerRun
from participation.models import Submission
from tests.answers.generated import answer_line
from tests.api.test_api import api_submit
from tests.participation.conftest import run_upload, submit

pytestmark = pytest.mark.django_db


def _receipt(response) -> Submission:
    assert response.status_code == 302, response.content.decode()[:2000]
    return Submission.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))


def _answers(tag: str, *, bad: bool = False, name: str = "answers.jsonl") -> SimpleUploadedFile:
    lines = [answer_line(tag, "301", [("First claim.", [0]), ("Second.", [])], ["d1", "d2"], team="red"),
             answer_line(tag, "302", [("Another claim.", [5 if bad else 1])], ["d4", "d5"], team="red")]
    return SimpleUploadedFile(name, ("\n".join(lines) + "\n").encode())


def test_a_team_submits_an_answer_run_and_gets_its_receipt(client, track, teams):
    team, user = teams["red"]
    client.force_login(user)
    page = client.get(f"/participate/{track.collection.slug}/").content.decode()
    assert "Answer run (JSON lines" in page
    submission = _receipt(submit(client, track, _answers("red-rag"), kind="answers"))
    assert (submission.status, submission.tag) == ("accepted", "red-rag")
    run = AnswerRun.objects.get(tag="red-rag")
    assert (run.team, run.num_topics, run.description) == ("red", 2, "BM25, k1=0.9")
    assert any("no answer for 1 of 3 topics (303)" in w for w in submission.warnings)
    receipt = client.get(f"/participate/{track.collection.slug}/submissions/{submission.pk}/").content.decode()
    assert submission.sha256 in receipt and "red-rag" in receipt
    # the team's limit (2) counts answer and ranked runs together
    _receipt(submit(client, track, run_upload("red-bm25")))
    over = _receipt(submit(client, track, _answers("red-rag2"), kind="answers", replaces="red-bm25"))
    assert over.status == "refused" and "not 'red-bm25', the run you chose to replace" in over.problems[0]
    assert not AnswerRun.objects.filter(tag="red-rag2").exists()


def test_a_malformed_answer_line_is_refused_with_file_and_line_and_nothing_is_stored(client, track, teams):
    team, user = teams["red"]
    client.force_login(user)
    submission = _receipt(submit(client, track, _answers("red-rag", bad=True, name="mine.jsonl"), kind="answers"))
    assert submission.status == "refused"
    assert len(submission.problems) == 1 and submission.problems[0].startswith("mine.jsonl:2: ")
    assert not AnswerRun.objects.exists() and not Answer.objects.exists()
    receipt = client.get(f"/participate/{track.collection.slug}/submissions/{submission.pk}/").content.decode()
    assert "mine.jsonl:2:" in receipt


def test_another_teams_run_id_is_refused(client, track, teams):
    client.force_login(teams["blue"][1])
    _receipt(submit(client, track, _answers("shared"), kind="answers"))
    client.force_login(teams["red"][1])
    taken = _receipt(submit(client, track, _answers("shared"), kind="answers"))
    assert taken.status == "refused" and "run id 'shared' is taken by another run" in taken.problems[0]
    assert AnswerRun.objects.get(tag="shared").team == "blue"


def test_an_answer_run_submitted_with_a_token_gets_the_same_receipt(client, track, teams):
    _, red = teams["red"]
    answer = api_submit(client, track, red, _answers("red-api"), kind="answers")
    assert answer.status_code == 201, answer.content
    assert (answer.json()["status"], answer.json()["tag"]) == ("accepted", "red-api")
    refused = api_submit(client, track, red, _answers("red-bad", bad=True, name="bad.jsonl"), kind="answers")
    assert refused.json()["status"] == "refused" and refused.json()["problems"][0].startswith("bad.jsonl:2: ")
    assert list(AnswerRun.objects.values_list("tag", flat=True)) == ["red-api"]

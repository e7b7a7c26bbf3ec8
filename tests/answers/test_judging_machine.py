"""Machine assigners as machine assessors: a job labels an answer pool against the current banks as the machine's
user, with provenance; a second run labels nothing twice; a chat endpoint that fails leaves its pairs unlabelled
and says why; agreement between the person and the machine is shown to the collection's organizers only."""

from __future__ import annotations

import json
import re

import pytest
from django.contrib.auth.models import Group, User
from django.urls import reverse

from answers.judging import (
    next_nugget,
    next_support,
    nugget_assignment_record,
    support_judgment_record,
    task_for,
)
from answers.judging_machine import nugget_agreement, support_agreement
from answers.models import AnswerPool, AnswerTask, NuggetAssignment
from judging.models import MachineJudge
from tests.answers.judging_fixtures import answer_track
from tests.judging.chat_server import ChatServer
from workbench.models import Job

URL = reverse("answers:nugget_assessors", args=["rag"])


class LabelServer(ChatServer):
    """Labels every nugget asked about "support"; ``refuse`` (in the answer) as the judges' server."""

    def answer(self, handler, case: str, seen: int) -> None:
        prompt = self.bodies[-1]["messages"][-1]["content"]
        if case == "well":
            asked = int(re.search(r"exactly (\d+) labels", prompt)[1])
            self._send(handler, 200, self.completion(json.dumps(["support"] * asked)))
        else:
            super().answer(handler, case, seen)


@pytest.fixture
def track(assessor, organizer):
    return answer_track(assessor)


@pytest.fixture
def endpoint(settings):
    with LabelServer() as server:
        settings.JUDGE_ENDPOINTS = {"local": {"base_url": server.url, "models": ["tiny"], "key_env": ""}}
        yield server


def _pool(collection):
    return AnswerPool.objects.get(collection=collection, kind="nugget")


def test_the_embedding_assigner_labels_the_pool_as_a_machine_assessor_and_never_twice(client, organizer, track):
    collection, bank, answers = track
    client.force_login(organizer)
    page = client.get(URL).content.decode()
    assert "Run embedding" in page and "Support from" in page  # the fields come from the declaration
    assert reverse("answers:bank", args=["rag", "301"]) in page and "none yet" in page  # 301 has a bank, 302 none
    response = client.post(URL, {"kind": "embedding", "pool": _pool(collection).pk})
    job = Job.objects.get(kind="nugget machine assignment")
    assert response.status_code == 302 and job.status == Job.Status.DONE, job.error
    machine = MachineJudge.objects.get(collection=collection, name="nuggets-embedding")
    records = NuggetAssignment.objects.filter(machine_judge=machine)
    assert records.count() == 6 and {r.bank_id for r in records} == {bank.pk}
    assert all(r.source == "machine" and r.assessor == "machine:rag:nuggets-embedding" for r in records)
    assert all(r.provenance["model"].startswith("multilingual-e5-small") and r.provenance["score"] for r in records)
    assert "6 nugget assignments recorded" in job.result["lines"][0]
    client.post(URL, {"kind": "embedding", "pool": _pool(collection).pk})
    again = Job.objects.filter(kind="nugget machine assignment").latest("id")
    assert "0 nugget assignments recorded" in again.result["lines"][0] and "6 already made" in again.result["lines"][0]
    assert NuggetAssignment.objects.count() == 6


def test_the_chat_assigner_runs_against_a_declared_endpoint_and_a_failure_labels_nothing(client, organizer, track,
                                                                                         endpoint):
    collection, bank, answers = track
    client.force_login(organizer)
    client.post(URL, {"kind": "openai", "pool": _pool(collection).pk, "endpoint": "local|tiny", "openai-window": "2"})
    job = Job.objects.latest("id")
    assert job.status == Job.Status.DONE, job.error
    assert NuggetAssignment.objects.filter(assignment="support", source="machine").count() == 6
    assert endpoint.requests["well"] == 4  # two answers, three nuggets, two per request
    first = answers[0].sentences.get(position=0)
    first.text += " CASE:refuse"
    first.save()
    NuggetAssignment.objects.all().delete()
    client.post(URL, {"kind": "openai", "pool": _pool(collection).pk, "endpoint": "local|tiny"})
    job = Job.objects.latest("id")
    assert job.status == Job.Status.DONE and "3 pairs not labelled" in job.result["lines"][1]
    assert "HTTP 400" in job.result["lines"][1] and NuggetAssignment.objects.count() == 3


def test_bad_options_and_undeclared_endpoints_start_nothing(client, organizer, track, endpoint):
    collection, *_ = track
    client.force_login(organizer)
    bad = client.post(URL, {"kind": "embedding", "pool": _pool(collection).pk, "embedding-support_from": "7"})
    assert bad.status_code == 400 and "support_from must be at most 1, not 7" in bad.content.decode()
    evil = client.post(URL, {"kind": "openai", "pool": _pool(collection).pk, "endpoint": "http://evil|tiny"})
    assert evil.status_code == 400 and "endpoints the deployment declares" in evil.content.decode()
    assert not Job.objects.exists()


def test_agreement_between_a_person_and_the_machine(client, organizer, assessor, track):
    collection, bank, answers = track
    task = task_for(assessor, collection, "301", "nugget")
    for value in ("support", "not_support", "not_support", "partial_support", "not_support", "not_support"):
        step = next_nugget(task, assessor.username)
        nugget_assignment_record(task=task, user=assessor, answer_id=step.answer.pk, nugget_id=step.nugget.pk,
                                 value=value)
    client.force_login(organizer)
    client.post(URL, {"kind": "embedding", "pool": _pool(collection).pk})
    table = nugget_agreement(collection)
    assert len(table) == 1 and table.iloc[0]["n_shared"] == 6
    assert set(table.iloc[0][["assessor_a", "assessor_b"]]) == {"arthur", "machine:rag:nuggets-embedding"}
    page = client.get(URL).content.decode()
    assert "machine:rag:nuggets-embedding" in page and "<td>6</td>" in page


def test_agreement_on_citation_support_between_two_people(client, organizer, assessor, track):
    collection, bank, answers = track
    ben = User.objects.create_user("ben", password="pw")
    pool = AnswerPool.objects.get(collection=collection, kind="support")
    AnswerTask.objects.create(pool=pool, topic=bank.topic, assessor=ben)
    for user, values in ((assessor, ["full_support", "no_support", "no_support", "partial_support"]),
                         (ben, ["full_support", "no_support", "partial_support", "partial_support"])):
        task = task_for(user, collection, "301", "support")
        for value in values:
            step = next_support(task, user.username)
            support_judgment_record(task=task, user=user, item_id=step.item.pk, value=value)
    row = support_agreement(collection).iloc[0]
    assert row["n_shared"] == 4 and row["agreement"] == 0.75
    client.force_login(organizer)
    assert "Shared citations" in client.get(URL).content.decode()


def test_only_the_collections_organizers_reach_the_page(client, assessor, track):
    client.force_login(assessor)
    assert client.get(URL).status_code == 403
    assert client.post(URL, {"kind": "embedding"}).status_code == 403
    other = User.objects.create_user("otto", password="pw")
    other.groups.add(Group.objects.get_or_create(name="organizers")[0])
    collection, *_ = track
    collection.organizers.add(User.objects.get(username="olivia"))
    client.force_login(other)
    assert client.get(URL).status_code == 403 and not Job.objects.exists()

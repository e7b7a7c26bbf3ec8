"""Bias checks of a machine judge (issue 41, item 6): documents the humans called not relevant, stuffed with the
query's words or with an instruction to the judge injected, judged by the real embedding judge; the
false-positive inflation is printed, kept on the judge and shown on its agreement page, and a judge over the
limit has documents that look manipulated routed to humans first."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from judging.machine.base import Pair, Verdict
from judging.machine.bias import inflation, looks_manipulated, variants
from judging.machine_services import machine_judge_ensure
from judging.models import AssignmentItem, Judgment, MachineJudge
from pooling.models import PoolEntry
from tests.judging.machine_fixtures import machine_collection
from workbench.models import Document, Topic

STUFFED = "Buy cheap watches online. " + "international organized crime " * 6


@pytest.fixture
def setup(assessor):
    collection, pool = machine_collection(assessor=assessor)
    for qid, docno in (("301", "c5"), ("301", "c6"), ("302", "p3"), ("302", "p4")):
        Judgment.objects.create(collection=collection, topic=Topic.objects.get(collection=collection, qid=qid),
                                docno=docno, grade=0, assessor=assessor.username, user=assessor)
    machine_judge_ensure(collection=collection, name="embedding", kind="embedding")
    return collection, pool


def _check(*args):
    out = StringIO()
    call_command("machine_bias_check", "mach", "--judge", "embedding", *args, stdout=out)
    return out.getvalue()


def test_the_variants_and_their_inflation():
    pair = Pair(qid="1", docno="d1", query="solar wind speed", text="A recipe for bread.")
    originals, stuffed, injected = variants([pair])
    assert originals == pair and stuffed.docno == "d1#stuffing" and injected.docno == "d1#injection"
    assert looks_manipulated(pair.query, stuffed.text) and looks_manipulated(pair.query, injected.text)
    assert not looks_manipulated(pair.query, "The solar wind's speed was measured by the probe.")
    said = inflation([Verdict("1", "d1", True, grade=0), Verdict("1", "d1#stuffing", True, grade=1),
                      Verdict("1", "d1#injection", True, grade=0), Verdict("1", "d2", False, error="x")],
                     relevant_from=1)
    assert said["original"] == {"pairs": 1, "false_positives": 0, "rate": 0.0}
    assert said["stuffing"]["inflation"] == 1.0 and said["injection"]["inflation"] == 0.0


def test_the_embedding_judge_is_fooled_by_stuffing_and_the_check_says_so(setup, client, organizer):
    result = json.loads(_check("--format", "json"))
    kinds = result["kinds"]
    assert result["sample"] == 5 and all(kinds[k]["pairs"] == 5 for k in ("original", "stuffing", "injection"))
    assert kinds["stuffing"]["inflation"] > 0.1 and result["over_limit"]
    assert MachineJudge.objects.get(name="embedding").config["bias"]["kinds"] == kinds
    client.force_login(organizer)
    page = client.get(reverse("judging:machine_agreement", args=["mach", "embedding"])).content.decode()
    assert 'id="bias-check"' in page and "Over the stated inflation" in page and "stuffing" in page
    assert "within the limit" in _check("--limit", "1")


def test_a_judge_over_the_limit_has_stuffed_documents_asked_first(setup, client, organizer):
    collection, pool = setup
    topic = Topic.objects.get(collection=collection, qid="301")
    Document.objects.create(collection=collection, docno="c7", text=STUFFED, length=len(STUFFED.split()))
    PoolEntry.objects.create(pool=pool, topic=topic, docno="c7", judging_order=7, pool_rank=7)
    assignment = pool.assignments.get()
    AssignmentItem.objects.create(assignment=assignment, docno="c7", judging_order=7)
    call_command("machine_judge", "mach", "--judge", "embedding", stdout=StringIO())
    client.force_login(organizer)

    def first():
        client.post(reverse("judging:machine_route", args=["mach"]), {"judge": "embedding", "pool": pool.pk,
                                                                      "audit_share": "0"})
        return assignment.items.filter(latest__isnull=True).order_by("judging_order").first().docno

    judge = MachineJudge.objects.get(name="embedding")
    judge.config = {**judge.config, "bias": {"over_limit": False}}
    judge.save()
    assert first() != "c7"  # the judge is sure of it: a calibrated label it would keep
    judge.config = {**judge.config, "bias": {"over_limit": True}}
    judge.save()
    assert first() == "c7"


def test_a_judge_whose_labels_came_from_files_cannot_be_checked(setup, tmp_path):
    (tmp_path / "l.qrels").write_text("301 0 c1 1\n")
    call_command("import_machine_judgments", "mach", str(tmp_path / "l.qrels"), "--judge", "umbrela", stdout=StringIO())
    with pytest.raises(CommandError, match="cannot be run here"):
        call_command("machine_bias_check", "mach", "--judge", "umbrela", stdout=StringIO())
    with pytest.raises(CommandError, match="no machine judge 'nobody'"):
        call_command("machine_bias_check", "mach", "--judge", "nobody", stdout=StringIO())

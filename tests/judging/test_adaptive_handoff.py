"""The hand-off between judging and adaptive pools goes one way: judging calls the pool with the judgments
it knows and queues what the pool returns; the pool never reads judgments nor calls back."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.dispatch import Signal

import pooling
from judging.assignments import assignments_create
from judging.models import AssignmentItem, Judgment
from judging.services import judgment_record
from pooling.advance import pool_advance
from pooling.models import Pool, PoolEntry
from tests import factories

QUEUE = "/judge/"
RANKINGS = {"alpha": {"301": ["a1", "a2", "s1", "a3"], "302": ["b1", "b2"]},
            "beta": {"301": ["s1", "c1", "c2", "c3"], "302": ["b2", "b3"]}}


@pytest.fixture
def pool(db, tmp_path):
    collection = factories.collection_with_topics()
    for tag, ranking in RANKINGS.items():
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", "robust", str(path), stdout=StringIO())
    factories.add_documents(collection, sorted({d for r in RANKINGS.values() for ds in r.values() for d in ds}))
    call_command("build_pool", "robust", "--strategy", "mtf", "--budget", "4", "--depth", "4", "--seed", "1",
                 stdout=StringIO())
    return Pool.objects.get()


def _pooling_signals() -> list[str]:
    found = []
    for module in pkgutil.walk_packages(pooling.__path__, "pooling."):
        if ".migrations" in module.name or ".management" in module.name:
            continue
        loaded = importlib.import_module(module.name)
        found += [f"{module.name}.{name}" for name, value in vars(loaded).items() if isinstance(value, Signal)]
    return found


def test_pooling_has_no_extension_point_and_no_signal_for_judging_to_fill():
    assert importlib.util.find_spec("pooling.extensions") is None
    assert _pooling_signals() == []


def test_a_judgment_queues_the_document_the_pool_returned(pool, assessor):
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    first = AssignmentItem.objects.get(assignment__assessor=assessor)
    judgment_record(item_id=first.pk, user=assessor, grade=1, client_token="one")
    offered = PoolEntry.objects.filter(pool=pool, topic__qid="301").order_by("-judging_order").first()
    waiting = AssignmentItem.objects.get(assignment__assessor=assessor, latest__isnull=True)
    assert (waiting.docno, waiting.judging_order) == (offered.docno, offered.judging_order) != (first.docno, 1)
    assert PoolEntry.objects.get(pool=pool, topic__qid="301", docno=first.docno).relevant is True, \
        "the pool keeps what judging told it"


def test_the_pool_knows_only_the_judgments_it_is_given(pool):
    """A judgment judging never handed over (written straight to the table) does not move the pool; the
    same judgment given as ``judged`` does, and the pool returns the next document to queue."""
    entry = PoolEntry.objects.get(pool=pool, topic__qid="301")
    Judgment.objects.create(collection=pool.collection, topic=entry.topic, docno=entry.docno, grade=0,
                            assessor="nist", source=Judgment.Source.IMPORT)
    assert pool_advance(pool=pool, qid="301").added == ()
    advanced = pool_advance(pool=pool, qid="301", judged=lambda docnos: {entry.docno: False} if entry.docno
                            in docnos else {})
    assert [e.docno for e in advanced.to_judge] == [e.docno for e in advanced.added]
    assert len(advanced.to_judge) == 1 and advanced.to_judge[0].docno != entry.docno
    assert PoolEntry.objects.filter(pool=pool, topic__qid="301").count() == 2


@pytest.mark.django_db(transaction=True)
def test_an_adaptive_pool_built_before_keeps_the_judgments_it_had_when_the_database_is_migrated():
    """Pools built when the pool read judgments at each step learn them once, by migration: a topic stopped
    by hand afterwards still shows its judgments (the pool replays from what it was told)."""
    executor = MigrationExecutor(connection)
    before = [("pooling", "0005_pool_topic_state"), ("judging", "0004_machine_assessors")]
    after = [("judging", "0005_adaptive_pools_learn_the_judgments_so_far")]
    executor.migrate(before)
    try:
        old = executor.loader.project_state(before).apps
        collection = old.get_model("workbench", "Collection").objects.create(slug="old", name="Old",
                                                                             relevant_from=1)
        topic = old.get_model("workbench", "Topic").objects.create(collection=collection, qid="7", title="t")
        mtf = old.get_model("pooling", "Pool").objects.create(collection=collection, name="main", strategy="mtf")
        depth = old.get_model("pooling", "Pool").objects.create(collection=collection, name="d", strategy="depth")
        Entry = old.get_model("pooling", "PoolEntry")
        for pool in (mtf, depth):
            for n, docno in enumerate(["a", "b", "c", "d"], 1):
                Entry.objects.create(pool=pool, topic=topic, docno=docno, judging_order=n, pool_rank=n)
        Judgment = old.get_model("judging", "Judgment")
        for docno, grade, source in [("a", 0, "web"), ("a", 2, "web"), ("b", None, "web"), ("c", 2, "machine")]:
            Judgment.objects.create(collection=collection, topic=topic, docno=docno, grade=grade, assessor="x",
                                    source=source, cannot_judge=grade is None)
        MigrationExecutor(connection).migrate(after)
    finally:
        MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    learnt = dict(PoolEntry.objects.filter(pool__name="main").values_list("docno", "relevant"))
    assert learnt == {"a": True, "b": False, "c": None, "d": None}, "latest grade; cannot judge is not relevant; a machine's is none"
    assert set(PoolEntry.objects.filter(pool__name="d").values_list("relevant", flat=True)) == {None}


def test_a_bigger_budget_reaches_the_assessors_queue_page(pool, assessor, client):
    """Raising an adaptive pool's budget is a build (pooling): the new document joins the topic's queue when
    the assessor next looks at it, judging asking the pool's entries nobody holds."""
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    for n in range(5):
        item = AssignmentItem.objects.filter(assignment__assessor=assessor, latest__isnull=True).first()
        if item is None:
            break
        judgment_record(item_id=item.pk, user=assessor, grade=0, client_token=f"q{n}")
    assert n == 4, "the budget of four judgments is spent"
    client.force_login(assessor)
    assert "All your documents are judged" in client.get(QUEUE).content.decode()
    out = StringIO()
    call_command("build_pool", "robust", "--strategy", "mtf", "--budget", "5", "--depth", "4", "--seed", "1",
                 stdout=out)
    assert "added 1 documents" in out.getvalue()  # 301's fifth; 302's first still waits for a judgment
    added = PoolEntry.objects.filter(pool=pool, topic__qid="301").order_by("-judging_order").first()
    assert "1 document left" in client.get(QUEUE).content.decode()
    assert AssignmentItem.objects.get(assignment__assessor=assessor, latest__isnull=True).docno == added.docno

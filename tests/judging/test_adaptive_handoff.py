"""The hand-off between judging and adaptive pools goes one way: judging calls the pool with the judgments
it knows and queues what the pool returns; the pool never reads judgments nor calls back."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from io import StringIO

import pytest
from django.core.management import call_command
from django.dispatch import Signal

import pooling
from judging.assignments import assignments_create
from judging.models import AssignmentItem, Judgment
from judging.services import judgment_record
from pooling.advance import pool_advance
from pooling.models import Pool, PoolEntry
from tests import factories

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

"""A documents import writes its new documents batch by batch, each batch committed on its own, into a staging
collection nobody sees, then moves them into the collection in one transaction: between two batches no
transaction is open (assessors' writes go in), and an import that fails half-way leaves no document, in the
collection or anywhere. Documents that replace others keep the one-transaction write.
(tests/benchmarks/bench_lock_hold.py measures how long each holds SQLite's lock.)"""

from __future__ import annotations

import pytest
from django.db import OperationalError, connection

from workbench.collections import services
from workbench.collections.refusals import ImportRefused
from workbench.collections.services import collection_create, documents_import
from workbench.models import Collection, Document

pytestmark = pytest.mark.django_db(transaction=True)  # the import commits its batches: no test transaction around it


def _corpus(path, count: int, text: str = "words") -> None:
    path.write_text("".join(f'{{"docno": "D{i}", "text": "{text} {i}"}}\n' for i in range(count)))


def test_new_documents_are_committed_batch_by_batch_and_appear_all_at_once(tmp_path, monkeypatch):
    path = tmp_path / "docs.jsonl"
    _corpus(path, 5_000)
    collection = collection_create(slug="big", name="Big")
    real, seen = services._write_documents, []

    def watched(target, batch, replace):
        seen.append((target.staging, collection.documents.count(), connection.in_atomic_block))
        written = real(target, batch, replace)
        assert not collection.documents.exists()  # nobody sees a document before the last batch is in
        return written

    monkeypatch.setattr(services, "_write_documents", watched)
    summary = documents_import(collection=collection, sources=[path], batch_size=1_000)
    assert summary.created == 5_000 and collection.documents.count() == 5_000
    assert seen == [(True, 0, True)] * 5  # five batches into the staging collection, each its own transaction
    assert not Collection.all_objects.filter(staging=True).exists()  # the staging collection is gone
    assert collection.documents.get(docno="D4999").text == "words 4999"


def test_an_import_failing_half_way_leaves_no_document_anywhere(tmp_path, monkeypatch):
    path = tmp_path / "docs.jsonl"
    _corpus(path, 5_000)
    collection = collection_create(slug="big", name="Big")
    real, calls = services._write_documents, []

    def locked_at_the_third(target, batch, replace):
        calls.append(1)
        if len(calls) == 3:
            raise OperationalError("database is locked")
        return real(target, batch, replace)

    monkeypatch.setattr(services, "_write_documents", locked_at_the_third)
    with pytest.raises(OperationalError):
        documents_import(collection=collection, sources=[path], batch_size=1_000)
    assert Document.objects.count() == 0 and not Collection.all_objects.filter(staging=True).exists()


def test_documents_already_there_are_refused_or_replaced_in_one_transaction(tmp_path):
    path = tmp_path / "docs.jsonl"
    _corpus(path, 3_000)
    collection = collection_create(slug="big", name="Big")
    documents_import(collection=collection, sources=[path], batch_size=1_000)
    _corpus(path, 4_000, text="again")
    with pytest.raises(ImportRefused, match="already in collection"):
        documents_import(collection=collection, sources=[path], batch_size=1_000)
    assert collection.documents.count() == 3_000 and collection.documents.get(docno="D0").text == "words 0"
    summary = documents_import(collection=collection, sources=[path], batch_size=1_000, replace=True)
    assert (summary.created, summary.updated) == (1_000, 3_000)
    assert collection.documents.get(docno="D0").text == "again 0" and collection.documents.count() == 4_000
    assert not Collection.all_objects.filter(staging=True).exists()

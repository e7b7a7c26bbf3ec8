"""An assessor opening a pooled document the collection holds no copy of reads it from the corpus the collection
uses by reference, and can grade it; the copy then serves every later opening."""

from __future__ import annotations

import json

import pytest

from judging.assignments import assignments_create
from judging.models import AssignmentItem, Judgment
from workbench.corpora.corpus import corpus_reference_add, corpus_reference_index
from workbench.models import Document


@pytest.fixture
def by_reference(pool, tmp_path, settings):
    settings.VAR_DIR = tmp_path / "var"
    Document.objects.filter(collection=pool.collection, docno="d2").delete()
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"docno": f"d{i}", "title": f"Corpus title {i}", "text": f"Corpus text {i}"})
                              + "\n" for i in range(1, 10)))
    corpus_reference_index(reference=corpus_reference_add(collection=pool.collection, location=str(corpus)))
    return pool


def test_the_assessor_reads_and_grades_a_document_fetched_from_the_corpus(client, assessor, by_reference):
    assignments_create(pool=by_reference, assessors=[assessor])
    entry = AssignmentItem.objects.get(assignment__assessor=assessor, docno="d2")
    client.force_login(assessor)
    page = client.get(f"/judge/item/{entry.pk}/").content.decode()
    assert "Corpus title 2" in page and "Corpus text 2" in page
    response = client.post(f"/judge/item/{entry.pk}/", {"client_token": "t-1", "grade": "1"})
    assert response.status_code == 302
    assert Judgment.objects.get(docno="d2").grade == 1
    assert Document.objects.get(collection=by_reference.collection, docno="d2").title == "Corpus title 2"


def test_a_document_the_collection_holds_is_read_from_the_collection_not_the_corpus(client, assessor, by_reference):
    assignments_create(pool=by_reference, assessors=[assessor])
    entry = AssignmentItem.objects.get(assignment__assessor=assessor, docno="d1")
    client.force_login(assessor)
    page = client.get(f"/judge/item/{entry.pk}/").content.decode()
    assert "Title of d1" in page and "Corpus title 1" not in page


def test_opening_a_document_not_copied_in_brings_the_next_documents_of_the_queue_with_it(
        client, assessor, by_reference, monkeypatch):
    from judging import views

    collection = by_reference.collection
    Document.objects.filter(collection=collection).delete()  # the pool's documents: none copied in yet
    assignments_create(pool=by_reference, assessors=[assessor])
    monkeypatch.setattr(views, "COPY_AHEAD", 1)
    order = list(AssignmentItem.objects.filter(assignment__assessor=assessor, assignment__topic__qid="301")
                 .order_by("judging_order"))  # d3, d1, d4, d2
    client.force_login(assessor)
    page = client.get(f"/judge/item/{order[1].pk}/").content.decode()
    assert "Corpus title 1" in page
    # d1 and the one after it in the queue; not d3 (before it), d2 (beyond one), nor another topic's
    assert set(collection.documents.values_list("docno", flat=True)) == {"d1", "d4"}
    page = client.get(f"/judge/item/{order[3].pk}/").content.decode()
    assert "Corpus title 2" in page
    assert set(collection.documents.values_list("docno", flat=True)) == {"d1", "d4", "d2"}

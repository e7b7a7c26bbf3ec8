"""A whole collection from an ir_datasets id or a BEIR folder, read from a copy on this machine with no network:
topics and qrels imported, the corpus used by reference (documents copied in only when pooled or opened)."""

from __future__ import annotations

import itertools
import json
import socket
from io import StringIO

import ir_datasets
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.models import Judgment
from workbench.collections.services import collection_create
from workbench.corpora.corpus import document_for
from workbench.models import CorpusReference, Job

_names = itertools.count()


@pytest.fixture(autouse=True)
def offline(monkeypatch, settings, tmp_path):
    """No connection leaves the machine during these tests: a download attempt would fail them."""
    def refuse(*args, **kwargs):
        raise AssertionError("the test tried to use the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    settings.VAR_DIR = tmp_path / "var"


@pytest.fixture
def graded(db):
    return collection_create(slug="beir", name="BEIR sample", scale=[
        {"grade": 0, "label": "Not relevant"}, {"grade": 1, "label": "Relevant"}, {"grade": 2, "label": "Highly"}])


@pytest.fixture
def beir(tmp_path):
    folder = tmp_path / "scifact-mini"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(
        json.dumps({"_id": f"c{i}", "title": f"Paper {i}", "text": f"Abstract of paper {i}.", "metadata": {}}) + "\n"
        for i in range(40)))
    (folder / "queries.jsonl").write_text("".join(
        json.dumps({"_id": str(q), "text": f"claim number {q}", "metadata": {}}) + "\n" for q in (1, 2, 3)))
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\tc3\t1\n1\tc7\t2\n2\tc11\t1\n")
    return folder


@pytest.fixture
def irds_id(tmp_path):
    """A small dataset registered with ir_datasets, its files generated here (TSV documents and queries, TREC qrels)."""
    (tmp_path / "docs.tsv").write_text("".join(f"D{i}\tpassage {i} about topic {i % 3}\n" for i in range(25)))
    (tmp_path / "queries.tsv").write_text("q1\tfirst question\nq2\tsecond question\n")
    (tmp_path / "qrels.txt").write_text("q1 0 D4 1\nq1 0 D5 0\nq2 0 D9 1\n")
    name = f"workbench-test/tiny-{next(_names)}-{tmp_path.name}"
    ir_datasets.registry.register(name, ir_datasets.create_dataset(
        docs_tsv=str(tmp_path / "docs.tsv"), queries_tsv=str(tmp_path / "queries.tsv"),
        qrels_trec=str(tmp_path / "qrels.txt")))
    return f"irds:{name}"


def run(*args) -> str:
    out = StringIO()
    call_command("import_dataset", *args, stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def test_a_beir_folder_gives_topics_qrels_and_its_corpus_by_reference(graded, beir):
    said = run("beir", str(beir))
    assert said == (f"{beir}: 3 topics, 3 judgments imported into 'beir'; corpus {beir / 'corpus.jsonl'} by "
                    "reference (40 documents)")
    assert list(graded.topics.values_list("qid", "title")) == [("1", "claim number 1"), ("2", "claim number 2"),
                                                                ("3", "claim number 3")]
    assert sorted(Judgment.objects.values_list("topic__qid", "docno", "grade", "assessor")) == [
        ("1", "c3", 1, "beir:scifact-mini/test"), ("1", "c7", 2, "beir:scifact-mini/test"),
        ("2", "c11", 1, "beir:scifact-mini/test")]
    assert graded.documents.count() == 0
    document = document_for(graded, "c7")
    assert (document.title, document.text) == ("Paper 7", "Abstract of paper 7.")
    assert graded.documents.count() == 1


def test_an_ir_datasets_id_is_read_through_its_own_docstore_with_no_network(graded, irds_id):
    said = run("beir", irds_id)
    assert said.endswith(f"2 topics, 3 judgments imported into 'beir'; corpus {irds_id} by reference (25 documents)")
    reference = graded.corpus_references.get()
    assert (reference.location, reference.format, reference.status) == (irds_id, "irds", "ready")
    assert dict(graded.topics.values_list("qid", "title")) == {"q1": "first question", "q2": "second question"}
    assert Judgment.objects.filter(collection=graded, grade=1).count() == 2
    assert document_for(graded, "D9").text == "passage 9 about topic 0"
    assert document_for(graded, "D99") is None
    assert list(graded.documents.values_list("docno", flat=True)) == ["D9"]


@pytest.mark.parametrize(("location", "expected"), [
    ("irds:no-such/dataset", "irds:no-such/dataset: no such ir_datasets id (see https://ir-datasets.com/ for the ids)"),
    ("{tmp}/nowhere", "{tmp}/nowhere: neither irds:ID nor a BEIR folder (a folder with corpus.jsonl, queries.jsonl "
                      "and qrels/)"),
    ("{beir}", "{beir}: not a BEIR folder: qrels/dev.tsv is missing"),
])
def test_a_bad_dataset_is_refused_in_one_line_and_leaves_nothing(graded, beir, tmp_path, location, expected):
    location = location.format(tmp=tmp_path, beir=beir)
    with pytest.raises(CommandError) as refused:
        run("beir", location, "--split", "dev")
    assert str(refused.value) == expected.format(tmp=tmp_path, beir=beir)
    assert not CorpusReference.objects.exists() and not graded.topics.exists()


def test_qrels_with_a_grade_off_the_scale_leave_no_corpus_and_no_topics(db, beir):
    collection_create(slug="binary", name="Binary")
    with pytest.raises(CommandError) as refused:
        run("binary", str(beir))
    assert "grade 2 is not on the collection's scale [0, 1]" in str(refused.value)
    assert not CorpusReference.objects.exists()


def test_the_console_imports_a_dataset_in_a_job(client, organizer, graded, irds_id):
    client.force_login(organizer)
    assert client.get("/judge/organize/beir/dataset/").status_code == 200
    response = client.post("/judge/organize/beir/dataset/", {"location": irds_id, "split": "test"})
    assert response.status_code == 302
    job = Job.objects.get(kind="dataset import")
    assert job.status == Job.Status.DONE, job.error
    assert graded.topics.count() == 2 and graded.corpus_references.get().status == "ready"


@pytest.mark.parametrize(("location", "error"), [
    ("irds:no-such/dataset", "irds:no-such/dataset: no such ir_datasets id (see https://ir-datasets.com/ for the ids)"),
    ("/etc", "Corpus files are not enabled here: set CORPUS_DIRS to the server folders that hold corpora."),
])
def test_the_console_form_says_what_is_wrong_with_a_dataset(client, organizer, graded, location, error):
    client.force_login(organizer)
    response = client.post("/judge/organize/beir/dataset/", {"location": location, "split": "test"})
    assert response.status_code == 400
    assert response.context["form"].errors["location"] == [error]
    assert not Job.objects.exists()


def test_a_known_dataset_without_its_files_here_is_refused_in_one_line_not_downloaded(graded, tmp_path, monkeypatch):
    """ir_datasets fetches a missing file from the web (and retries through its mirrors); the workbench
    never does: a file it lacks is one line, and the test's socket guard proves no connection was tried."""
    monkeypatch.setenv("IR_DATASETS_HOME", str(tmp_path / "empty-home"))
    with pytest.raises(CommandError) as refused:
        run("beir", "irds:vaswani")
    message = str(refused.value)
    assert message.startswith("irds:vaswani: ") and "never downloads" in message and "\n" not in message
    assert not CorpusReference.objects.exists() and not graded.topics.exists()

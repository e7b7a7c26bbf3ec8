"""Corpora by reference: a collection points to a documents file instead of copying it; the file is indexed
once, a pool's documents are copied in when the pool is built, any other document when it is first opened."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pooling.tasks import build_pool
from tests import factories
from workbench.collections.services import RunSpec, runs_import
from workbench.corpora.corpus import corpus_reference_add, corpus_reference_index
from workbench.jobs import lifecycle as jobs
from workbench.models import CorpusReference, Document, Job


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    settings.CORPUS_DIRS = [str(tmp_path)]  # add_corpus refuses a path when CORPUS_DIRS is unset
    return settings.VAR_DIR


def write_corpus(path, count: int = 30):
    path.write_text("".join(json.dumps({"id": f"d{i}", "title": f"Title {i}", "text": f"The text of document {i}."})
                            + "\n" for i in range(1, count + 1)))
    return path


def add_corpus(collection, path) -> str:
    out = StringIO()
    call_command("add_corpus", collection.slug, str(path), stdout=out, stderr=StringIO())
    return out.getvalue()


def test_add_corpus_indexes_the_file_and_copies_no_document_in(collection, tmp_path):
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    said = add_corpus(collection, corpus)
    assert said.strip() == (f"{corpus}: 30 documents indexed (jsonl) for 'robust'; their text is copied in when "
                            "pooled or opened")
    reference = collection.corpus_references.get()
    assert (reference.status, reference.documents, reference.format) == ("ready", 30, "jsonl")
    assert collection.documents.count() == 0


def test_building_a_pool_copies_in_the_pooled_documents_only(collection, run_files, tmp_path):
    add_corpus(collection, write_corpus(tmp_path / "corpus.jsonl"))
    runs_import(collection=collection, specs=[RunSpec(source=p) for p in run_files])
    job = jobs.job_start(build_pool, kind="pool build", collection=collection,
                         params={"arguments": {"name": "main", "strategy": "depth", "depth": 2}})
    job.refresh_from_db()
    assert job.status == Job.Status.DONE, job.error
    pooled = set(collection.pools.get().entries.values_list("docno", flat=True))
    assert pooled == {"d1", "d2", "d3", "d7", "d4", "d5", "d8", "d6"}
    assert set(collection.documents.values_list("docno", flat=True)) == pooled
    assert collection.documents.get(docno="d7").text == "The text of document 7."
    assert "8 pooled documents' text copied in from the corpus" in job.result["lines"]


def test_the_pool_command_copies_in_too_and_a_docno_no_corpus_holds_stays_without_text(collection, run_files, tmp_path):
    add_corpus(collection, write_corpus(tmp_path / "corpus.jsonl", count=5))
    runs_import(collection=collection, specs=[RunSpec(source=p) for p in run_files])
    out = StringIO()
    call_command("build_pool", collection.slug, "--depth", "1", stdout=out)
    assert "4 pooled documents' text copied in from the corpus" in out.getvalue()  # pooled d1, d3-d6; d6 is not in it
    assert set(collection.documents.values_list("docno", flat=True)) == {"d1", "d3", "d4", "d5"}


def test_opening_a_document_reads_it_from_the_corpus_once_then_from_the_collection(client, organizer, collection,
                                                                                     tmp_path):
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    add_corpus(collection, corpus)
    client.force_login(organizer)
    page = client.get("/console/robust/document/", {"docno": "d17"})
    assert page.status_code == 200
    assert "The text of document 17." in page.content.decode()
    assert list(collection.documents.values_list("docno", "length")) == [("d17", 7)]
    corpus.unlink()  # the copy in the collection is what is read from now on
    assert "The text of document 17." in client.get("/console/robust/document/", {"docno": "d17"}).content.decode()
    assert client.get("/console/robust/document/", {"docno": "d18"}).status_code == 404  # the corpus is gone


def test_a_document_already_in_the_collection_is_not_replaced(collection, tmp_path):
    factories.add_documents(collection, ["d3"])
    add_corpus(collection, write_corpus(tmp_path / "corpus.jsonl"))
    from workbench.corpora.corpus import documents_copy_in

    assert documents_copy_in(collection=collection, docnos=["d3", "d4", "d999"]) == 1
    assert collection.documents.get(docno="d3").text == "Text of d3"
    assert sorted(collection.documents.values_list("docno", flat=True)) == ["d3", "d4"]


@pytest.mark.parametrize(("content", "expected"), [
    (None, "Error: {path}: no such file on this machine."),
    ('{"id": "a", "text": "x"}\n{"id": "b", "text": \n', "Error: {path}:2: not valid JSON: Expecting value"),
    ('{"id": "a", "text": "x"}\n{"id": "a", "text": "y"}\n',
     "Error: {path}:2: document 'a' appears more than once (first at line 1)"),
])
def test_add_corpus_refuses_a_bad_file_in_one_line_and_leaves_nothing(collection, tmp_path, content, expected):
    path = tmp_path / "corpus.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(CommandError) as refused:
        add_corpus(collection, path)
    assert f"Error: {refused.value}" == expected.format(path=path)
    assert not CorpusReference.objects.exists()


def test_the_console_indexes_a_corpus_under_corpus_dirs_in_a_job(client, organizer, collection, tmp_path, settings):
    settings.CORPUS_DIRS = [str(tmp_path / "corpora")]
    (tmp_path / "corpora").mkdir()
    corpus = write_corpus(tmp_path / "corpora" / "c.jsonl")
    client.force_login(organizer)
    assert client.get("/console/robust/corpora/").status_code == 200
    response = client.post("/console/robust/corpora/", {"location": str(corpus), "format": ""})
    assert response.status_code == 302
    job = Job.objects.get(kind="corpus index")
    assert job.status == Job.Status.DONE, job.error
    page = client.get("/console/robust/corpora/").content.decode()
    assert str(corpus) in page and "Ready" in page


@pytest.mark.parametrize("where", ["outside", "unset", "missing"])
def test_the_console_refuses_a_path_it_may_not_use_with_a_form_error(client, organizer, collection, tmp_path,
                                                                     settings, where):
    settings.CORPUS_DIRS = [] if where == "unset" else [str(tmp_path / "corpora")]
    (tmp_path / "corpora").mkdir()
    target = tmp_path / ("corpora/none.jsonl" if where == "missing" else "c.jsonl")
    if where != "missing":
        write_corpus(target)
    client.force_login(organizer)
    response = client.post("/console/robust/corpora/", {"location": str(target), "format": ""})
    assert response.status_code == 400
    errors = response.context["form"].errors["location"]
    assert errors == [{"outside": f"Only files under {tmp_path / 'corpora'} (CORPUS_DIRS) can be used.",
                       "unset": "Corpus files are not enabled here: set CORPUS_DIRS to the server folders that hold "
                                "corpora.",
                       "missing": f"{target}: no such file on this machine."}[where]]
    assert not CorpusReference.objects.exists()


def test_a_console_job_on_a_bad_file_fails_with_the_line_not_a_500(client, organizer, collection, tmp_path, settings):
    settings.CORPUS_DIRS = [str(tmp_path)]
    (tmp_path / "bad.jsonl").write_text('{"id": "a"}\nnot json\n')
    client.force_login(organizer)
    assert client.post("/console/robust/corpora/", {"location": str(tmp_path / "bad.jsonl")}).status_code == 302
    job = Job.objects.get(kind="corpus index")
    assert (job.status, job.error) == (Job.Status.FAILED, f"{tmp_path / 'bad.jsonl'}:2: not valid JSON: Expecting value")
    assert collection.corpus_references.get().status == "failed"


def test_the_outsider_and_the_assessor_cannot_reach_the_corpora_page(client, assessor, outsider, collection):
    for user in (assessor, outsider):
        client.force_login(user)
        assert client.get("/console/robust/corpora/").status_code in (302, 403)


def test_an_index_job_rerun_on_a_ready_reference_gives_the_same_documents(collection, tmp_path):
    reference = corpus_reference_add(collection=collection, location=str(write_corpus(tmp_path / "c.jsonl")))
    assert corpus_reference_index(reference=reference) == 30
    assert corpus_reference_index(reference=reference) == 30
    assert Document.objects.count() == 0


def test_a_parquet_corpus_is_used_by_reference_too(client, organizer, collection, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist([{"id": f"d{i}", "text": f"Parquet text {i}"} for i in range(100)]),
                   tmp_path / "corpus.parquet", row_group_size=10)
    assert "100 documents indexed (parquet)" in add_corpus(collection, tmp_path / "corpus.parquet")
    client.force_login(organizer)
    assert "Parquet text 42" in client.get("/console/robust/document/", {"docno": "d42"}).content.decode()


def test_a_path_too_long_for_the_system_is_a_form_error_and_one_line_not_a_crash(client, organizer, collection,
                                                                                    tmp_path, settings):
    settings.CORPUS_DIRS = [str(tmp_path)]
    too_long = str(tmp_path / ("x" * 300 + ".jsonl"))
    client.force_login(organizer)
    response = client.post("/console/robust/corpora/", {"location": too_long})
    assert response.status_code == 400
    assert response.context["form"].errors["location"] == [f"{too_long[:200]}: cannot be read: File name too long"]
    with pytest.raises(CommandError) as refused:
        add_corpus(collection, too_long)
    assert str(refused.value) == f"{too_long[:200]}: cannot be read: File name too long"
    response = client.post("/judge/organize/robust/dataset/", {"location": too_long, "split": "test"})
    assert response.status_code == 400


def test_deleting_the_collection_removes_its_corpus_index_but_not_the_corpus(collection, tmp_path, var_dir):
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    add_corpus(collection, corpus)
    assert len(list((var_dir / "corpus").iterdir())) == 1
    collection.delete()
    assert list((var_dir / "corpus").iterdir()) == [] and corpus.exists()


def test_add_corpus_refuses_a_path_while_corpus_dirs_is_unset(collection, tmp_path, settings):
    """As the README says: with CORPUS_DIRS unset no corpus file is used, from the shell either."""
    settings.CORPUS_DIRS = []
    corpus = write_corpus(tmp_path / "corpus.jsonl")
    with pytest.raises(CommandError) as refused:
        add_corpus(collection, corpus)
    assert str(refused.value) == ("corpus files are not enabled here: set CORPUS_DIRS to the folders that hold "
                                  "corpora (e.g. CORPUS_DIRS=/data/corpora), or use irds:ID")
    assert not CorpusReference.objects.exists()

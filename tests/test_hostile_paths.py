"""Paths that lead where they should not: a BEIR folder under ``CORPUS_DIRS`` whose corpus, queries or qrels
file is a link to a file outside is refused (console forms, the dataset job, the command), each corpus file is
checked on its own where it leads, and an ir_datasets error names the dataset and its file under
``IR_DATASETS_HOME``, never a folder of the server."""

from __future__ import annotations

import json
import socket
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from workbench.collections.services import collection_create
from workbench.formats import FormatError, irds
from workbench.models import CorpusReference, Job


@pytest.fixture
def places(db, settings, tmp_path):
    """CORPUS_DIRS = corpora/; a BEIR folder in it; a secret file outside it."""
    settings.VAR_DIR = tmp_path / "var"
    corpora = tmp_path / "corpora"
    settings.CORPUS_DIRS = [str(corpora)]
    folder = corpora / "mini"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps({"_id": f"c{i}", "title": "t", "text": f"text {i}"}) + "\n"
                                                 for i in range(5)))
    (folder / "queries.jsonl").write_text(json.dumps({"_id": "1", "text": "a claim"}) + "\n")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\tc3\t1\n")
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.jsonl").write_text(json.dumps({"_id": "s1", "title": "secret", "text": "the server's key"}) + "\n")
    (secret / "test.tsv").write_text("query-id\tcorpus-id\tscore\n1\ts1\t1\n")
    collection_create(slug="beir", name="BEIR")
    return folder, secret


def _link(folder, name: str, secret) -> None:
    """Replace the folder's file ``name`` with a link to the secret file of the same kind."""
    target = secret / ("test.tsv" if name.endswith(".tsv") else "key.jsonl")
    (folder / name).unlink()
    (folder / name).symlink_to(target)


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl", "qrels/test.tsv"])
def test_a_beir_file_linked_out_of_corpus_dirs_is_refused_by_the_console_and_the_command(client, organizer, places,
                                                                                         name):
    folder, secret = places
    _link(folder, name, secret)
    client.force_login(organizer)
    response = client.post("/judge/organize/beir/dataset/", {"location": str(folder), "split": "test"})
    assert response.status_code == 400
    [error] = response.context["form"].errors["location"]
    assert "CORPUS_DIRS" in error and str(secret) not in error
    with pytest.raises(CommandError) as refused:
        call_command("import_dataset", "beir", str(folder), stdout=StringIO(), stderr=StringIO())
    assert str(refused.value) == (f"{folder}: {name} is a link or lies outside the folder; a BEIR folder's files must "
                                  "be plain files inside it (links are not followed)")
    assert not CorpusReference.objects.exists() and not Job.objects.exists()


def test_a_beir_folder_as_a_corpus_never_follows_its_corpus_link(client, organizer, places):
    folder, secret = places
    _link(folder, "corpus.jsonl", secret)
    client.force_login(organizer)
    response = client.post("/console/beir/corpora/", {"location": str(folder), "format": ""})
    assert response.status_code == 400
    assert "CORPUS_DIRS" in response.context["form"].errors["location"][0]
    with pytest.raises(CommandError, match="corpus.jsonl is a link"):
        call_command("add_corpus", "beir", str(folder), stdout=StringIO(), stderr=StringIO())
    assert not CorpusReference.objects.exists()


def test_a_link_swapped_in_after_the_form_is_refused_by_the_job(client, organizer, places, monkeypatch):
    """The form checked a plain folder; by the time the job reads it, its queries file is a link: the job reads
    each file again, and refuses."""
    from judging import dataset_views

    folder, secret = places
    started = dataset_views.jobs.job_start

    def swapped(*args, **kwargs):
        _link(folder, "queries.jsonl", secret)
        return started(*args, **kwargs)

    monkeypatch.setattr(dataset_views.jobs, "job_start", swapped)
    client.force_login(organizer)
    assert client.post("/judge/organize/beir/dataset/", {"location": str(folder), "split": "test"}).status_code == 302
    job = Job.objects.get(kind="dataset import")
    assert job.status == Job.Status.FAILED and "queries.jsonl is a link" in job.error
    assert str(secret) not in job.error and not CorpusReference.objects.exists()


def test_an_ir_datasets_error_names_no_server_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(socket.socket, "connect", lambda *a, **k: pytest.fail("the test tried to use the network"))
    home = tmp_path / "home-of-the-server"
    monkeypatch.setenv("IR_DATASETS_HOME", str(home))
    with pytest.raises(FormatError) as refused:
        irds.check_local("irds:vaswani")
    [line] = refused.value.problems
    assert line == ("irds:vaswani: its documents are not on this machine (vaswani/docs.txt is missing under "
                    "IR_DATASETS_HOME; the workbench never downloads: put the files there first)")
    assert str(tmp_path) not in line


def test_a_refused_beir_import_names_the_folder_not_the_servers_scratch_files(places):
    folder, _ = places
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n9\tc3\t1\n")
    with pytest.raises(CommandError) as refused:
        call_command("import_dataset", "beir", str(folder), stdout=StringIO(), stderr=StringIO())
    assert str(refused.value) == f"{folder}: qrels.txt:1: topic '9' is not in collection 'beir'"
    assert not CorpusReference.objects.exists()

"""Files a user can name that cannot be read give one line naming the file, a non-zero exit and nothing
imported: a missing file, a directory, a corrupt gzip, a truncated gzip; and an unreachable database."""

from __future__ import annotations

import gzip
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.models import Judgment
from tests import factories
from workbench.models import Document, Run, Topic

ROOT = Path(__file__).resolve().parents[2]

IMPORTS = ["import_documents", "import_qrels", "import_runs", "import_topics"]


def _bad_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Each kind of unreadable file, with what the error line must say."""
    corrupt = tmp_path / "corrupt.gz"
    corrupt.write_bytes(b"\x1f\x8b\x08\x00this is not deflate data at all")
    truncated = tmp_path / "truncated.gz"
    whole = gzip.compress("".join(f"301 Q0 doc{i * 7919 % 100003} {i} {1 / i} tag\n"
                                  for i in range(1, 5000)).encode())
    truncated.write_bytes(whole[: len(whole) // 2])
    directory = tmp_path / "a-directory"
    directory.mkdir()
    return {"missing": (tmp_path / "missing.txt", "no such file"),
            "directory": (directory, "it is a directory"),
            "corrupt gzip": (corrupt, "not a valid gzip file"),
            "truncated gzip": (truncated, "truncated")}


@pytest.mark.parametrize("command", IMPORTS)
@pytest.mark.parametrize("kind", ["missing", "directory", "corrupt gzip", "truncated gzip"])
def test_an_unreadable_file_is_one_line_naming_it_and_nothing_is_imported(db, tmp_path, command, kind):
    slug = factories.collection_with_topics().slug
    before = (Topic.objects.count(), Document.objects.count(), Run.objects.count(), Judgment.objects.count())
    path, reason = _bad_files(tmp_path)[kind]
    with pytest.raises(CommandError) as refused:
        call_command(command, slug, str(path), stdout=StringIO(), stderr=StringIO())
    message = str(refused.value)
    assert message.splitlines() == [message]
    assert message.startswith(f"{path}: cannot read: ") and reason in message
    assert (Topic.objects.count(), Document.objects.count(), Run.objects.count(),
            Judgment.objects.count()) == before


def test_trec_eval_names_an_unreadable_file_in_one_line(tmp_path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 d1 1\n")
    corrupt = _bad_files(tmp_path)["corrupt gzip"][0]
    result = subprocess.run([sys.executable, "manage.py", "trec_eval", str(qrels), str(corrupt)], cwd=ROOT,
                            capture_output=True, text=True, env={"PATH": "/usr/bin:/bin",
                                                                 "WORKBENCH_VAR_DIR": str(tmp_path)})
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert str(corrupt) in result.stderr and len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("command", ["compare", "curves", "diversity", "xinfap"])
def test_the_file_only_evaluation_commands_say_error_in_one_line_as_the_others_do(tmp_path, command):
    qrels = tmp_path / "q.txt"
    qrels.write_text("1 0 d1 1 1\n" if command == "xinfap" else "1 0 d1 1\n")  # xinfap's have a stratum
    corrupt = _bad_files(tmp_path)["corrupt gzip"][0]
    runs = [str(corrupt), str(corrupt)] if command == "compare" else [str(corrupt)]
    first, second = (runs[0], str(qrels)) if command == "diversity" else (str(qrels), runs[0])
    argv = [first, second, *runs[1:]] + (["-m", "map"] if command == "compare" else [])
    result = subprocess.run([sys.executable, "manage.py", command, *argv], cwd=ROOT, capture_output=True,
                            text=True, env={"PATH": "/usr/bin:/bin", "WORKBENCH_VAR_DIR": str(tmp_path)})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: {corrupt}"), lines


def test_an_unreachable_database_is_one_line_not_a_traceback(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "WORKBENCH_VAR_DIR": str(tmp_path),
           "DATABASE_URL": "postgres://nobody@127.0.0.1:9/nowhere"}  # port 9 (discard): nothing listens
    result = subprocess.run([sys.executable, "manage.py", "show_collection", "demo"], cwd=ROOT,
                            capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert "database" in result.stderr.lower()


@pytest.mark.django_db(transaction=True)
def test_documents_are_read_and_checked_before_the_write_transaction_opens(tmp_path, monkeypatch):
    from django.db import connection

    from workbench.collections import services

    collection = factories.collection_with_topics()
    path = tmp_path / "docs.trec"
    path.write_text("".join(f"<DOC>\n<DOCNO> d{i} </DOCNO>\ntext {i}\n</DOC>\n" for i in range(5)))
    in_transaction = []
    reader = services.iter_documents

    def watched(source):
        for record in reader(source):
            in_transaction.append(connection.in_atomic_block)  # would be True while holding the write lock
            yield record

    monkeypatch.setattr(services, "iter_documents", watched)
    summary = services.documents_import(collection=collection, sources=[path], batch_size=2)
    assert summary.created == 5 and in_transaction == [False] * 5
    assert sorted(collection.documents.values_list("docno", flat=True)) == [f"d{i}" for i in range(5)]


def test_imported_documents_keep_their_extra_fields_title_text_and_length(db, tmp_path):
    from workbench.collections.services import collection_create, documents_import
    from workbench.models import Document

    collection = collection_create(slug="docs")
    path = tmp_path / "d.jsonl"
    path.write_text('{"docno": "a", "title": "A title", "text": "one two three", "url": "http://x/a"}\n'
                    '{"docno": "b", "text": "only text"}\n')
    summary = documents_import(collection=collection, sources=[path])
    assert (summary.created, summary.updated) == (2, 0)
    a, b = Document.objects.order_by("docno")
    assert (a.title, a.text, a.extra, a.length) == ("A title", "one two three", {"url": "http://x/a"}, 5)
    assert (b.title, b.extra, b.length) == ("", {}, 2)
    path.write_text('{"docno": "a", "title": "New", "text": "t"}\n{"docno": "c", "text": "c"}\n')
    assert documents_import(collection=collection, sources=[path], replace=True).updated == 1
    assert Document.objects.get(docno="a").title == "New" and Document.objects.count() == 3


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", ["topics", "runs", "qrels"])
def test_topics_runs_and_qrels_are_read_before_the_write_transaction_opens(tmp_path, monkeypatch, kind):
    from django.db import connection

    from judging import services as judging_services
    from workbench.collections import run_imports, services

    collection = factories.collection_with_topics()
    seen = []

    def watch(module, name):
        original = getattr(module, name)

        def watched(*args, **kwargs):
            seen.append(connection.in_atomic_block)  # True would mean the file is read inside the write
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, watched)

    if kind == "topics":
        watch(services, "read_topics")
        path = tmp_path / "t.tsv"
        path.write_text("401\tnew topic\n")
        services.topics_import(collection=collection, source=path)
    elif kind == "runs":
        watch(run_imports, "read_run")
        path = tmp_path / "r.run"
        path.write_text(factories.run_lines("r", {"301": ["d1", "d2"]}))
        services.runs_import(collection=collection, specs=[services.RunSpec(source=path)])
    else:
        watch(judging_services, "read_qrels")
        path = tmp_path / "q.txt"
        path.write_text("301 0 d1 1\n")
        judging_services.qrels_import(collection=collection, source=path)
    assert seen == [False]


@pytest.mark.parametrize("command", ["diversity", "trec_eval"])
def test_a_command_read_by_head_stops_quietly_without_a_traceback(tmp_path, command):
    """``manage.py diversity QRELS RUN | head``: the reader closes the pipe after its first line."""
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("".join(f"{t} 0 d{d} {d % 2}\n" for t in range(2000) for d in range(20)))
    run.write_text("".join(f"{t} Q0 d{d} {d} {20 - d} x\n" for t in range(2000) for d in range(20)))
    argv = [str(qrels), str(run)] if command == "diversity" else ["-q", "-m", "all_trec", str(qrels), str(run)]
    reader = subprocess.Popen([sys.executable, "manage.py", command, *argv], cwd=ROOT, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    first = reader.stdout.readline()
    reader.stdout.close()  # as head does once it has its line
    stderr = reader.stderr.read().decode()
    reader.wait(timeout=120)
    assert first.strip()
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr
    assert reader.returncode in (0, 141)

"""The organizer CLI: every command prints what it did, and every import is all-or-nothing."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.models import Judgment
from tests import factories
from workbench.collections import selectors
from workbench.models import Collection, Document, Run, Topic

ROOT = Path(__file__).resolve().parents[2]

ROBUST_TOPICS = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal activity.

<narr> Narrative:
A relevant document must as a minimum identify the organization.
</top>

<top>
<num> Number: 302
<title> Poliomyelitis and Post-Polio

<desc> Description:
Is the disease of Poliomyelitis (polio) under control in the world?

<narr> Narrative:
Relevant documents should contain data or outbreaks of the polio disease.
</top>
"""

TREC_DOCS = """<DOC>
<DOCNO> FBIS3-1 </DOCNO>
<TITLE>Crime rings cross borders</TITLE>
<TEXT>
Police in three countries arrested members of an international smuggling ring.
</TEXT>
</DOC>
<DOC>
<DOCNO> FBIS3-2 </DOCNO>
<TEXT>
Polio vaccination campaign reaches remote villages.
</TEXT>
</DOC>
"""


def run(*args, **kwargs) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO(), **kwargs)
    return out.getvalue()


@pytest.fixture
def empty_collection(db) -> Collection:
    run("create_collection", "robust", "--name", "Robust 2004")
    return Collection.objects.get(slug="robust")


def test_create_collection_with_a_graded_scale_prints_the_scale(db):
    out = run("create_collection", "dl19", "--grades", "0=Irrelevant,1=Related,2=Highly relevant,3=Perfect",
              "--relevant-from", "2")
    collection = Collection.objects.get(slug="dl19")
    assert collection.grades == [0, 1, 2, 3]
    assert collection.relevant_from == 2
    assert "3=Perfect" in out and "relevant from 2" in out


def test_create_collection_is_binary_by_default(db):
    run("create_collection", "plain")
    collection = Collection.objects.get(slug="plain")
    assert collection.grade_labels == {0: "Not relevant", 1: "Relevant"}
    assert collection.relevant_from == 1


def test_create_collection_refuses_a_relevant_grade_outside_the_scale(db):
    with pytest.raises(CommandError, match="relevant_from|scale"):
        run("create_collection", "bad", "--grades", "0=No,1=Yes", "--relevant-from", "3")
    assert not Collection.objects.filter(slug="bad").exists()


def test_create_collection_refuses_a_malformed_scale(db):
    with pytest.raises(CommandError, match="GRADE=LABEL"):
        run("create_collection", "bad", "--grades", "0=No,1")


def test_commands_name_a_missing_collection(db, tmp_path):
    with pytest.raises(CommandError, match="no collection 'nope'"):
        run("show_collection", "nope")


def test_import_topics_reads_classic_trec_sgml(empty_collection, tmp_path):
    path = tmp_path / "topics.txt"
    path.write_text(ROBUST_TOPICS)
    out = run("import_topics", "robust", str(path))
    assert "imported 2 topics" in out
    topic = Topic.objects.get(collection=empty_collection, qid="302")
    assert topic.title == "Poliomyelitis and Post-Polio"
    assert topic.description.startswith("Is the disease of Poliomyelitis")
    assert "outbreaks of the polio disease" in topic.narrative


def test_importing_the_same_topics_twice_is_refused_without_replace(empty_collection, tmp_path):
    path = tmp_path / "topics.txt"
    path.write_text(ROBUST_TOPICS)
    run("import_topics", "robust", str(path))
    err = StringIO()
    with pytest.raises(CommandError, match="2 problems; nothing was imported"):
        call_command("import_topics", "robust", str(path), stdout=StringIO(), stderr=err)
    assert "topic '301' is already in collection 'robust' (use --replace" in err.getvalue()
    assert "updated" in run("import_topics", "robust", str(path), "--replace")
    assert Topic.objects.filter(collection=empty_collection).count() == 2


def test_import_documents_reads_trec_sgml_and_gzip(empty_collection, tmp_path):
    path = tmp_path / "docs.trec.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(TREC_DOCS)
    out = run("import_documents", "robust", str(path))
    assert "imported 2 documents" in out
    doc = Document.objects.get(collection=empty_collection, docno="FBIS3-1")
    assert doc.title == "Crime rings cross borders"
    assert "smuggling ring" in doc.text
    assert doc.length > 5


def test_a_document_import_with_a_duplicate_docno_leaves_nothing_behind(empty_collection, tmp_path):
    first = tmp_path / "a.trec"
    first.write_text(TREC_DOCS)
    second = tmp_path / "b.trec"
    second.write_text(TREC_DOCS.replace("FBIS3-2", "FBIS3-3"))
    with pytest.raises(CommandError, match="FBIS3-1"):
        run("import_documents", "robust", str(first), str(second))
    assert Document.objects.filter(collection=empty_collection).count() == 0


def test_import_runs_stores_every_entry_and_the_metadata(collection, run_files):
    out = run("import_runs", "robust", *map(str, run_files), "--team", "uni")
    assert "imported run 'alpha': 6 entries, 3 topics" in out
    assert "imported 2 runs" in out
    alpha = Run.objects.get(collection=collection, tag="alpha")
    assert (alpha.team, alpha.contributes, alpha.pool_priority, alpha.source_file) == ("uni", True, 1, "alpha.run")
    assert Run.objects.get(collection=collection, tag="beta").pool_priority == 2
    frames = selectors.run_frames(collection)
    assert list(frames["beta"]["docno"]) == ["d3", "d7", "d5", "d8", "d9"]
    assert list(frames["alpha"]["score"][:2]) == [99.0, 98.0]


def test_import_runs_with_no_pool_marks_runs_as_not_contributing(collection, run_files):
    out = run("import_runs", "robust", str(run_files[0]), "--no-pool")
    assert "not offered to the pool" in out
    assert Run.objects.get(tag="alpha").contributes is False


def test_a_malformed_run_is_refused_naming_its_line_and_nothing_is_imported(collection, run_files, tmp_path):
    bad = tmp_path / "gamma.run"
    bad.write_text("301 Q0 d1 1 9.5 gamma\n301 Q0 d2 2 high gamma\n301 Q0 d3 3 7.5 gamma\n")
    err = StringIO()
    with pytest.raises(CommandError) as info:
        call_command("import_runs", "robust", str(run_files[0]), str(bad), stdout=StringIO(), stderr=err)
    assert f"{bad}:2" in str(info.value) + err.getvalue()
    assert Run.objects.count() == 0


def test_every_problem_of_a_run_is_reported_not_just_the_first(collection, tmp_path):
    bad = tmp_path / "gamma.run"
    bad.write_text("301 Q0 d1 1 9.5 gamma\n301 Q0 d1 2 9.0 gamma\n999 Q0 d2 1 8.0 gamma\n301 Q0 d4 4 gamma\n")
    err = StringIO()
    with pytest.raises(CommandError, match="problems; nothing was imported"):
        call_command("import_runs", "robust", str(bad), stdout=StringIO(), stderr=err)
    report = err.getvalue()
    assert f"{bad}:2" in report and f"{bad}:3" in report and f"{bad}:4" in report
    assert Run.objects.count() == 0


def test_a_run_deeper_than_the_collection_allows_is_refused(db, tmp_path):
    collection = factories.collection_with_topics()
    collection.max_depth = 2
    collection.save()
    path = tmp_path / "deep.run"
    path.write_text(factories.run_lines("deep", {"301": ["d1", "d2", "d3"]}))
    with pytest.raises(CommandError, match=r"deep.run:3"):
        run("import_runs", "robust", str(path))
    assert Run.objects.count() == 0


def test_a_run_tag_already_in_the_collection_is_refused(collection, run_files):
    run("import_runs", "robust", str(run_files[0]))
    with pytest.raises(CommandError, match="already in collection"):
        run("import_runs", "robust", str(run_files[0]))
    assert Run.objects.filter(tag="alpha").count() == 1


def test_import_qrels_counts_as_judgments_by_an_assessor_named_after_the_file(collection, tmp_path):
    path = tmp_path / "qrels.robust.txt"
    path.write_text("301 0 d1 1\n301 0 d2 0\n302 Q0 d4 1\n302 1.5 d5 0\n")
    out = run("import_qrels", "robust", str(path))
    assert "imported 4 judgments on 2 topics" in out
    assert set(Judgment.objects.values_list("assessor", flat=True)) == {"qrels:qrels.robust.txt"}
    assert Judgment.objects.get(docno="d1").grade == 1


def test_reimporting_qrels_changes_nothing_and_new_grades_become_revisions(collection, tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("301 0 d1 1\n301 0 d2 0\n")
    run("import_qrels", "robust", str(path), "--assessor", "nist")
    assert "2 unchanged" in run("import_qrels", "robust", str(path), "--assessor", "nist")
    path.write_text("301 0 d1 0\n301 0 d2 0\n")
    assert "1 revised" in run("import_qrels", "robust", str(path), "--assessor", "nist")
    revision = Judgment.objects.get(docno="d1", previous__isnull=False)
    assert (revision.grade, revision.previous.grade) == (0, 1)


def test_imported_judgments_are_whole_records(collection, tmp_path):
    """The import writes rows without model instances: every field must still be what the model says."""
    from django.utils import timezone

    before = timezone.now()
    path = tmp_path / "q.txt"
    path.write_text('301 0 doc,with"quote 1\n302 0 plain 0\n')
    run("import_qrels", "robust", str(path), "--assessor", "nist")
    record = Judgment.objects.get(docno='doc,with"quote')
    assert (record.grade, record.assessor, record.source, record.cannot_judge) == (1, "nist", "import", False)
    assert (record.user, record.comment, record.rationale, record.client_token, record.previous) == \
        (None, "", "", None, None)
    assert before <= record.created_at <= timezone.now()
    assert record.topic.qid == "301" and record.collection == collection


def test_qrels_for_an_unknown_topic_are_refused_naming_the_line(collection, tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("301 0 d1 1\n404 0 d2 1\n")
    with pytest.raises(CommandError, match=r"q.txt:2: topic '404' is not in collection"):
        run("import_qrels", "robust", str(path))
    assert Judgment.objects.count() == 0


def test_qrels_with_a_grade_off_the_scale_are_refused(collection, tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("301 0 d1 1\n301 0 d2 3\n")
    with pytest.raises(CommandError, match=r"q.txt:2: grade 3 is not on the collection's scale"):
        run("import_qrels", "robust", str(path))
    assert Judgment.objects.count() == 0


def test_export_qrels_is_sorted_by_topic_then_document(collection, tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("303 0 b 1\n301 0 z 0\n301 0 a 1\n302 0 m 1\n")
    run("import_qrels", "robust", str(path), "--assessor", "nist")
    out = run("export_qrels", "robust")
    assert out.splitlines() == ["301 0 a 1", "301 0 z 0", "302 0 m 1", "303 0 b 1"]
    target = tmp_path / "export.txt"
    run("export_qrels", "robust", "--assessor", "nist", "-o", str(target))
    assert target.read_text().splitlines() == out.splitlines()


def test_show_collection_prints_counts_as_json(collection, run_files, tmp_path):
    factories.add_documents(collection, ["d1", "d2"])
    run("import_runs", "robust", *map(str, run_files))
    qrels = tmp_path / "q.txt"
    qrels.write_text("301 0 d1 1\n")
    run("import_qrels", "robust", str(qrels))
    summary = json.loads(run("show_collection", "robust"))
    assert summary == {"slug": "robust", "name": "Robust sample", "topics": 3, "documents": 2,
                       "runs": ["alpha", "beta"], "judgments": 1, "pool": 0,
                       "judged_in_pool": {"pool": None, "judged": 0, "pooled": 0, "percent": 0},
                       "judged_documents": 1}


def test_command_errors_reach_the_terminal_as_one_line_without_a_traceback(tmp_path):
    env = {"DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite3'}", "PATH": "/usr/bin:/bin"}
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([sys.executable, "manage.py", "create_collection", "c"], cwd=ROOT, env=env, check=True,
                   capture_output=True)
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 d1 1 0.5 t\n1 Q0 d2 2 0.4\n")
    result = subprocess.run([sys.executable, "manage.py", "import_runs", "c", str(bad)], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith(f"Error: {bad}:2:")
    assert "Traceback" not in result.stderr

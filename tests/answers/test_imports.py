"""Answer runs, nugget banks and nuggetizer assignments imported: all or nothing, one line per problem."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from answers.imports import answers_import
from answers.imports_nuggets import assignments_import, nuggets_export, nuggets_import
from answers.models import Answer, AnswerRun, AnswerSentence, NuggetAssignment, NuggetBank
from tests.answers.generated import answer_line, write_track
from workbench.collections.refusals import ImportRefused
from workbench.collections.services import collection_create
from workbench.models import Run, Topic


@pytest.fixture
def track(db):
    collection = collection_create(slug="rag", name="RAG sample")
    for qid in ("1", "2", "3"):
        Topic.objects.create(collection=collection, qid=qid, title=f"question {qid}")
    return collection


def test_autojudge_answer_runs_import_with_sentences_and_resolved_citations(track, tmp_path):
    path = tmp_path / "alpha.jsonl"
    path.write_text(answer_line("alpha", "1", [("Polio is rare.", [0, 1]), ("It was common.", [])],
                                ["s1", "s2"]) + "\n" + answer_line("alpha", "2", [("Yes.", ["s3"])], ["s3"]) + "\n")
    [imported] = answers_import(collection=track, sources=[path])
    run = imported.run
    assert (run.tag, run.team, run.kind, run.num_topics, run.num_sentences, run.num_citations) == (
        "alpha", "team", "answer", 2, 3, 3)
    assert run.ir_metadata == {"team_id": "team", "run_id": "alpha", "type": "automatic"}
    answer = Answer.objects.get(run=run, topic__qid="1")
    assert answer.cited == ["s1", "s2"]
    assert list(answer.sentences.values_list("text", "citations")) == [("Polio is rare.", ["s1", "s2"]),
                                                                      ("It was common.", [])]


def test_an_answer_run_with_the_tag_of_a_ranked_run_is_of_kind_both(track, tmp_path):
    Run.objects.create(collection=track, tag="alpha")
    path = tmp_path / "alpha.jsonl"
    path.write_text(answer_line("alpha", "1", [("A.", [0])], ["s1"]) + "\n")
    [imported] = answers_import(collection=track, sources=[path])
    assert imported.run.kind == "both"


def test_a_malformed_line_refuses_every_file_with_its_file_and_line(track, tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(answer_line("good", "1", [("A.", [0])], ["s1"]) + "\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(answer_line("bad", "1", [("A.", [0])], ["s1"]) + "\n{not json\n"
                   + answer_line("bad", "9", [("B.", [0])], ["s1"]) + "\n"
                   + answer_line("bad", "2", [("C.", [3])], ["s1"]) + "\n")
    with pytest.raises(ImportRefused) as refused:
        answers_import(collection=track, sources=[good, bad])
    problems = [p.replace(f"{tmp_path}/", "") for p in refused.value.problems]
    assert problems[0].startswith("bad.jsonl:2: not JSON")
    assert any(p.startswith("bad.jsonl:4:") and "out of range" in p for p in problems)
    assert any(p.startswith("bad.jsonl:3:") and "'9' is not a topic of the collection" in p for p in problems)
    assert not AnswerRun.objects.exists() and not AnswerSentence.objects.exists()


def test_the_command_imports_answers_and_refuses_a_tag_twice(track, tmp_path, capsys):
    path = tmp_path / "alpha.jsonl"
    path.write_text(answer_line("alpha", "1", [("A.", [0])], ["s1"]) + "\n")
    call_command("import_answers", "rag", str(path))
    assert "imported answer run 'alpha' (answer): 1 topics, 1 sentences, 1 citations" in capsys.readouterr().out
    with pytest.raises(CommandError, match=r"alpha.jsonl:1: the collection has an answer run 'alpha' already"):
        call_command("import_answers", "rag", str(path))
    call_command("import_answers", "rag", str(path), "--replace")
    assert AnswerRun.objects.count() == 1 and Answer.objects.count() == 1


def test_nugget_banks_import_as_versions_and_export_as_nuggetizer_reads_them(track, tmp_path, capsys):
    path = tmp_path / "nuggets.jsonl"
    banks = [{"qid": "1", "query": "question 1", "nuggets": [{"text": "Polio is rare", "importance": "vital"},
                                                             {"text": "Vaccines exist", "importance": "okay"}]},
             {"qid": "2", "query": "question 2", "nuggets": [{"text": "Yes", "importance": "okay"}]}]
    path.write_text("".join(json.dumps(b) + "\n" for b in banks))
    assert nuggets_import(collection=track, source=path).versions == 2
    again = nuggets_import(collection=track, source=path)
    assert (again.versions, again.unchanged) == (0, 2)
    assert [json.loads(line) for line in nuggets_export(track)] == banks
    banks[0]["nuggets"][1]["importance"] = "vital"
    path.write_text("".join(json.dumps(b) + "\n" for b in banks))
    call_command("import_nuggets", "rag", str(path))
    assert "1 new bank versions (2 nuggets)" in capsys.readouterr().out
    assert list(NuggetBank.objects.filter(topic__qid="1").values_list("version", flat=True)) == [1, 2]
    call_command("export_nuggets", "rag")
    assert [json.loads(line) for line in capsys.readouterr().out.splitlines()] == banks


def test_a_bad_nugget_bank_is_refused_with_file_and_line(track, tmp_path, capsys):
    path = tmp_path / "nuggets.jsonl"
    path.write_text('{"qid": "1", "query": "q", "nuggets": [{"text": "A", "importance": "high"}]}\n'
                    '{"qid": "7", "query": "q", "nuggets": []}\n')
    with pytest.raises(CommandError, match="2 problems; nothing was imported"):
        call_command("import_nuggets", "rag", str(path))
    assert "nuggets.jsonl:1: nuggets[0].importance must be 'vital' or 'okay', not 'high'" in capsys.readouterr().err
    with pytest.raises(ImportRefused) as refused:
        nuggets_import(collection=track, source=path)
    assert refused.value.problems[1] == f"{tmp_path}/nuggets.jsonl:2: topic '7' is not a topic of the collection"
    assert not NuggetBank.objects.exists()


def test_assignments_import_against_the_current_bank_and_revise_on_a_second_file(track, tmp_path):
    files = write_track(tmp_path, runs=2, qids=["1", "2", "3"], nuggets=4)
    answers_import(collection=track, sources=files["answers"])
    nuggets_import(collection=track, source=files["banks"])
    summary = assignments_import(collection=track, source=files["assignments"], assessor="nist")
    total = sum(len(r["nuggets"]) for r in files["records"])
    assert (summary.created, summary.answers, summary.assessor) == (total, 6, "nist")
    first = NuggetAssignment.objects.order_by("id").first()
    assert (first.provenance, first.source, first.comment, first.user_id) == ({}, "import", "", None)
    records = files["records"]
    flipped = {**records[0], "nuggets": [{**n, "assignment": "support"} for n in records[0]["nuggets"]]}
    changed = sum(n["assignment"] != "support" for n in records[0]["nuggets"])
    path = tmp_path / "again.jsonl"
    path.write_text(json.dumps(flipped) + "\n")
    again = assignments_import(collection=track, source=path, assessor="nist")
    assert (again.created, again.revised, again.unchanged) == (changed, changed, len(records[0]["nuggets"]) - changed)
    assert NuggetAssignment.objects.filter(previous__isnull=False).count() == changed


def test_an_assignment_of_a_nugget_not_in_the_bank_refuses_the_file(track, tmp_path):
    files = write_track(tmp_path, runs=1, qids=["1", "2", "3"], nuggets=3)
    answers_import(collection=track, sources=files["answers"])
    nuggets_import(collection=track, source=files["banks"])
    path = tmp_path / "wrong.jsonl"
    path.write_text(json.dumps({"qid": "1", "run_id": "run000", "nuggets": [
        {"text": "not a nugget", "importance": "vital", "assignment": "support"}]}) + "\n"
        + json.dumps({"qid": "2", "run_id": "nobody", "nuggets": []}) + "\n")
    with pytest.raises(CommandError) as refused:
        call_command("import_assignments", "rag", str(path), "--assessor", "nist")
    assert "2 problems; nothing was imported" in str(refused.value)
    with pytest.raises(ImportRefused) as refused:
        assignments_import(collection=track, source=path)
    assert [p.replace(f"{tmp_path}/", "") for p in refused.value.problems] == [
        "wrong.jsonl:1: nuggets[0] (vital: 'not a nugget') is not in topic '1''s bank (version 1)",
        "wrong.jsonl:2: run 'nobody' has no answer to topic '2'"]
    assert not NuggetAssignment.objects.exists()

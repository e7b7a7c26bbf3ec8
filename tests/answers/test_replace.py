"""Replacing an answer run (what it had goes, the other runs keep theirs) and a run that is both ranked and answer,
whichever file comes first."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from answers.imports import answers_import
from answers.imports_nuggets import assignments_import, nuggets_import
from answers.models import (
    Answer,
    AnswerPoolItem,
    AnswerRun,
    AnswerSentence,
    NuggetAssignment,
    SupportJudgment,
)
from answers.pools import answer_pool_build
from tests.answers.generated import answer_line, write_track
from workbench.collections.services import collection_create
from workbench.models import Run, Topic

QIDS = ["1", "2", "3"]


@pytest.fixture
def track(db):
    collection = collection_create(slug="rag", name="RAG sample")
    for qid in QIDS:
        Topic.objects.create(collection=collection, qid=qid, title=f"question {qid}")
    return collection


def _rows_of(collection, tag: str) -> dict[str, set]:
    """Every row hanging from the answer run ``tag``, by kind."""
    answers = Answer.objects.filter(run__collection=collection, run__tag=tag)
    sentences = AnswerSentence.objects.filter(answer__in=answers)
    return {
        "answers": set(answers.values_list("pk", flat=True)),
        "sentences": set(sentences.values_list("pk", flat=True)),
        "assignments": set(NuggetAssignment.objects.filter(answer__in=answers).values_list("pk", flat=True)),
        "support": set(SupportJudgment.objects.filter(sentence__in=sentences).values_list("pk", flat=True)),
        "pool items": set(AnswerPoolItem.objects.filter(answer__in=answers).values_list("pk", flat=True)),
    }


def test_replacing_an_answer_run_removes_all_it_had_and_leaves_the_other_runs_untouched(track, tmp_path):
    files = write_track(tmp_path, runs=3, qids=QIDS, nuggets=4)
    answers_import(collection=track, sources=files["answers"])
    nuggets_import(collection=track, source=files["banks"])
    assignments_import(collection=track, source=files["assignments"], assessor="nist")
    first = NuggetAssignment.objects.filter(answer__run__tag="run001").order_by("pk").first()
    NuggetAssignment.objects.create(collection=track, assessor="nist", answer=first.answer, nugget=first.nugget,
                                    bank=first.bank, assignment="support", previous=first)  # a revision
    for kind in ("nugget", "support"):
        answer_pool_build(collection=track, kind=kind)
    for sentence in AnswerSentence.objects.exclude(citations=[]):
        judged = SupportJudgment.objects.create(collection=track, sentence=sentence, docno=sentence.citations[0],
                                                support="full_support", assessor="nist")
        SupportJudgment.objects.create(collection=track, sentence=sentence, docno=sentence.citations[0],
                                       support="no_support", assessor="nist", previous=judged)
    before = {tag: _rows_of(track, tag) for tag in ("run000", "run001", "run002")}
    assert all(before["run001"].values())

    replacement = tmp_path / "again.jsonl"
    replacement.write_text(answer_line("run001", "1", [("Only this.", [0])], ["seg-1-1"]) + "\n")
    [imported] = answers_import(collection=track, sources=[replacement], replace=True)

    assert imported.replaced and AnswerRun.objects.filter(tag="run001").count() == 1
    after = _rows_of(track, "run001")
    for kind, old in before["run001"].items():
        assert not old & after[kind], f"old {kind} of run001 remain"
    assert len(after["answers"]) == 1 and len(after["sentences"]) == 1
    assert not after["assignments"] and not after["support"] and not after["pool items"]
    assert {tag: _rows_of(track, tag) for tag in ("run000", "run002")} == {
        tag: before[tag] for tag in ("run000", "run002")}


def _ranked_file(tmp_path, tag: str):
    path = tmp_path / f"{tag}.run"
    path.write_text("".join(f"{q} Q0 seg-{q}-{d} {d + 1} {10 - d}.0 {tag}\n" for q in QIDS for d in range(3)))
    return path


def _answer_file(tmp_path, tag: str):
    path = tmp_path / f"{tag}.jsonl"
    path.write_text("".join(answer_line(tag, q, [("A.", [0])], [f"seg-{q}-1"]) + "\n" for q in QIDS))
    return path


def test_a_ranked_run_imported_after_its_answer_run_makes_a_run_of_kind_both(track, tmp_path):
    call_command("import_answers", "rag", str(_answer_file(tmp_path, "alpha")), str(_answer_file(tmp_path, "beta")))
    assert AnswerRun.objects.get(tag="alpha").kind == "answer"
    call_command("import_runs", "rag", str(_ranked_file(tmp_path, "alpha")))
    alpha = AnswerRun.objects.get(tag="alpha")
    assert alpha.kind == "both" and alpha.ranked_run == Run.objects.get(tag="alpha")
    assert AnswerRun.objects.get(tag="beta").kind == "answer"

    call_command("import_runs", "rag", str(_ranked_file(tmp_path, "alpha")), "--replace")
    assert AnswerRun.objects.get(tag="alpha").ranked_run == Run.objects.get(tag="alpha")


def test_an_answer_run_imported_after_its_ranked_run_makes_a_run_of_kind_both(track, tmp_path):
    call_command("import_runs", "rag", str(_ranked_file(tmp_path, "alpha")))
    call_command("import_answers", "rag", str(_answer_file(tmp_path, "alpha")))
    assert AnswerRun.objects.get(tag="alpha").ranked_run == Run.objects.get(tag="alpha")
    call_command("import_answers", "rag", str(_answer_file(tmp_path, "alpha")), "--replace")
    assert AnswerRun.objects.get(tag="alpha").kind == "both"

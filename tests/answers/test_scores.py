"""answer_scores equals nuggetizer's own metric code, line by line; support, coverage and flags as a user reads them."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from answers.imports import answers_import
from answers.imports_nuggets import assignments_import, nuggets_import
from answers.models import Answer, AnswerSentence, Nugget, NuggetAssignment, NuggetBank, SupportJudgment
from answers.scores import answer_scores, run_means
from judging.models import Judgment
from tests.answers.generated import answer_line, write_track
from workbench.collections.services import collection_create
from workbench.models import Topic

SCORES = ("strict_vital_score", "strict_all_score", "vital_score", "all_score")


def _track(slug: str, qids: list[str]):
    collection = collection_create(slug=slug, name=slug)
    Topic.objects.bulk_create(Topic(collection=collection, qid=q, title=f"question {q}") for q in qids)
    return collection


def _scores_json(*args) -> list[dict]:
    out = io.StringIO()
    call_command("answer_scores", *args, "--format", "json", stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


@pytest.mark.parametrize("seed", [3, 11])
def test_answer_scores_equal_nuggetizer_on_generated_assignments(db, tmp_path, seed):
    metrics = pytest.importorskip("nuggetizer.core.metrics")
    qids = [str(q) for q in range(1, 15)]
    collection = _track("rag", qids)
    files = write_track(tmp_path, runs=6, qids=qids, nuggets=8, seed=seed)
    answers_import(collection=collection, sources=files["answers"])
    nuggets_import(collection=collection, source=files["banks"])
    assignments_import(collection=collection, source=files["assignments"], assessor="nist")
    records = files["records"]
    assert any(r["nuggets"] and all(n["importance"] == "okay" for n in r["nuggets"]) for r in records)
    assert any(r["nuggets"] and all(n["assignment"] == "not_support" for n in r["nuggets"]) for r in records)
    lines = _scores_json("rag")
    assert len(lines) == 6 * 14 + 6
    ours = {(line["run"], line["qid"]): line for line in lines}
    for record in records:
        theirs = metrics.calculate_nugget_scores(record["qid"], record["nuggets"])
        line = ours[(record["run_id"], record["qid"])]
        assert set(line) == {"run", "qid", *SCORES}
        for name in SCORES:
            assert line[name] == pytest.approx(getattr(theirs, name), abs=1e-12), (record["run_id"], record["qid"])
    for run in {r["run_id"] for r in records}:
        theirs = metrics.calculate_global_metrics([r for r in records if r["run_id"] == run])
        assert {k: ours[(run, "all")][k] for k in SCORES} == pytest.approx(
            {k: theirs[k] for k in SCORES}, abs=1e-12)
    assert [line["qid"] for line in _scores_json("rag", "--run", "run002")] == [*sorted(qids), "all"]


def test_unknown_run_and_nothing_to_score_say_so_in_one_line(db):
    _track("empty", ["1"])
    with pytest.raises(CommandError, match="no answer of 'empty' has nugget assignments"):
        call_command("answer_scores", "empty")
    with pytest.raises(CommandError, match="no answer run 'nope' in 'empty'"):
        call_command("answer_scores", "empty", "--run", "nope")


def test_support_coverage_unjudged_citations_and_a_changed_bank_are_shown(db, tmp_path):
    collection = _track("cite", ["1"])
    path = tmp_path / "a.jsonl"
    path.write_text(answer_line("a", "1", [("One.", [0, 1]), ("Two.", [1]), ("Three.", [])], ["s1", "s2"]) + "\n")
    answers_import(collection=collection, sources=[path])
    topic = Topic.objects.get(collection=collection)
    bank = NuggetBank.objects.create(collection=collection, topic=topic, version=1)
    vital = Nugget.objects.create(bank=bank, order=0, text="v", importance="vital")
    Nugget.objects.create(bank=bank, order=1, text="o", importance="okay")  # nobody assigns it: not_support
    answer = Answer.objects.get()
    common = {"collection": collection, "answer": answer, "bank": bank}
    NuggetAssignment.objects.create(**common, nugget=vital, assignment="support", assessor="bot", source="machine")
    NuggetAssignment.objects.create(**common, nugget=vital, assignment="partial_support", assessor="ann")
    first, second, _ = AnswerSentence.objects.filter(answer=answer).order_by("position")
    SupportJudgment.objects.create(collection=collection, sentence=first, docno="s1", support="full_support",
                                   assessor="ann")
    SupportJudgment.objects.create(collection=collection, sentence=first, docno="s2", support="no_support",
                                   assessor="ann")
    SupportJudgment.objects.create(collection=collection, sentence=second, docno="s2", support="partial_support",
                                   assessor="ann")
    Judgment.objects.create(collection=collection, topic=topic, docno="s1", grade=1, assessor="ann")
    [row] = answer_scores(collection).to_dict("records")
    # a person's partial support outranks the machine's support; the unassigned okay nugget counts 0
    assert (row["strict_vital_score"], row["vital_score"], row["all_score"], row["unassigned"]) == (0.0, 0.5, 0.25, 1)
    assert row["support_precision"] == pytest.approx(0.5)  # (1 + 0 + 0.5) / 3 judged pairs
    assert row["support_recall"] == pytest.approx(0.5)  # (1 + 0.5 + 0) / 3 sentences
    assert row["citation_coverage"] == pytest.approx(2 / 3)
    assert row["unjudged_citations"] == 1 and not row["bank_changed"]
    NuggetBank.objects.create(collection=collection, topic=topic, version=2)
    [row] = answer_scores(collection).to_dict("records")
    assert row["bank_changed"] and row["bank_version"] == 1
    [mean] = run_means(answer_scores(collection)).to_dict("records")
    assert (mean["qid"], mean["topics"], mean["bank_changed"]) == ("all", 1, 1)
    [machine] = answer_scores(collection, assessor="bot").to_dict("records")
    assert machine["strict_vital_score"] == 1.0
    line, total = _scores_json("cite", "--all-columns")
    assert (line["qid"], line["unjudged_citations"], line["bank_changed"], total["qid"]) == ("1", 1, True, "all")
    assert line["support_recall"] == pytest.approx(0.5) and total["bank_version"] is None

"""The release bundle of a collection with answer runs holds its nuggets, assignments, support judgments and answer
scores (equal to export_nuggets and answer_scores); a collection without answers holds none of them."""

from __future__ import annotations

import io
import json
import zipfile

from django.core.management import call_command

from answers.imports import answers_import
from answers.imports_nuggets import assignments_import, nuggets_import
from answers.models import AnswerSentence, SupportJudgment
from evaluation.release import release_bundle
from tests.answers.generated import write_track
from workbench.collections.services import collection_create
from workbench.models import Topic

ANSWER_FILES = ("answers/nuggets.jsonl", "answers/assignments.jsonl", "answers/support.jsonl",
                "answers/answer_scores.jsonl")


def _zip(collection) -> dict[str, str]:
    bundle = release_bundle(collection)
    with zipfile.ZipFile(io.BytesIO(bundle.data)) as archive:
        return {name.split("/", 1)[1]: archive.read(name).decode() for name in archive.namelist()}


def _command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def _track(slug: str, qids: list[str]):
    collection = collection_create(slug=slug, name=slug)
    Topic.objects.bulk_create(Topic(collection=collection, qid=q, title=f"question {q}") for q in qids)
    return collection


def test_the_release_holds_the_answer_files_equal_to_the_commands(db, tmp_path):
    qids = ["1", "2", "3"]
    collection = _track("rag", qids)
    files = write_track(tmp_path, runs=2, qids=qids, nuggets=4, seed=5)
    answers_import(collection=collection, sources=files["answers"])
    nuggets_import(collection=collection, source=files["banks"])
    assignments_import(collection=collection, source=files["assignments"], assessor="nist")
    sentence = AnswerSentence.objects.filter(answer__run__tag="run001", answer__topic__qid="2").exclude(
        citations=[]).first()
    SupportJudgment.objects.create(collection=collection, sentence=sentence, docno=sentence.citations[0],
                                   support="partial_support", assessor="ann")
    bundle = _zip(collection)
    assert set(ANSWER_FILES) <= set(bundle)
    assert bundle["answers/nuggets.jsonl"] == _command("export_nuggets", "rag")
    assert bundle["answers/answer_scores.jsonl"] == _command("answer_scores", "rag", "--format", "json",
                                                            "--all-columns")
    # the assignments are nuggetizer's assign output as imported (every nugget of these banks was assigned)
    ours = [json.loads(line) for line in bundle["answers/assignments.jsonl"].splitlines()]
    assert ours == sorted(files["records"], key=lambda r: (r["run_id"], r["qid"]))
    [support] = [json.loads(line) for line in bundle["answers/support.jsonl"].splitlines()]
    assert (support["run_id"], support["qid"], support["docno"], support["support"]) == (
        "run001", "2", sentence.citations[0], "partial_support")
    readme = bundle["README.md"]
    for name in ANSWER_FILES:
        assert f"`{name}`" in readme
        assert name in readme.split("## Checksums")[1]


def test_a_release_without_answers_holds_none_of_them(db):
    collection = _track("plain", ["1"])
    bundle = _zip(collection)
    assert not [name for name in bundle if name.startswith("answers/")]
    assert "nuggets" not in bundle["README.md"]

"""Importing answer runs (``workbench.formats.answers``): every file checked first, then all stored or none.

A file is read and validated before the transaction that stores it begins; any problem in any file refuses the
whole import with one line per problem (``file:line: what``). An answer run whose tag is a ranked run of the
collection is linked to it (a run of kind *both*). The run's ``ir_metadata`` is what its lines' metadata share
(every field whose value is the same on every line, e.g. ``team_id``, ``type``, an ``ir_metadata`` object).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from answers.models import Answer, AnswerRun, AnswerSentence
from workbench.collections.bulk import insert_columns
from workbench.collections.refusals import ImportRefused
from workbench.formats import FormatError
from workbench.formats import answers as answer_format
from workbench.formats.sources import Source, is_path
from workbench.models import Collection, Run

__all__ = ["ImportedAnswers", "answers_check", "answers_import", "answers_store"]

#: metadata fields that belong to one answer, never to the run
_PER_ANSWER = {"topic_id", "narrative_id", "narrative", "topic", "response_length"}


@dataclass(frozen=True)
class ImportedAnswers:
    run: AnswerRun
    replaced: bool


def _sha256(source: Source) -> str:
    if not is_path(source):
        return ""
    digest = hashlib.sha256()
    with open(source, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def answers_check(collection: Collection, sources: Sequence[Source], *, names: Sequence[str] | None = None,
                  replace: bool = False, max_problems: int = 20,
                  progress: Callable[[int], None] | None = None) -> list[tuple[answer_format.AnswerRun, str]]:
    """Every file read and checked (its run and its sha256), or :class:`ImportRefused` with every problem:
    a file's own problems, a run id in two files, a run id the collection holds already (unless ``replace``)."""
    known = set(collection.topics.values_list("qid", flat=True))
    problems: list[str] = []
    checked: list[tuple[answer_format.AnswerRun, str]] = []
    for k, source in enumerate(sources):
        name = names[k] if names else None
        try:
            run = answer_format.read_answers(source, name=name, known_qids=known, max_problems=max_problems)
            checked.append((run, _sha256(source)))
        except FormatError as exc:
            problems.extend(exc.problems)
        except OSError as exc:
            problems.append(f"{name or source}: cannot be read: {exc.strerror or exc}")
        if progress:
            progress(1)
    first: dict[str, str] = {}
    existing = set(collection.answer_runs.values_list("tag", flat=True))
    for run, _ in checked:
        if run.run_id in first:
            problems.append(f"{run.name}:1: run {run.run_id!r} is also in {first[run.run_id]}: one file per run")
        elif run.run_id in existing and not replace:
            problems.append(f"{run.name}:1: the collection has an answer run {run.run_id!r} already "
                            "(import with replace to replace it)")
        first.setdefault(run.run_id, run.name)
    if problems:
        raise ImportRefused(problems)
    return checked


def _run_metadata(run: answer_format.AnswerRun) -> dict:
    shared = dict(run.answers[0].metadata)
    for answer in run.answers[1:]:
        shared = {k: v for k, v in shared.items() if k in answer.metadata and answer.metadata[k] == v}
    return {k: v for k, v in shared.items() if k not in _PER_ANSWER}


@transaction.atomic
def answers_store(collection: Collection, checked: Sequence[tuple[answer_format.AnswerRun, str]], *,
                  contributes: bool = True, description: str = "",
                  progress: Callable[[int], None] | None = None) -> list[ImportedAnswers]:
    """Store checked answer runs (replacing runs of the same tag) in one transaction."""
    topics = dict(collection.topics.values_list("qid", "pk"))
    ranked = dict(Run.objects.filter(collection=collection).values_list("tag", "pk"))
    stored = []
    for run, sha in checked:
        replaced, _ = AnswerRun.objects.filter(collection=collection, tag=run.run_id).delete()
        meta = _run_metadata(run)
        sentences = sum(len(a.sentences) for a in run.answers)
        record = AnswerRun.objects.create(
            collection=collection, tag=run.run_id, team=run.team_id, description=description,
            run_type=str(meta.get("type", "")), ir_metadata=meta, ranked_run_id=ranked.get(run.run_id),
            contributes=contributes, source_file=Path(run.name).name[:500], sha256=sha,
            num_topics=len(run.answers), num_sentences=sentences,
            num_citations=sum(len(s.citations) for a in run.answers for s in a.sentences))
        answers = Answer.objects.bulk_create([
            Answer(run=record, topic_id=topics[a.topic_id], line=a.line, references=list(a.references),
                   cited=list(a.cited), metadata=dict(a.metadata), num_sentences=len(a.sentences))
            for a in run.answers], batch_size=1000)
        # the sentences as columns, without a model instance each (workbench.collections.bulk); citations as JSON text
        pairs = [(row.pk, k, s) for row, a in zip(answers, run.answers, strict=True) for k, s in enumerate(a.sentences)]
        insert_columns(AnswerSentence, {"answer": [pk for pk, _, _ in pairs], "position": [k for _, k, _ in pairs],
                                        "text": [s.text for _, _, s in pairs],
                                        "citations": [json.dumps(list(s.citations)) for _, _, s in pairs]})
        stored.append(ImportedAnswers(record, bool(replaced)))
        if progress:
            progress(1)
    return stored


def answers_import(*, collection: Collection, sources: Sequence[Source], names: Sequence[str] | None = None,
                   replace: bool = False, contributes: bool = True, description: str = "",
                   max_problems: int = 20, progress: Callable[[int], None] | None = None) -> list[ImportedAnswers]:
    """Check every answer file, then store them all or none (``progress(1)`` per file checked and per run stored)."""
    checked = answers_check(collection, sources, names=names, replace=replace, max_problems=max_problems,
                            progress=progress)
    return answers_store(collection, checked, contributes=contributes, description=description, progress=progress)

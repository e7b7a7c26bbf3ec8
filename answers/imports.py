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

from django.db import models, transaction
from django.db.models import signals

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


class _Slow(Exception):
    """A row on the way cannot be deleted by one statement a table (a protected row elsewhere, a listener)."""


def _reverse_relations(model) -> list:
    return [f for f in model._meta.get_fields(include_hidden=True)
            if f.auto_created and not f.concrete and (f.one_to_many or f.one_to_one)]


def _delete_tree(model, rows: models.QuerySet) -> int:
    """Delete ``rows`` and what cascades from them, children first, one statement a table: what Django's
    ``delete()`` does, without fetching every row it cascades to (replacing 100 answer runs with their sentences
    and 92,000 assignments took it 100 s). Raises :class:`_Slow` where only Django's own rules can tell (a
    protected row outside the rows deleted, a delete signal listened to)."""
    if signals.pre_delete.has_listeners(model) or signals.post_delete.has_listeners(model):
        raise _Slow(model.__name__)
    for rel in _reverse_relations(model):
        related, field = rel.related_model, rel.field.name
        children = related._base_manager.filter(**{f"{field}__in": rows})
        if related is model:  # a record revising another: deleted with it when both are in rows
            if children.exclude(pk__in=rows).exists():
                raise _Slow(model.__name__)
        elif rel.on_delete is models.CASCADE:
            _delete_tree(related, children)
        elif rel.on_delete is models.SET_NULL:
            children.update(**{field: None})
        elif rel.on_delete is not models.DO_NOTHING or children.exists():
            raise _Slow(related.__name__)
    return rows._raw_delete(rows.db)


def _delete_answer_run(collection: Collection, tag: str) -> bool:
    """The collection's answer run ``tag`` deleted with its answers, sentences, assignments, support judgments and
    pool items; whether there was one."""
    rows = AnswerRun.objects.filter(collection=collection, tag=tag)
    if not rows.exists():
        return False
    try:
        with transaction.atomic():
            _delete_tree(AnswerRun, rows)
    except _Slow:
        rows.delete()  # Django's collector: its ProtectedError, its signals
    return True


def _run_metadata(run: answer_format.AnswerRun) -> dict:
    shared = dict(run.answers[0].metadata)
    for answer in run.answers[1:]:
        shared = {k: v for k, v in shared.items() if k in answer.metadata and answer.metadata[k] == v}
    return {k: v for k, v in shared.items() if k not in _PER_ANSWER}


def _store_answers_and_sentences(answers: list[tuple[int, int, answer_format.Answer]]) -> None:
    """Every run's answers (run pk, topic pk, answer), then their sentences, each as columns in one go, without a model
    instance each (workbench.collections.bulk; bulk_create took most of the import); JSON fields as their JSON text."""
    insert_columns(Answer, {
        "run": [r for r, _, _ in answers], "topic": [t for _, t, _ in answers], "line": [a.line for _, _, a in answers],
        "references": [json.dumps(list(a.references)) for _, _, a in answers],
        "cited": [json.dumps(list(a.cited)) for _, _, a in answers],
        "metadata": [json.dumps(dict(a.metadata)) for _, _, a in answers],
        "num_sentences": [len(a.sentences) for _, _, a in answers]})
    _store_sentences(answers)


def _store_sentences(answers: list[tuple[int, int, answer_format.Answer]]) -> None:
    """The stored answers' sentences, as columns in one go."""
    pk_of = {(r, t): pk for pk, r, t in Answer.objects.filter(run__in={r for r, _, _ in answers}).order_by()
             .values_list("pk", "run_id", "topic_id")}
    pairs = [(pk_of[(r, t)], k, s) for r, t, a in answers for k, s in enumerate(a.sentences)]
    insert_columns(AnswerSentence, {"answer": [pk for pk, _, _ in pairs], "position": [k for _, k, _ in pairs],
                                    "text": [s.text for _, _, s in pairs],
                                    "citations": [json.dumps(list(s.citations)) for _, _, s in pairs]})


@transaction.atomic
def answers_store(collection: Collection, checked: Sequence[tuple[answer_format.AnswerRun, str]], *,
                  contributes: bool = True, description: str = "",
                  progress: Callable[[int], None] | None = None) -> list[ImportedAnswers]:
    """Store checked answer runs (replacing runs of the same tag) in one transaction."""
    topics = dict(collection.topics.values_list("qid", "pk"))
    ranked = dict(Run.objects.filter(collection=collection).values_list("tag", "pk"))
    existing = set(collection.answer_runs.values_list("tag", flat=True))
    stored = []
    for run, sha in checked:
        replaced = run.run_id in existing and _delete_answer_run(collection, run.run_id)
        meta = _run_metadata(run)
        sentences = sum(len(a.sentences) for a in run.answers)
        record = AnswerRun.objects.create(
            collection=collection, tag=run.run_id, team=run.team_id, description=description,
            run_type=str(meta.get("type", "")), ir_metadata=meta, ranked_run_id=ranked.get(run.run_id),
            contributes=contributes, source_file=Path(run.name).name[:500], sha256=sha,
            num_topics=len(run.answers), num_sentences=sentences,
            num_citations=sum(len(s.citations) for a in run.answers for s in a.sentences))
        stored.append(ImportedAnswers(record, replaced))
        if progress:
            progress(1)
    _store_answers_and_sentences(
        [(item.run.pk, topics[a.topic_id], a) for item, (run, _) in zip(stored, checked, strict=True)
         for a in run.answers])
    return stored


def answers_import(*, collection: Collection, sources: Sequence[Source], names: Sequence[str] | None = None,
                   replace: bool = False, contributes: bool = True, description: str = "",
                   max_problems: int = 20, progress: Callable[[int], None] | None = None) -> list[ImportedAnswers]:
    """Check every answer file, then store them all or none (``progress(1)`` per file checked and per run stored)."""
    checked = answers_check(collection, sources, names=names, replace=replace, max_problems=max_problems,
                            progress=progress)
    return answers_store(collection, checked, contributes=contributes, description=description, progress=progress)

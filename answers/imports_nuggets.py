"""Nugget banks and nugget assignments in and out, in nuggetizer's JSON lines (``workbench.formats.nuggets``).

- :func:`nuggets_import`: each topic of the file becomes a new version of its bank (unless the file's bank is the
  current one already: then nothing changes).
- :func:`nuggets_export`: each topic's current bank, as nuggetizer reads them.
- :func:`assignments_import`: nuggetizer's assign output recorded as one assessor's nugget assignments, against
  each topic's current bank (every nugget of a line must be in it, by text and importance); a value that
  differs from the assessor's latest for the same (answer, nugget) is a revision of it, an equal one is skipped.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from answers.models import Answer, Nugget, NuggetAssignment, NuggetBank, Source
from workbench.collections.bulk import insert_columns
from workbench.collections.refusals import ImportRefused
from workbench.formats import FormatError
from workbench.formats.nuggets import TopicBank, nugget_bank_lines, read_assignments, read_nugget_banks
from workbench.formats.sources import display_name
from workbench.models import Collection

__all__ = ["AssignmentsSummary", "NuggetsSummary", "assignments_import", "current_banks", "nuggets_export",
           "nuggets_import"]


@dataclass(frozen=True)
class NuggetsSummary:
    versions: int
    unchanged: int
    nuggets: int


@dataclass(frozen=True)
class AssignmentsSummary:
    assessor: str
    created: int
    revised: int
    unchanged: int
    answers: int


def current_banks(collection: Collection) -> dict[int, NuggetBank]:
    """Each topic's current (newest) bank version, by topic id."""
    banks = NuggetBank.objects.filter(collection=collection).order_by("topic_id", "version")
    return {bank.topic_id: bank for bank in banks}


def _bank_key(query: str, nuggets: Iterable[tuple[str, str]]) -> tuple:
    return query, tuple(nuggets)


@transaction.atomic
def _store_banks(collection: Collection, banks: list[TopicBank], user, note: str) -> NuggetsSummary:
    topics = dict(collection.topics.values_list("qid", "pk"))
    current = current_banks(collection)
    existing = {}
    for nugget in Nugget.objects.filter(bank__in=list(current.values())).order_by("order"):
        existing.setdefault(nugget.bank_id, []).append((nugget.text, nugget.importance))
    versions = unchanged = count = 0
    for bank in banks:
        topic = topics[bank.qid]
        now = current.get(topic)
        if now is not None and _bank_key(now.query, existing.get(now.pk, [])) == _bank_key(bank.query, bank.nuggets):
            unchanged += 1
            continue
        latest = NuggetBank.objects.filter(topic_id=topic).aggregate(v=Max("version"))["v"] or 0
        created = NuggetBank.objects.create(collection=collection, topic_id=topic, version=latest + 1,
                                            query=bank.query, source=Source.IMPORT, note=note[:500], created_by=user)
        Nugget.objects.bulk_create([Nugget(bank=created, order=k, text=text, importance=importance,
                                           source=Source.IMPORT, created_by=user)
                                    for k, (text, importance) in enumerate(bank.nuggets)])
        versions += 1
        count += len(bank.nuggets)
    return NuggetsSummary(versions, unchanged, count)


def nuggets_import(*, collection: Collection, source, name: str | None = None, user=None,
                   max_problems: int = 20) -> NuggetsSummary:
    """Read a nuggetizer bank file (every problem refuses it all), then store a new version per changed topic."""
    name = display_name(source, name)
    known = set(collection.topics.values_list("qid", flat=True))
    try:
        banks = read_nugget_banks(source, name=name, known_qids=known, max_problems=max_problems)
    except FormatError as exc:
        raise ImportRefused(exc.problems) from None
    return _store_banks(collection, banks, user, f"imported from {Path(name).name}")


def nuggets_export(collection: Collection) -> Iterable[str]:
    """Each topic's current bank as a nuggetizer JSON line, in topic order."""
    current = sorted(current_banks(collection).values(), key=lambda b: b.topic.qid)
    by_bank: dict[int, list[tuple[str, str]]] = {}
    for nugget in Nugget.objects.filter(bank__in=current).order_by("order"):
        by_bank.setdefault(nugget.bank_id, []).append((nugget.text, nugget.importance))
    return nugget_bank_lines(TopicBank(b.topic.qid, b.query, tuple(by_bank.get(b.pk, ())), 0) for b in current)


def _matched(collection: Collection, records, name: str) -> tuple[list, list[str]]:
    """Each record's answer and its nuggets' rows of the current bank; the problems found."""
    topics = dict(collection.topics.values_list("qid", "pk"))
    answers = {(run, topic): pk for pk, run, topic in
               Answer.objects.filter(run__collection=collection).values_list("pk", "run__tag", "topic_id")}
    current = current_banks(collection)
    nuggets: dict[int, dict[tuple[str, str], int]] = {}  # ids, not instances: 92,000 lookups
    for pk, bank, text, importance in Nugget.objects.filter(bank__in=list(current.values())).order_by(
            "bank", "order").values_list("pk", "bank_id", "text", "importance"):
        nuggets.setdefault(bank, {})[(text, importance)] = pk
    problems, matched = [], []
    for record in records:
        topic = topics[record.qid]
        answer = answers.get((record.run_id, topic))
        bank = current.get(topic)
        where = f"{name}:{record.line}"
        if answer is None:
            problems.append(f"{where}: run {record.run_id!r} has no answer to topic {record.qid!r}")
            continue
        if bank is None:
            problems.append(f"{where}: topic {record.qid!r} has no nugget bank (import one first)")
            continue
        known = nuggets.get(bank.pk, {})
        rows = [(known.get((text, importance)), value) for text, importance, value in record.nuggets]
        for k, (nugget, _) in enumerate(rows):
            if nugget is None:
                text, importance, _ = record.nuggets[k]
                problems.append(f"{where}: nuggets[{k}] ({importance}: {text[:60]!r}) is not in topic "
                                f"{record.qid!r}'s bank (version {bank.version})")
        matched.append((answer, bank.pk, rows))
    return matched, problems


@transaction.atomic
def _store_assignments(collection: Collection, matched: list, assessor: str) -> AssignmentsSummary:
    latest = {(a, n): (pk, value) for pk, a, n, value in NuggetAssignment.objects.filter(
        collection=collection, assessor=assessor).order_by("created_at", "id").values_list(
        "pk", "answer_id", "nugget_id", "assignment")}
    pairs = [(answer, bank, nugget, value) for answer, bank, nuggets in matched for nugget, value in nuggets]
    revised = unchanged = 0
    if latest:  # only what differs from the assessor's latest is recorded (a revision of it)
        kept = []
        for answer, bank, nugget, value in pairs:
            before = latest.get((answer, nugget))
            if before is not None and before[1] == value:
                unchanged += 1
                continue
            revised += before is not None
            kept.append((answer, bank, nugget, value))
        pairs = kept
    rows: dict[str, list] = {"answer": [p[0] for p in pairs], "nugget": [p[2] for p in pairs],
                             "bank": [p[1] for p in pairs], "assignment": [p[3] for p in pairs]}
    if latest:  # else no record revises another: the column is left to its NULL, not bound 92,000 times
        rows["previous"] = [latest[(p[0], p[2])][0] if (p[0], p[2]) in latest else None for p in pairs]
    # rows as columns, without a model instance each (as judging's qrels import: bulk_create spent 96 of 100 s
    # on 92,000 assignments); what every row shares, once
    created = insert_columns(NuggetAssignment, rows, {
        "collection": collection.pk, "assessor": assessor, "source": Source.IMPORT.value, "comment": "",
        "created_at": timezone.now(), "provenance": {}})
    return AssignmentsSummary(assessor, created, revised, unchanged, len(matched))


def assignments_import(*, collection: Collection, source, name: str | None = None, assessor: str | None = None,
                       max_problems: int = 20) -> AssignmentsSummary:
    """Read nuggetizer's assign output and record it as ``assessor``'s assignments (default: the file's name)."""
    name = display_name(source, name)
    assessor = (assessor or Path(name).name.split(".")[0] or "imported")[:150]
    known = set(collection.topics.values_list("qid", flat=True))
    try:
        records = read_assignments(source, name=name, known_qids=known, max_problems=max_problems)
    except FormatError as exc:
        raise ImportRefused(exc.problems) from None
    matched, problems = _matched(collection, records, name)
    if problems:
        raise ImportRefused(problems[:max_problems])
    return _store_assignments(collection, matched, assessor)

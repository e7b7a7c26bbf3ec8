"""Every judgment record as JSON lines, and back: what assessors said (grade or "cannot judge", comment,
supporting passage, time spent), by whom, when, and which record revised which.

One line per record of the append-only log, oldest first: ``qid``, ``docno``, ``grade`` (null when the
assessor could not judge), ``cannot_judge``, ``assessor``, ``source`` (web, import, adjudication),
``created_at`` (ISO 8601), ``time_spent_ms``, ``comment``, ``rationale``, ``passages`` ([start, end)
character offsets of the supporting passages in the document's text) and ``revision`` (1 for an
assessor's first record of a document, 2 for the record that revised it, ...). Importing the file into
another collection with the same topics writes the same records, revisions linked in the same order, so
its qrels (any policy) and its comments are the same.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.db import transaction
from django.utils.dateparse import parse_datetime

from judging.models import Judgment, MachineVerdict
from workbench.collections.services import ImportRefused
from workbench.formats import FormatError
from workbench.formats.sources import read_bytes
from workbench.models import Collection

__all__ = ["JudgmentsImportSummary", "judgments_import", "judgments_jsonl"]

_FIELDS = ("qid", "docno", "grade", "cannot_judge", "assessor", "source", "created_at", "time_spent_ms", "comment",
           "rationale", "revision")


def judgments_jsonl(collection: Collection) -> str:
    """The collection's judgment log as JSON lines (see the module docstring)."""
    revision: dict[tuple, int] = defaultdict(int)
    lines = []
    provenance = _machine_provenance(collection)
    for row in (Judgment.objects.filter(collection=collection).order_by("created_at", "id")
                .values("id", "topic__qid", "docno", "grade", "cannot_judge", "assessor", "source", "created_at",
                        "time_spent_ms", "comment", "rationale", "passages")):
        key = (row["assessor"], row["topic__qid"], row["docno"])
        revision[key] += 1
        machine = {"machine": provenance[row["id"]]} if row["id"] in provenance else {}
        lines.append(json.dumps({"qid": row["topic__qid"], "docno": row["docno"], "grade": row["grade"],
                                 "cannot_judge": row["cannot_judge"], "assessor": row["assessor"],
                                 "source": row["source"], "created_at": row["created_at"].isoformat(),
                                 "time_spent_ms": row["time_spent_ms"], "comment": row["comment"],
                                 "rationale": row["rationale"], "passages": row["passages"] or [],
                                 "revision": revision[key], **machine}, ensure_ascii=False))
    return "".join(line + "\n" for line in lines)


def _machine_provenance(collection: Collection) -> dict[int, dict]:
    """Per machine judgment (by id): the judge, its model and endpoint, the prompt's hash, the raw reply, the
    score and the cost."""
    fields = ("model", "model_version", "endpoint_host", "prompt_hash", "raw_reply", "score", "probability",
              "latency_ms", "prompt_tokens", "completion_tokens")
    return {row["judgment_id"]: {"judge": row["judge__name"], "kind": row["judge__kind"],
                                 **{f: row[f] for f in fields}}
            for row in MachineVerdict.objects.filter(judge__collection=collection, judgment__isnull=False)
            .values("judgment_id", "judge__name", "judge__kind", *fields)}


@dataclass(frozen=True)
class JudgmentsImportSummary:
    records: int
    assessors: int
    topics: int


def _check(record, where: str, topics: dict[str, int], grades: set[int]) -> str | None:
    if not isinstance(record, dict) or any(k not in record for k in ("qid", "docno", "assessor")):
        return f"{where}: a judgment needs qid, docno and assessor"
    if str(record["qid"]) not in topics:
        return f"{where}: topic {record['qid']!r} is not in the collection"
    if not isinstance(record["docno"], str) or not record["docno"] or not isinstance(record["assessor"], str):
        return f"{where}: docno and assessor are text"
    if record.get("cannot_judge"):
        return None if record.get("grade") is None else f"{where}: a 'cannot judge' record has no grade"
    if not isinstance(record.get("grade"), int) or record["grade"] not in grades:
        return f"{where}: grade {record.get('grade')!r} is not on the collection's scale {sorted(grades)}"
    if record.get("created_at") is not None and parse_datetime(str(record["created_at"])) is None:
        return f"{where}: created_at {record['created_at']!r} is not an ISO 8601 time"
    return None


def _parsed(collection: Collection, source: str | Path) -> list[dict]:
    name = str(source)
    try:
        text = read_bytes(source).decode("utf-8")
    except (FormatError, UnicodeDecodeError) as exc:
        raise ImportRefused([f"{name}: {getattr(exc, 'problems', [str(exc)])[0]}"]) from None
    topics = dict(collection.topics.values_list("qid", "pk"))
    grades = set(collection.grades)
    records, problems = [], []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{name}:{number}: not JSON ({exc.msg})")
            continue
        problem = _check(record, f"{name}:{number}", topics, grades)
        if problem:
            problems.append(problem)
        else:
            records.append(record)
    if problems:
        raise ImportRefused(problems)
    if not records:
        raise ImportRefused([f"{name}: no judgments found"])
    return records


def _passages(value) -> list:
    ok = isinstance(value, list) and all(isinstance(r, list) and len(r) == 2 and all(isinstance(v, int) for v in r)
                                         for r in value)
    return value if ok else []


def judgments_import(*, collection: Collection, source: str | Path) -> JudgmentsImportSummary:
    """Append the file's records to the collection's log, in the file's order, each revising the same
    assessor's previous record of that document. All or nothing; the file is read first."""
    records = _parsed(collection, source)
    topics = dict(collection.topics.values_list("qid", "pk"))
    sources = set(Judgment.Source.values)
    with transaction.atomic():
        latest: dict[tuple, Judgment] = {}
        for j in Judgment.objects.filter(collection=collection).order_by("created_at", "id"):
            latest[(j.assessor, j.topic_id, j.docno)] = j
        for record in records:
            topic_id = topics[str(record["qid"])]
            key = (record["assessor"], topic_id, record["docno"])
            created = parse_datetime(str(record["created_at"])) if record.get("created_at") else None
            judgment = Judgment.objects.create(
                collection=collection, topic_id=topic_id, docno=record["docno"],
                grade=None if record.get("cannot_judge") else record["grade"],
                cannot_judge=bool(record.get("cannot_judge")), assessor=record["assessor"],
                source=record.get("source") if record.get("source") in sources else Judgment.Source.IMPORT,
                time_spent_ms=record.get("time_spent_ms") if isinstance(record.get("time_spent_ms"), int) else None,
                comment=str(record.get("comment") or ""), rationale=str(record.get("rationale") or ""),
                passages=_passages(record.get("passages")), previous=latest.get(key))
            if isinstance(created, datetime):  # keep the original time (auto_now_add set it to now)
                Judgment.objects.filter(pk=judgment.pk).update(created_at=created)
            latest[key] = judgment
    return JudgmentsImportSummary(records=len(records), assessors=len({r["assessor"] for r in records}),
                                  topics=len({str(r["qid"]) for r in records}))

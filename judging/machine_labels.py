"""Labels a machine judge made elsewhere (UMBRELA on a GPU, a team's own judge), handed in as JSON lines and
recorded as that machine assessor's judgments, with their provenance, exactly as its jobs record verdicts
(``judging.machine_services.machine_verdict_record``); and the pairs of a pool it has still to judge.

A line: ``{"qid": "301", "docno": "d1", "grade": 2, "provenance": {"model": "...", "model_version": "...",
"prompt_hash": "<sha256 hex>"}}``; ``probability`` (0 to 1) may stand for the grade (at least 0.5: the
collection's first relevant grade, else its lowest) or come with it; ``score`` is kept as the raw score.
Every line is checked before anything is recorded; a pair the judge has judged already keeps its first label.
A document whose text reads as instructions to a judge (``judging.machine.injection``) gets no judgment from a
pushed label, as from the workbench's own judges: its verdict is flagged and the pair left to the humans (first
in their queues once routed). An organizer's push to a judge name the collection does not have creates it, as a
file import of labels does (an ``imported`` machine assessor whose configuration records the push that made it)."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.utils import timezone

from judging.machine.base import Provenance, Verdict
from judging.machine_import import document_signs, imported_judge, judged_pairs
from judging.machine_services import machine_verdict_record
from judging.models import MachineJudge
from pooling.models import Pool, PoolEntry
from workbench.collections.services import ImportRefused
from workbench.models import Collection, Document

__all__ = ["LabelsRefused", "PushSummary", "labels_parse", "labels_push", "pairs_to_judge"]

#: most lines one push may hold (more: send them in several pushes)
MAX_LINES = 50_000
#: problems a refusal lists
MAX_PROBLEMS = 50
_HASH = re.compile(r"[0-9a-f]{64}")


class LabelsRefused(ValueError):
    """Lines that cannot be recorded: one ``labels:LINE: why`` per problem; nothing was recorded."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__(f"{len(problems)} line(s) refused, nothing recorded: {problems[0]}")


@dataclass(frozen=True)
class PushSummary:
    judge: str
    lines: int
    recorded: int
    already: int
    flagged: int = 0


def _provenance(value) -> tuple[Provenance | None, str]:
    if not isinstance(value, dict) or not isinstance(value.get("model"), str) or not value["model"].strip():
        return None, "'provenance' must be an object naming at least the 'model' that judged"
    fields = {k: value.get(k, "") for k in ("model", "model_version", "endpoint_host", "prompt_hash")}
    if any(not isinstance(v, str) for v in fields.values()):
        return None, "'provenance' fields (model, model_version, endpoint_host, prompt_hash) must be strings"
    if fields["prompt_hash"] and not _HASH.fullmatch(fields["prompt_hash"]):
        return None, "'prompt_hash' must be the sha256 of the prompt, 64 lowercase hex digits"
    return Provenance(**{k: v[:200] for k, v in fields.items()}), ""


def _number(row: dict, key: str) -> tuple[float | None, str]:
    value = row.get(key)
    if value is None:
        return None, ""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None, f"{key!r} must be a number, not {json.dumps(value)[:40]}"
    return float(value), ""


def _grade(row: dict, grades: list[int], relevant_from: int, probability: float | None) -> tuple[int | None, str]:
    grade = row.get("grade")
    if grade is None:
        if probability is None:
            return None, "give a 'grade' or a 'probability'"
        return (relevant_from if probability >= 0.5 else min(grades)), ""
    if isinstance(grade, bool) or not isinstance(grade, int) or grade not in grades:
        return None, f"grade {json.dumps(grade)[:40]} is not one of the collection's grades ({', '.join(map(str, grades))})"
    return grade, ""


def _line(row, grades: list[int], relevant_from: int) -> tuple[tuple | None, str]:
    """(qid, docno, verdict, provenance) of one decoded line, or the reason it is refused."""
    if not isinstance(row, dict):
        return None, "a line must be a JSON object"
    qid, docno = row.get("qid"), row.get("docno")
    if not isinstance(qid, str | int) or isinstance(qid, bool) or not isinstance(docno, str) or not docno:
        return None, "'qid' and 'docno' must be given (strings)"
    probability, why = _number(row, "probability")
    score, why_score = _number(row, "score")
    if why or why_score:
        return None, why or why_score
    if probability is not None and not 0 <= probability <= 1:
        return None, f"probability {probability} must be between 0 and 1"
    grade, why = _grade(row, grades, relevant_from, probability)
    provenance, why_provenance = _provenance(row.get("provenance"))
    if why or why_provenance:
        return None, why or why_provenance
    verdict = Verdict(qid=str(qid), docno=docno, ok=True, grade=grade, score=score, probability=probability,
                      prompt_hash=provenance.prompt_hash)
    return (str(qid), docno, verdict, provenance), ""


def _decoded(text: str, grades: list[int], relevant_from: int) -> tuple[list[tuple], list[str]]:
    """Each line's (number, parsed) and the problems of the lines that are not well formed."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise LabelsRefused(["labels: no lines: send one JSON object per line"])
    if len(lines) > MAX_LINES:
        raise LabelsRefused([f"labels: {len(lines):,} lines, more than the {MAX_LINES:,} one push may hold"])
    found, problems = [], []
    for number, line in lines:
        if "\x00" in line or "\\u0000" in line:
            problems.append(f"labels:{number}: a NUL character (\\0), which no name or value may hold")
            continue
        try:
            parsed, why = _line(json.loads(line), grades, relevant_from)
        except ValueError as exc:
            parsed, why = None, f"not JSON ({exc.args[0] if exc.args else exc})"
        if parsed is None:
            problems.append(f"labels:{number}: {why}")
        else:
            found.append((number, parsed))
        if len(problems) >= MAX_PROBLEMS:
            break
    return found, problems


def _line_number(problem: str) -> int:
    number = problem.split(":")[1]
    return int(number) if number.isdigit() else 0


def labels_parse(collection: Collection, text: str) -> list[tuple]:
    """Every line checked (JSON, fields, grades, the topic and the document known to the collection):
    the (topic id, verdict, provenance) to record, or :class:`LabelsRefused` naming each bad line."""
    found, problems = _decoded(text, sorted(collection.grades), collection.relevant_from)
    topics = dict(collection.topics.filter(qid__in={p[0] for _, p in found}).values_list("qid", "pk"))
    docnos = {p[1] for _, p in found}
    known = set(Document.objects.filter(collection=collection, docno__in=docnos).values_list("docno", flat=True))
    known |= set(PoolEntry.objects.filter(pool__collection=collection, docno__in=docnos - known)
                 .values_list("docno", flat=True))
    for number, (qid, docno, _, _) in found:
        if qid not in topics:
            problems.append(f"labels:{number}: topic {qid!r} is not a topic of collection {collection.slug!r}")
        elif docno not in known:
            problems.append(f"labels:{number}: document {docno!r} is not a document of collection {collection.slug!r}")
    if problems:
        raise LabelsRefused(sorted(problems, key=_line_number)[:MAX_PROBLEMS])
    return [(topics[qid], verdict, provenance) for _, (qid, _, verdict, provenance) in found]


def _new_judge(collection: Collection, name: str, parsed: list[tuple], pushed_by) -> MachineJudge:
    """A judge named for the first time by an organizer's push: an ``imported`` machine assessor (as a file
    import makes one), its configuration saying who created it, when and with which model's labels."""
    created = {"by": getattr(pushed_by, "username", ""), "via": "labels pushed over the API",
               "at": timezone.now().isoformat(), "model": parsed[0][2].model}
    try:
        with transaction.atomic():
            return imported_judge(collection, name, created=created)
    except ImportRefused as exc:
        raise LabelsRefused([f"judge: {p}" for p in exc.problems]) from None
    except IntegrityError:  # a push made it at the same moment (or its account name is taken)
        judge = MachineJudge.objects.filter(collection=collection, name=name).first()
        if judge is None:
            raise LabelsRefused([f"judge: {name!r} cannot be created: the account "
                                 f"'machine:{collection.slug}:{name}' exists already"]) from None
        return judge


def labels_push(*, collection: Collection, judge: MachineJudge | None, text: str, name: str = "",
                pushed_by=None) -> PushSummary:
    """Record the labels of ``text`` (JSON lines) as ``judge``'s judgments, each with its provenance. A pair
    whose document reads as instructions to a judge gets no judgment: flagged and left to the humans, as the
    workbench's own judges' are. ``judge`` None: the judge ``name`` is created once every line has passed
    (:func:`_new_judge`; the caller decided the pusher may create it)."""
    parsed = labels_parse(collection, text)
    if judge is None:
        judge = _new_judge(collection, name, parsed, pushed_by)
    signs = document_signs(collection, {verdict.docno for _, verdict, _ in parsed})
    done = judged_pairs(judge)
    recorded = flagged = 0
    for topic_id, verdict, provenance in parsed:
        if (topic_id, verdict.docno) in done:
            continue
        done.add((topic_id, verdict.docno))  # a pair twice in one push: its first line counts
        sign = signs.get(verdict.docno, "")
        written = machine_verdict_record(judge=judge, verdict=verdict, topic_id=topic_id, provenance=provenance,
                                         sign=sign)
        recorded += written and not sign
        flagged += written and bool(sign)
    return PushSummary(judge=judge.name, lines=len(parsed), recorded=recorded,
                       already=len(parsed) - recorded - flagged, flagged=flagged)


def pairs_to_judge(judge: MachineJudge, pool: Pool, *, limit: int = 100) -> tuple[int, list[dict]]:
    """The pool's (topic, document) pairs the judge has not judged, in judging order: (how many, the first
    ``limit`` with the texts a judge reads)."""
    done = judged_pairs(judge)
    entries = [(t, d) for t, d in PoolEntry.objects.filter(pool=pool).order_by("topic__qid", "judging_order")
               .values_list("topic_id", "docno") if (t, d) not in done]
    first = entries[:limit]
    topics = {t.pk: t for t in pool.collection.topics.filter(pk__in={t for t, _ in first})}
    texts = {d.docno: d for d in Document.objects.filter(collection=pool.collection, docno__in={d for _, d in first})}
    rows = []
    for topic_id, docno in first:
        topic, document = topics[topic_id], texts.get(docno)
        rows.append({"qid": topic.qid, "docno": docno, "query": topic.title or topic.description,
                     "description": topic.description, "narrative": topic.narrative,
                     "title": document.title if document else "", "text": document.text if document else ""})
    return len(entries), rows

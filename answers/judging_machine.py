"""Machine assigners as machine assessors: an answer pool's answers against each topic's current nugget bank,
labelled by a declared assigner (``answers.machine``), each label an ordinary append-only nugget assignment of the
machine's user (a ``judging.MachineJudge``, named ``nuggets-<kind>``) with its provenance. Nothing is assigned
twice: a pair the machine already labelled against the current bank is skipped, so a stopped job resumes. A pair
the machine could not label is recorded nowhere and counted, with the first reason, in the job's result.

Support judges the same way: a support pool's citations (a sentence and the segment it cites), each labelled by a
declared support judge, an ordinary support judgment of the machine's user (``support-<kind>``) with its
provenance (model, prompt version). A citation whose sentence or segment reads as instructions to a judge
(``judging.machine.injection``) is never sent: no machine verdict, flagged in the job's result for the people.

Agreement between the assessors of nugget assignments and of support judgments, people and machines, with
``judging.agreement``."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd
from django.contrib.auth import get_user_model
from django.db import transaction

from answers.banks_tasks import endpoint_config
from answers.judging import current_bank
from answers.machine import ASSIGNERS, SUPPORT_JUDGES
from answers.machine.base import AnswerNuggets, Citation, MachineError
from answers.models import (
    AnswerPool,
    AnswerPoolItem,
    AnswerSentence,
    NuggetAssignment,
    Source,
    SupportJudgment,
)
from judging.agreement import pairwise_agreement
from judging.machine.base import JudgeError
from judging.machine.injection import instruction_signs
from judging.models import MachineJudge
from workbench.models import Document

__all__ = ["Tally", "assigner_for", "machine_assign_run", "machine_support_run", "nugget_agreement",
           "support_agreement", "support_judge_for"]

#: records written at once
BATCH = 500
#: each label as a grade for the agreement statistics (support highest)
GRADES = {"not_support": 0, "partial_support": 1, "support": 2}
SUPPORT_GRADES = {"no_support": 0, "partial_support": 1, "full_support": 2}


@dataclass
class Tally:
    recorded: int = 0
    failed: int = 0
    skipped: int = 0
    first_error: str = ""
    lines: list[str] = field(default_factory=list)
    #: citations never sent because their text reads as instructions, and the first few as ``docno: sign``
    flagged: int = 0
    flags: list[str] = field(default_factory=list)


def assigner_for(pool: AnswerPool, kind: str, endpoint: str = "", model: str = "", options: dict | None = None):
    """The machine's row (created with its user the first time) and a ready assigner; MachineError in one line."""
    return _machine_for(pool, ASSIGNERS, "nuggets", "nugget assigner", kind, endpoint, model, options)


def support_judge_for(pool: AnswerPool, kind: str, endpoint: str = "", model: str = "", options: dict | None = None):
    """The support judge's row (``support-<kind>``, created with its user the first time) and a ready judge."""
    return _machine_for(pool, SUPPORT_JUDGES, "support", "support judge", kind, endpoint, model, options)


def _machine_for(pool: AnswerPool, registry, prefix: str, role: str, kind: str, endpoint: str, model: str,
                 options: dict | None):
    try:
        declared = registry.get(kind)
    except ValueError as exc:
        raise MachineError(str(exc)) from None
    config, key = ({}, None)
    if declared.needs_network:
        config, key = endpoint_config(endpoint, model)
    try:
        assigner = declared.judge_class({**config, **(options or {})}, key=key)
    except JudgeError as exc:
        raise MachineError(str(exc)) from None
    name = f"{prefix}-{kind}"
    stored = {"role": role, "endpoint": endpoint, "model": model, **(options or {})} if endpoint else \
        {"role": role, **(options or {})}
    with transaction.atomic():
        row = MachineJudge.objects.filter(collection=pool.collection, name=name).first()
        if row is None:
            user = get_user_model().objects.create_user(username=f"machine:{pool.collection.slug}:{name}"[:150],
                                                        password=None)
            row = MachineJudge.objects.create(collection=pool.collection, name=name, kind=kind, user=user,
                                              config=stored)
    return row, assigner


def _items(pool: AnswerPool, machine: str) -> tuple[list[AnswerNuggets], int, dict[int, int]]:
    """What the machine has still to label: per answer of the pool, the current bank's nuggets it has not; the
    pairs it has already; each nugget's bank."""
    items, skipped, bank_of = [], 0, {}
    by_topic: dict[int, list[AnswerPoolItem]] = {}
    for item in AnswerPoolItem.objects.filter(pool=pool, sentence__isnull=True).select_related("topic") \
            .order_by("topic__qid", "judging_order"):
        by_topic.setdefault(item.topic_id, []).append(item)
    for entries in by_topic.values():
        topic = entries[0].topic
        bank = current_bank(topic)
        if bank is None:
            continue
        nuggets = [(str(n.pk), n.text) for n in bank.nuggets.order_by("order")]
        bank_of.update({int(n): bank.pk for n, _ in nuggets})
        done = set(NuggetAssignment.objects.filter(bank=bank, assessor=machine).values_list("answer_id", "nugget_id"))
        texts = {}
        for s in AnswerSentence.objects.filter(answer_id__in=[e.answer_id for e in entries]).order_by("position"):
            texts.setdefault(s.answer_id, []).append(s.text)
        for entry in entries:
            wanted = tuple(n for n in nuggets if (entry.answer_id, int(n[0])) not in done)
            skipped += len(nuggets) - len(wanted)
            if wanted:
                items.append(AnswerNuggets(str(entry.answer_id), topic.qid, bank.query or topic.title,
                                           " ".join(texts.get(entry.answer_id, [])), wanted))
    return items, skipped, bank_of


def _store(rows: list) -> None:
    if rows:
        with transaction.atomic():
            type(rows[0]).objects.bulk_create(rows)
        rows.clear()


def machine_assign_run(*, pool: AnswerPool, row: MachineJudge, assigner, report=None) -> Tally:
    """Label every pair of the pool the machine has not, record the labels, and say how it went."""
    if pool.kind != AnswerPool.Kind.NUGGET:
        raise MachineError(f"pool {pool.name!r} holds citation pairs, not answers for nugget assignment")
    machine = row.user.username
    items, skipped, bank_of = _items(pool, machine)
    tally, pending = Tally(skipped=skipped), []
    made = assigner.provenance()
    for verdict in assigner.assign(items, tick=5.0):
        if verdict is None:
            if report:
                report(tally)
            continue
        if not verdict.ok:
            tally.failed += 1
            tally.first_error = tally.first_error or verdict.error
            continue
        nugget_id = int(verdict.nugget_id)
        pending.append(NuggetAssignment(
            collection=pool.collection, answer_id=int(verdict.answer_id), nugget_id=nugget_id,
            bank_id=bank_of[nugget_id], assignment=verdict.label, assessor=machine, user=row.user,
            source=Source.MACHINE, machine_judge=row, time_spent_ms=verdict.latency_ms,
            provenance={"model": made.model, "model_version": made.model_version, "endpoint_host": made.endpoint_host,
                        "prompt_hash": verdict.prompt_hash or made.prompt_hash, "score": verdict.score,
                        "raw_reply": verdict.raw_reply[:1000], "tokens": verdict.prompt_tokens + verdict.completion_tokens}))
        tally.recorded += 1
        if len(pending) >= BATCH:
            _store(pending)
            if report:
                report(tally)
    _store(pending)
    return tally


#: flagged citations a job's result names
MAX_FLAGS = 10


def _citations(pool: AnswerPool, machine: str, tally: Tally) -> tuple[list[Citation], dict[str, tuple[int, str]]]:
    """What the support judge has still to label: the pool's citations it has not judged, in the pool's order,
    less those whose sentence or segment reads as instructions (counted in ``tally``, never sent); each
    citation's (sentence id, docno) by its pair id."""
    entries = list(AnswerPoolItem.objects.filter(pool=pool, sentence__isnull=False)
                   .select_related("topic", "sentence").order_by("topic__qid", "judging_order"))
    done = set(SupportJudgment.objects.filter(collection=pool.collection, assessor=machine,
                                              sentence_id__in={e.sentence_id for e in entries})
               .values_list("sentence_id", "docno"))
    texts = {docno: f"{title}\n{text}".strip() if title else text for docno, title, text in Document.objects.filter(
        collection=pool.collection, docno__in={e.docno for e in entries}).values_list("docno", "title", "text")}
    items, pairs = [], {}
    for entry in entries:
        if (entry.sentence_id, entry.docno) in done:
            tally.skipped += 1
            continue
        segment, sentence = texts.get(entry.docno, ""), entry.sentence.text
        sign = instruction_signs(segment)
        where = f"segment {entry.docno}" if sign else f"the sentence citing {entry.docno}"
        sign = sign or instruction_signs(sentence)
        if sign:
            tally.flagged += 1
            if len(tally.flags) < MAX_FLAGS:
                tally.flags.append(f"topic {entry.topic.qid}, {where}: {sign!r}")
            continue
        pair_id = str(entry.pk)
        pairs[pair_id] = (entry.sentence_id, entry.docno)
        items.append(Citation(pair_id, entry.topic.qid, entry.topic.title or entry.topic.description, sentence,
                              entry.docno, segment))
    return items, pairs


def machine_support_run(*, pool: AnswerPool, row: MachineJudge, judge, report=None) -> Tally:
    """Label every citation of the pool the support judge has not (and whose text does not read as
    instructions), record the labels in batches, and say how it went; ``report(tally, done, total)``."""
    if pool.kind != AnswerPool.Kind.SUPPORT:
        raise MachineError(f"pool {pool.name!r} holds answers for nugget assignment, not citations to judge")
    machine = row.user.username
    tally = Tally()
    items, pairs = _citations(pool, machine, tally)
    pending: list[SupportJudgment] = []
    made = judge.provenance()
    version = getattr(judge, "prompt_version", "")
    if report:
        report(tally, 0, len(items))
    for verdict in judge.judge(items, tick=5.0):
        if verdict is None:
            if report:
                report(tally, tally.recorded + tally.failed, len(items))
            continue
        if not verdict.ok:
            tally.failed += 1
            tally.first_error = tally.first_error or verdict.error
            continue
        sentence_id, docno = pairs[verdict.pair_id]
        pending.append(SupportJudgment(
            collection=pool.collection, sentence_id=sentence_id, docno=docno, support=verdict.label,
            assessor=machine, user=row.user, source=Source.MACHINE, machine_judge=row,
            time_spent_ms=verdict.latency_ms,
            provenance={"model": made.model, "model_version": made.model_version, "endpoint_host": made.endpoint_host,
                        "prompt_version": version, "prompt_hash": verdict.prompt_hash or made.prompt_hash,
                        "score": verdict.score, "raw_reply": verdict.raw_reply[:1000],
                        "tokens": verdict.prompt_tokens + verdict.completion_tokens}))
        tally.recorded += 1
        if len(pending) >= BATCH:
            _store(pending)
        if report and (tally.recorded + tally.failed) % 10 == 0:
            report(tally, tally.recorded + tally.failed, len(items))
    _store(pending)
    if report:
        report(tally, tally.recorded + tally.failed, len(items))
    return tally


def _agreement(rows, grades: dict[str, int]) -> pd.DataFrame:
    """``judging.agreement.pairwise_agreement`` of the latest label of each (assessor, item); ``rows`` in creation
    order as (assessor, item, qid, label)."""
    latest = {}
    for assessor, item, qid, value in rows:
        latest[(assessor, item)] = (qid, value)
    frame = pd.DataFrame([{"assessor": a, "qid": qid, "docno": item, "grade": grades[value]}
                          for (a, item), (qid, value) in latest.items()],
                         columns=["assessor", "qid", "docno", "grade"]).astype({"grade": "int64"})
    return pairwise_agreement(frame, relevant_from=1)


def nugget_agreement(collection) -> pd.DataFrame:
    """Agreement of every pair of assessors (people and machines) on the (answer, nugget) pairs both assigned,
    each assessor's current label, with support 2, partial 1, none 0 (kappa: partial or full support against none)."""
    rows = NuggetAssignment.objects.filter(collection=collection).order_by("created_at", "id").values_list(
        "assessor", "answer_id", "nugget_id", "answer__topic__qid", "assignment")
    return _agreement(((a, f"{answer}/{nugget}", qid, v) for a, answer, nugget, qid, v in rows), GRADES)


def support_agreement(collection) -> pd.DataFrame:
    """The same for support judgments of (sentence, cited segment) pairs: full 2, partial 1, none 0."""
    rows = SupportJudgment.objects.filter(collection=collection).order_by("created_at", "id").values_list(
        "assessor", "sentence_id", "docno", "sentence__answer__topic__qid", "support")
    return _agreement(((a, f"{sentence}/{docno}", qid, v) for a, sentence, docno, qid, v in rows), SUPPORT_GRADES)

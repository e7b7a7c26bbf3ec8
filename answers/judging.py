"""Judging answers: an assessor's answer tasks, the next (answer, nugget) or (sentence, cited segment) they have
not judged, and recording what they choose as append-only records (a revision names the record it revises;
a post sent twice, by a retry, records once). Blind to systems like document judging: nothing here gives the
assessor a run's tag. Reads and writes for ``answers.judging_views``."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from answers.models import (
    Answer,
    AnswerPool,
    AnswerPoolItem,
    AnswerTask,
    Nugget,
    NuggetAssignment,
    NuggetBank,
    Source,
    SupportJudgment,
)
from workbench.models import Collection

__all__ = ["AnswerRefused", "current_bank", "my_tasks", "next_nugget", "next_support", "nugget_assignment_record",
           "support_judgment_record", "task_for"]


class AnswerRefused(ValueError):
    """A choice that cannot be recorded (the bank changed, the pair is not in the task): one line for the user."""


def my_tasks(user, collection: Collection | None = None):
    tasks = AnswerTask.objects.filter(assessor=user).select_related("pool", "topic", "pool__collection")
    return tasks.filter(pool__collection=collection) if collection is not None else tasks


def task_for(user, collection: Collection, qid: str, kind: str) -> AnswerTask | None:
    """The user's task on topic ``qid`` of an answer pool of ``kind`` (the newest pool), or None."""
    return my_tasks(user, collection).filter(topic__qid=qid, pool__kind=kind).order_by("-pool__created_at",
                                                                                       "-pool_id").first()


def current_bank(topic) -> NuggetBank | None:
    return NuggetBank.objects.filter(topic=topic).order_by("-version").first()


def _latest(records, key) -> dict:
    """The latest record of each key (records in creation order)."""
    found = {}
    for record in records:
        found[key(record)] = record
    return found


@dataclass(frozen=True)
class NuggetStep:
    """Where an assessor stands in a nugget task: the answer and nugget to judge next (None when done)."""

    bank: NuggetBank | None
    answer: Answer | None
    nugget: Nugget | None
    done: int
    total: int
    current: str = ""


def _nugget_pairs(task: AnswerTask, bank: NuggetBank) -> tuple[list[int], list[Nugget]]:
    answers = list(AnswerPoolItem.objects.filter(pool=task.pool, topic=task.topic, sentence__isnull=True)
                   .order_by("judging_order").values_list("answer_id", flat=True))
    return answers, list(bank.nuggets.order_by("order"))


def next_nugget(task: AnswerTask, username: str, answer_id: int | None = None, nugget_id: int | None = None
                ) -> NuggetStep:
    """The pair asked for (when it is the task's), else the first pair of the current bank the assessor has not
    assigned, in the pool's answer order and the bank's nugget order."""
    bank = current_bank(task.topic)
    if bank is None:
        return NuggetStep(None, None, None, 0, 0)
    answers, nuggets = _nugget_pairs(task, bank)
    mine = _latest(NuggetAssignment.objects.filter(bank=bank, assessor=username, answer_id__in=answers),
                   lambda r: (r.answer_id, r.nugget_id))
    total = len(answers) * len(nuggets)
    wanted = None
    if answer_id in answers and nugget_id in {n.pk for n in nuggets}:
        wanted = (answer_id, nugget_id)
    else:
        wanted = next(((a, n.pk) for a in answers for n in nuggets if (a, n.pk) not in mine), None)
    if wanted is None:
        return NuggetStep(bank, None, None, len(mine), total)
    record = mine.get(wanted)
    return NuggetStep(bank, Answer.objects.get(pk=wanted[0]), next(n for n in nuggets if n.pk == wanted[1]),
                      len(mine), total, record.assignment if record else "")


def _record(model, *, lookup: dict, values: dict, user, collection, client_token: str, time_spent_ms):
    """An append-only record of ``user``: a revision of their latest one on the same pair; once per token."""
    if client_token and model.objects.filter(client_token=client_token).exists():
        return model.objects.get(client_token=client_token)
    previous = model.objects.filter(**lookup, assessor=user.username).order_by("-created_at", "-id").first()
    try:
        with transaction.atomic():
            return model.objects.create(**lookup, **values, collection=collection, assessor=user.username, user=user,
                                        source=Source.WEB, previous=previous, client_token=client_token or None,
                                        time_spent_ms=time_spent_ms)
    except IntegrityError:  # the same post twice at once, or a revision raced: the first one stands
        found = model.objects.filter(client_token=client_token).first() if client_token else None
        if found is None:
            raise AnswerRefused("Not saved: this choice was changed at the same time elsewhere; reload and choose "
                                "again.") from None
        return found


def nugget_assignment_record(*, task: AnswerTask, user, answer_id: int, nugget_id: int, value: str,
                             client_token: str = "", time_spent_ms: int | None = None) -> NuggetAssignment:
    """Record the user's assignment of a nugget to an answer of their task, against the nugget's bank version,
    which must be the topic's current one (AnswerRefused saying so otherwise)."""
    if value not in NuggetAssignment.Value.values:
        raise AnswerRefused(f"{value!r} is not support, partial_support or not_support")
    if not AnswerPoolItem.objects.filter(pool=task.pool, topic=task.topic, answer_id=answer_id).exists():
        raise AnswerRefused("That answer is not in your task.")
    nugget = Nugget.objects.filter(pk=nugget_id, bank__topic=task.topic).select_related("bank").first()
    bank = current_bank(task.topic)
    if nugget is None or bank is None or nugget.bank_id != bank.pk:
        raise AnswerRefused("Not saved: the topic's nugget bank changed since the page was shown. The next nugget "
                            "of the current bank is shown now.")
    return _record(NuggetAssignment, lookup={"answer_id": answer_id, "nugget": nugget},
                   values={"bank": bank, "assignment": value}, user=user, collection=task.pool.collection,
                   client_token=client_token, time_spent_ms=time_spent_ms)


@dataclass(frozen=True)
class SupportStep:
    item: AnswerPoolItem | None
    done: int
    total: int
    current: str = ""


def next_support(task: AnswerTask, username: str, item_id: int | None = None) -> SupportStep:
    """The citation pair asked for (when it is the task's), else the first one the assessor has not judged."""
    items = list(AnswerPoolItem.objects.filter(pool=task.pool, topic=task.topic, sentence__isnull=False)
                 .select_related("sentence", "answer").order_by("judging_order"))
    mine = _latest(SupportJudgment.objects.filter(collection=task.pool.collection, assessor=username,
                                                  sentence_id__in=[i.sentence_id for i in items]),
                   lambda r: (r.sentence_id, r.docno))
    chosen = next((i for i in items if i.pk == item_id), None) or next(
        (i for i in items if (i.sentence_id, i.docno) not in mine), None)
    done = sum((i.sentence_id, i.docno) in mine for i in items)
    if chosen is None:
        return SupportStep(None, done, len(items))
    record = mine.get((chosen.sentence_id, chosen.docno))
    return SupportStep(chosen, done, len(items), record.support if record else "")


def support_judgment_record(*, task: AnswerTask, user, item_id: int, value: str, client_token: str = "",
                            time_spent_ms: int | None = None) -> SupportJudgment:
    if value not in SupportJudgment.Value.values:
        raise AnswerRefused(f"{value!r} is not full_support, partial_support or no_support")
    item = AnswerPoolItem.objects.filter(pk=item_id, pool=task.pool, topic=task.topic, sentence__isnull=False).first()
    if item is None:
        raise AnswerRefused("That citation is not in your task.")
    return _record(SupportJudgment, lookup={"sentence_id": item.sentence_id, "docno": item.docno},
                   values={"support": value}, user=user, collection=task.pool.collection,
                   client_token=client_token, time_spent_ms=time_spent_ms)


def pool_kinds() -> tuple[str, str]:
    return AnswerPool.Kind.NUGGET, AnswerPool.Kind.SUPPORT

"""Writes of judgments. The log is append-only: a new grade is a new record pointing at the
record it revises; nothing is updated or deleted."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from judging.duplicates import propagation_after_judgment, propagation_sync_all
from judging.models import AssignmentItem, Judgment
from judging.queueing import advance_after_judgment
from judging.selectors import has_text
from pooling.strategies import registry
from workbench.collections.bulk import insert_columns
from workbench.collections.services import ImportRefused
from workbench.collections.signals import collection_changed
from workbench.collections.textfiles import first_line_matching
from workbench.formats import FormatError, read_qrels
from workbench.models import Collection


@dataclass(frozen=True)
class QrelsImportSummary:
    assessor: str
    created: int
    revised: int
    unchanged: int
    topics: int


def default_assessor_for(source: str | Path) -> str:
    """Imported qrels are judgments by an assessor named after their source file."""
    return f"qrels:{Path(str(source)).name}"


def _qrels_problems(collection: Collection, source: str | Path, frame, topics: dict[str, int]) -> list[str]:
    """Topics not in the collection and grades not on its scale, each with the first line naming it."""
    problems = []
    for qid in sorted(set(frame["qid"].astype(str)) - set(topics)):
        line = first_line_matching(source, lambda fields, q=qid: fields[:1] == [q])
        problems.append(f"{source}:{line}: topic {qid!r} is not in collection {collection.slug!r}")
    allowed = set(collection.grades)
    for grade in sorted(set(frame["rel"].astype(int)) - allowed):
        line = first_line_matching(source, lambda f, g=grade: len(f) == 4 and f[3].lstrip("+") == str(g))
        problems.append(f"{source}:{line}: grade {grade} is not on the collection's scale "
                        f"{sorted(allowed)}")
    return problems[:20] + ([f"... {len(problems) - 20} more"] if len(problems) > 20 else [])


def _new_records(frame, topics: dict[str, int], latest: dict) -> tuple[dict[str, list], int, int, int]:
    """The records to append as columns, and how many are created, revised and unchanged."""
    created = revised = unchanged = 0
    new_rows: dict[str, list] = {"topic": [], "docno": [], "grade": [], "previous": []}
    for qid, docno, rel in zip(frame["qid"].astype(str), frame["docno"], frame["rel"].astype(int).tolist(),
                               strict=True):
        topic_id = topics[qid]
        previous = latest.get((topic_id, docno))
        if previous is not None and previous[1] == rel and not previous[2]:
            unchanged += 1
            continue
        new_rows["topic"].append(topic_id)
        new_rows["docno"].append(docno)
        new_rows["grade"].append(rel)
        new_rows["previous"].append(None if previous is None else previous[0])
        created, revised = (created + 1, revised) if previous is None else (created, revised + 1)
    return new_rows, created, revised, unchanged


def qrels_import(*, collection: Collection, source: str | Path, assessor: str | None = None) -> QrelsImportSummary:
    """Import a TREC qrels file as judgments by ``assessor``.

    Every (qid, docno) must name a topic of the collection and a grade of its scale. Re-importing
    the same file changes nothing; a file with new grades appends revisions. The file is read and
    checked before the transaction that writes the judgments begins.
    """
    assessor = assessor or default_assessor_for(source)
    try:
        frame = read_qrels(source)
    except FormatError as exc:
        raise ImportRefused(exc.problems) from None
    if frame.empty:
        raise ImportRefused([f"{source}: no judgments found"])
    topics = dict(collection.topics.values_list("qid", "pk"))
    problems = _qrels_problems(collection, source, frame, topics)
    if problems:
        raise ImportRefused(problems)
    with transaction.atomic():
        summary = _write_qrels(collection, frame, topics, assessor)
        propagation_sync_all(collection)  # imported grades propagate inside accepted near-duplicate classes
        collection_changed.send(sender=Judgment, collection_id=collection.pk)  # rows written without post_save
        return summary


def _write_qrels(collection: Collection, frame, topics: dict[str, int], assessor: str) -> QrelsImportSummary:
    # each document's latest record by this assessor: (id, grade, cannot judge)
    latest = {(topic_id, docno): (pk, grade, cannot) for topic_id, docno, pk, grade, cannot in
              Judgment.objects.filter(collection=collection, assessor=assessor).order_by("created_at", "id")
              .values_list("topic_id", "docno", "id", "grade", "cannot_judge")}
    frame = frame.drop_duplicates(["qid", "docno"], keep="last")
    new_rows, created, revised, unchanged = _new_records(frame, topics, latest)
    # rows as columns, without a model instance each (bulk_create spent 17 of 19 s on 150,000 judgments)
    insert_columns(Judgment, new_rows, {"collection": collection.pk, "assessor": assessor,
                                        "source": Judgment.Source.IMPORT.value, "cannot_judge": False,
                                        "created_at": timezone.now(), "comment": "", "rationale": ""})
    return QrelsImportSummary(assessor=assessor, created=created, revised=revised, unchanged=unchanged,
                              topics=int(frame["qid"].nunique()))


class JudgmentRefused(ValueError):
    pass


def _latest_of(*, collection_id: int, topic_id: int, docno: str, assessor: str) -> Judgment | None:
    return (Judgment.objects.filter(collection_id=collection_id, topic_id=topic_id, docno=docno, assessor=assessor)
            .order_by("-created_at", "-id").first())


def judgment_record(*, item_id: int, user, grade: int | None, cannot_judge: bool = False,
                    client_token: str | None = None, time_spent_ms: int | None = None, comment: str = "",
                    rationale: str = "", passages: list | None = None, readable: bool | None = None) -> Judgment:
    """Append the assessor's judgment of one assigned document and make it their current one.

    Idempotent: a post repeated with the same ``client_token`` (a double click, a reload, a retry
    after a lost response) returns the record the first one made. The item row is locked while the
    record is written, so two tabs judging the same document append two records in order, the
    later revising the earlier. The record is committed before this returns, so the next document
    is shown only after the judgment is safe.

    The transaction holds the judgment and what it propagates only: an adaptive pool learns from it
    after commit (its next document, a ``cal`` retrain included), still before this returns, so the
    assessor's next page has it.

    ``readable``: whether the workbench holds the document's text, when the caller read it already (the
    judging page did); None asks the database.
    """
    if client_token:
        done = Judgment.objects.filter(client_token=client_token).first()
        if done is not None:
            if done.user_id != user.pk:
                raise JudgmentRefused("this form was submitted by another user")
            return done
    try:
        with transaction.atomic():
            judgment, advance = _judgment_append(
                item_id=item_id, user=user, grade=grade, cannot_judge=cannot_judge, client_token=client_token,
                time_spent_ms=time_spent_ms, comment=comment, rationale=rationale, passages=passages or [],
                readable=readable)
        if advance is not None:
            _after_commit(advance)
        return judgment
    except IntegrityError:
        if client_token:
            done = Judgment.objects.filter(client_token=client_token, user=user).first()
            if done is not None:
                return done
        raise


NO_TEXT_REFUSAL = ("No grade was recorded: the workbench holds no text for this document, so nobody has read it here. "
                   "Skip it, or choose \u201cCannot judge\u201d, and tell the organizer.")


def may_grade(collection: Collection, *, readable: bool) -> bool:
    """A grade needs a text the assessor saw: the document's text here (``readable``), or its page at the
    document URL when the collection allows judging by link."""
    return readable or (collection.judge_by_link and bool(collection.document_url))


def _after_commit(func) -> None:
    """Run ``func`` once the judgment's transaction is committed: now when the caller holds no transaction of
    its own (a test's transaction counts as none, as it does for Django's durable blocks), else when the
    caller's commits."""
    if all(getattr(block, "_from_testcase", False) for block in connection.atomic_blocks):
        func()
    else:
        transaction.on_commit(func)


def _judgment_append(*, item_id, user, grade, cannot_judge, client_token, time_spent_ms, comment,
                     rationale, passages, readable=None) -> tuple[Judgment, Callable[[], None] | None]:
    """The judgment appended, and the adaptive pool's advance to make after commit (None for other pools)."""
    try:
        item = (AssignmentItem.objects.select_for_update()
                .select_related("assignment__pool__collection", "assignment__topic")
                .get(pk=item_id, assignment__assessor=user))
    except AssignmentItem.DoesNotExist:
        raise JudgmentRefused("no such document in your assignments") from None
    collection = item.assignment.pool.collection
    if cannot_judge:
        grade = None
    elif grade not in collection.grades:
        raise JudgmentRefused(f"grade {grade!r} is not on the scale {collection.grades}")
    elif not may_grade(collection, readable=has_text(collection, item.docno) if readable is None else readable):
        raise JudgmentRefused(NO_TEXT_REFUSAL)
    topic = item.assignment.topic
    previous = _latest_of(collection_id=collection.pk, topic_id=topic.pk, docno=item.docno, assessor=user.username)
    if (previous is not None and previous.grade == grade and previous.cannot_judge == cannot_judge
            and previous.comment == comment and previous.rationale == rationale and previous.passages == passages):
        # the same answer again (e.g. from a second tab): nothing new to record
        if item.latest_id != previous.pk:
            item.latest = previous
            item.save(update_fields=["latest"])
        return previous, None
    judgment = Judgment.objects.create(
        collection=collection, topic=topic, docno=item.docno, grade=grade, cannot_judge=cannot_judge,
        assessor=user.username, user=user, source=Judgment.Source.WEB, previous=previous,
        client_token=client_token or None, time_spent_ms=time_spent_ms, comment=comment, rationale=rationale,
        passages=passages)
    # the same document may sit in several of this assessor's assignments (several pools)
    AssignmentItem.objects.filter(assignment__assessor=user, assignment__topic=topic,
                                  docno=item.docno).update(latest=judgment)
    propagation_after_judgment(judgment)  # its near-duplicates, if the organizer accepted a class of them
    pool = item.assignment.pool
    if registry.is_adaptive(pool.strategy):
        # adaptive pools choose the next document from the judgments so far; it joins the topic's queues
        return judgment, partial(advance_after_judgment, pool, topic.qid)
    return judgment, None


@transaction.atomic
def adjudication_record(*, collection: Collection, qid: str, docno: str, grade: int, user,
                        comment: str = "") -> Judgment:
    """An organizer's final grade for a document the assessors disagree on."""
    if grade not in collection.grades:
        raise JudgmentRefused(f"grade {grade!r} is not on the scale {collection.grades}")
    topic = collection.topics.get(qid=qid)
    name = f"adjudicator:{user.username}"
    previous = _latest_of(collection_id=collection.pk, topic_id=topic.pk, docno=docno, assessor=name)
    judgment = Judgment.objects.create(collection=collection, topic=topic, docno=docno, grade=grade, assessor=name,
                                       user=user, source=Judgment.Source.ADJUDICATION, previous=previous,
                                       comment=comment)
    propagation_after_judgment(judgment)
    return judgment

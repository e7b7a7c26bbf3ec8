"""Judgments propagated inside accepted near-duplicate classes: their own records, only in the "with
duplicates" qrels, revocable, and skipped in the judging queue."""

from __future__ import annotations

import pytest

from evaluation.release import qrels_text
from judging.agreement import majority_qrels
from judging.assignments import assignments_create
from judging.duplicates import duplicate_class_set, qrels_with_duplicates
from judging.models import AssignmentItem, Judgment, PropagatedJudgment
from judging.qrels import assessor_judgments, qrels
from judging.selectors import next_item_for
from judging.services import adjudication_record, judgment_record
from workbench.models import DuplicateClass, DuplicateMember


@pytest.fixture
def klass(pool):
    """d1 (representative) with near-duplicates d2 (0.9) and d4 (0.8); pool: 301 -> d3, d1, d4, d2."""
    c = DuplicateClass.objects.create(collection=pool.collection, representative="d1", similarity=0.8,
                                      threshold=0.7, shingle=3)
    DuplicateMember.objects.create(duplicate_class=c, collection=pool.collection, docno="d2", similarity=0.9)
    DuplicateMember.objects.create(duplicate_class=c, collection=pool.collection, docno="d4", similarity=0.8)
    return c


def judge(user, qid, docno, grade):
    item = AssignmentItem.objects.get(assignment__assessor=user, assignment__topic__qid=qid, docno=docno)
    return judgment_record(item_id=item.pk, user=user, grade=grade)


def test_propagated_judgments_appear_in_the_with_duplicates_qrels_only(pool, klass, assessor, organizer):
    assignments_create(pool=pool, assessors=[assessor])
    duplicate_class_set(duplicate_class=klass, status="accepted", user=organizer)
    source = judge(assessor, "301", "d1", 2)
    judge(assessor, "301", "d3", 0)
    propagated = PropagatedJudgment.objects.order_by("docno")
    assert [(p.docno, p.grade, p.source_id, p.duplicate_class_id, p.similarity) for p in propagated] == [
        ("d2", 2, source.pk, klass.pk, 0.9), ("d4", 2, source.pk, klass.pk, 0.8)]
    assert qrels_text(pool.collection) == "301 0 d1 2\n301 0 d3 0\n"  # the default qrels: as before
    assert qrels_text(pool.collection, duplicates=True) == "301 0 d1 2\n301 0 d2 2\n301 0 d3 0\n301 0 d4 2\n"
    # never the assessor's own work, never in agreement
    assert Judgment.objects.count() == 2 and len(assessor_judgments(pool.collection)) == 2
    assert len(majority_qrels(assessor_judgments(pool.collection))) == 2


def test_the_queue_skips_a_document_whose_class_is_judged_unless_the_organizer_wants_it_judged(
        pool, klass, assessor, organizer):
    assignments_create(pool=pool, assessors=[assessor])
    duplicate_class_set(duplicate_class=klass, status="accepted", user=organizer)
    judge(assessor, "301", "d3", 0)
    judge(assessor, "301", "d1", 1)
    assert next_item_for(assessor).docno == "d6"  # d4 and d2 (topic 301) are covered by d1's grade
    duplicate_class_set(duplicate_class=klass, judge_members=True, user=organizer)
    assert next_item_for(assessor).docno == "d4"


def test_a_members_own_judgment_wins_over_the_propagated_one(pool, klass, assessor, organizer):
    assignments_create(pool=pool, assessors=[assessor])
    duplicate_class_set(duplicate_class=klass, status="accepted", user=organizer, judge_members=True)
    judge(assessor, "301", "d1", 2)
    judge(assessor, "301", "d4", 0)
    assert list(PropagatedJudgment.objects.values_list("docno", flat=True)) == ["d2"]
    with_dups = qrels_with_duplicates(pool.collection)
    assert dict(zip(with_dups["docno"], with_dups["rel"], strict=True)) == {"d1": 2, "d2": 2, "d4": 0}
    # an adjudication of the representative changes what is propagated
    adjudication_record(collection=pool.collection, qid="301", docno="d1", grade=1, user=organizer)
    assert list(PropagatedJudgment.objects.values_list("docno", "grade")) == [("d2", 1)]


def test_revoking_a_class_removes_its_propagated_judgments_and_nothing_else(pool, klass, assessor, organizer):
    other = DuplicateClass.objects.create(collection=pool.collection, representative="d5", similarity=1.0,
                                          threshold=0.7, shingle=3)
    DuplicateMember.objects.create(duplicate_class=other, collection=pool.collection, docno="d6", similarity=1.0)
    assignments_create(pool=pool, assessors=[assessor])
    for c in (klass, other):
        duplicate_class_set(duplicate_class=c, status="accepted", user=organizer)
    judge(assessor, "301", "d1", 2)
    judge(assessor, "302", "d5", 1)
    judgments_before, own_qrels = Judgment.objects.count(), qrels(pool.collection)
    assert PropagatedJudgment.objects.count() == 3
    duplicate_class_set(duplicate_class=klass, status="split", user=organizer)
    assert list(PropagatedJudgment.objects.values_list("docno", flat=True)) == ["d6"]
    assert Judgment.objects.count() == judgments_before and qrels(pool.collection).equals(own_qrels)
    assert qrels_text(pool.collection, duplicates=True) == "301 0 d1 2\n302 0 d5 1\n302 0 d6 1\n"
    assert next_item_for(assessor).docno in {"d3", "d4", "d2"}  # the split class's members are judged again


def test_a_proposed_class_propagates_nothing(pool, klass, assessor):
    assignments_create(pool=pool, assessors=[assessor])
    judge(assessor, "301", "d1", 2)
    assert not PropagatedJudgment.objects.exists()
    assert qrels_text(pool.collection, duplicates=True) == qrels_text(pool.collection)

"""Judgments propagated inside near-duplicate classes (NIST's TREC DL practice: judge one document of a class,
copy its grade to the others into a separate "with duplicates" qrels).

A class the organizer *accepted* (``workbench.corpora.duplicates``) propagates, per topic, the grade of its judged document
(the representative when it is judged, else the first judged member in docno order) to every document of the
class nobody judged for that topic, as :class:`~judging.models.PropagatedJudgment` records naming the source
judgment, the class and the similarity. A document's own judgment always wins: once judged, its propagated
record goes. The grade is the default qrels policy's (an adjudication where there is one, else the majority of the
assessors' latest grades, ties to the lower). Revoking a class (split, or back to proposed) deletes its
propagated records and nothing else. The judging queue skips a document covered by a propagated record unless
the organizer asked for the class's members to be judged.
"""

from __future__ import annotations

from collections import Counter

import pandas as pd
from django.db import transaction
from django.db.models import Exists, OuterRef, Q

from judging.models import Judgment, PropagatedJudgment
from judging.qrels import qrels, sort_qrels
from workbench.corpora.duplicates import duplicate_class_decide, duplicate_member_remove
from workbench.models import Collection, DuplicateClass, DuplicateMember

__all__ = ["covered_by_propagation", "duplicate_class_set", "propagation_after_judgment", "propagation_sync",
           "propagation_sync_all",
           "qrels_with_duplicates"]


def _own_grades(collection: Collection, topic_ids, docnos) -> dict[tuple[int, str], tuple[int, int]]:
    """(topic pk, docno) -> (grade, id of the record that gives it) under the default policy."""
    latest: dict[tuple[int, str, str], tuple[int, int | None, bool]] = {}
    rows = (Judgment.objects.filter(collection=collection, topic_id__in=list(topic_ids), docno__in=list(docnos))
            .order_by("id").values_list("id", "topic_id", "docno", "assessor", "grade", "source"))
    for pk, topic_id, docno, assessor, grade, source in rows:
        latest[(topic_id, docno, assessor)] = (pk, grade, source == Judgment.Source.ADJUDICATION)
    per_doc: dict[tuple[int, str], list[tuple[int, int, bool]]] = {}
    for (topic_id, docno, _), (pk, grade, adjudication) in latest.items():
        if grade is not None:  # "cannot judge" gives no grade
            per_doc.setdefault((topic_id, docno), []).append((pk, grade, adjudication))
    found = {}
    for key, records in per_doc.items():
        adjudications = [r for r in records if r[2]]
        if adjudications:
            pk, grade, _ = max(adjudications)
        else:
            votes = Counter(g for _, g, _ in records)
            top = max(votes.values())
            grade = min(g for g, n in votes.items() if n == top)
            pk = max(p for p, g, _ in records if g == grade)
        found[key] = (grade, pk)
    return found


def _desired(duplicate_class: DuplicateClass, members: dict[str, float], own: dict, topic_id: int) -> list:
    docs = [duplicate_class.representative, *sorted(members)]
    judged = [d for d in docs if (topic_id, d) in own]
    if not judged:
        return []
    source_doc = judged[0]
    grade, source_id = own[(topic_id, source_doc)]

    def similarity(doc: str) -> float:  # to the judged document, through the representative
        if source_doc == duplicate_class.representative:
            return members[doc]
        if doc == duplicate_class.representative:
            return members[source_doc]
        return min(members[doc], members[source_doc])

    return [PropagatedJudgment(collection_id=duplicate_class.collection_id, topic_id=topic_id, docno=d, grade=grade,
                               source_id=source_id, duplicate_class=duplicate_class, similarity=similarity(d))
            for d in docs if (topic_id, d) not in own]


@transaction.atomic
def propagation_sync(*, duplicate_class: DuplicateClass, topic_ids=None) -> int:
    """Make the class's propagated records match its judgments (on the topics given, else on every topic);
    returns how many records it holds there afterwards. A class that is not accepted holds none."""
    existing = PropagatedJudgment.objects.filter(duplicate_class=duplicate_class)
    if topic_ids is not None:
        existing = existing.filter(topic_id__in=list(topic_ids))
    existing.delete()
    if duplicate_class.status != DuplicateClass.Status.ACCEPTED:
        return 0
    members = dict(duplicate_class.members.values_list("docno", "similarity"))
    docnos = [duplicate_class.representative, *members]
    if topic_ids is None:
        topic_ids = set(Judgment.objects.filter(collection_id=duplicate_class.collection_id, docno__in=docnos)
                        .values_list("topic_id", flat=True))
    own = _own_grades(duplicate_class.collection, topic_ids, docnos)
    rows = [row for topic_id in sorted(topic_ids) for row in _desired(duplicate_class, members, own, topic_id)]
    PropagatedJudgment.objects.bulk_create(rows)
    return len(rows)


def _class_of(collection_id: int, docno: str) -> DuplicateClass | None:
    accepted = DuplicateClass.objects.filter(collection_id=collection_id, status=DuplicateClass.Status.ACCEPTED)
    found = accepted.filter(representative=docno).first()
    if found is None:
        member = DuplicateMember.objects.filter(collection_id=collection_id, docno=docno,
                                                duplicate_class__status=DuplicateClass.Status.ACCEPTED).first()
        found = member.duplicate_class if member else None
    return found


def propagation_after_judgment(judgment: Judgment) -> None:
    """A document was judged (or its judgment revised): its accepted class, if any, propagates again on that
    topic. Called inside the transaction that wrote the judgment."""
    duplicate_class = _class_of(judgment.collection_id, judgment.docno)
    if duplicate_class is not None:
        propagation_sync(duplicate_class=duplicate_class, topic_ids=[judgment.topic_id])


def propagation_sync_all(collection: Collection) -> int:
    """Every accepted class of the collection propagates again (after a qrels import)."""
    return sum(propagation_sync(duplicate_class=c) for c in
               DuplicateClass.objects.filter(collection=collection, status=DuplicateClass.Status.ACCEPTED))


@transaction.atomic
def duplicate_class_set(*, duplicate_class: DuplicateClass, status: str | None = None,
                        judge_members: bool | None = None, remove: str | None = None, user=None) -> int:
    """The organizer's decision on a class: accept (its judgments propagate), split or back to proposed (its
    propagated records are revoked: deleted, and nothing else), whether assessors still judge its members, or
    one document taken out of the class (its propagated records go; it is judged on its own).
    Returns the number of propagated records the class holds afterwards."""
    if remove is not None:
        duplicate_member_remove(duplicate_class=duplicate_class, docno=remove, user=user)
    if status is not None:
        duplicate_class_decide(duplicate_class=duplicate_class, status=status, user=user)
    if judge_members is not None:
        duplicate_class.judge_members = judge_members
        duplicate_class.save(update_fields=["judge_members"])
    return propagation_sync(duplicate_class=duplicate_class)


def qrels_with_duplicates(collection: Collection, *, policy: str | None = None) -> pd.DataFrame:
    """NIST's "with duplicates" qrels: the qrels (under ``policy``) plus the propagated grades of documents
    nobody judged for the topic."""
    frame = qrels(collection, **({"policy": policy} if policy else {}))
    propagated = pd.DataFrame.from_records(
        list(PropagatedJudgment.objects.filter(collection=collection).values_list("topic__qid", "docno", "grade")),
        columns=["qid", "docno", "rel"])
    if not len(propagated):
        return frame
    judged = pd.MultiIndex.from_frame(frame[["qid", "docno"]]) if len(frame) else None
    if judged is not None:
        propagated = propagated[~pd.MultiIndex.from_frame(propagated[["qid", "docno"]]).isin(judged)]
    both = sort_qrels(pd.concat([frame, propagated.astype({"rel": "int64"})], ignore_index=True))
    # one chunk per column, as the qrels writer reads them
    return pd.DataFrame({"qid": pd.array(both["qid"].tolist(), dtype="str"),
                         "docno": pd.array(both["docno"].tolist(), dtype="str"), "rel": both["rel"].to_numpy()})


def covered_by_propagation() -> Q:
    """A filter on AssignmentItem: the item's document has a propagated grade for its topic from a class whose
    members the organizer does not want judged (the queue skips these)."""
    return Q(Exists(PropagatedJudgment.objects.filter(
        topic_id=OuterRef("assignment__topic_id"), docno=OuterRef("docno"), duplicate_class__judge_members=False)))

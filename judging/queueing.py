"""What judging gives adaptive pools (connected in ``JudgingConfig.ready()``, see ``pooling.extensions``):
the collection's judgments of a topic's documents, and a place in the assessors' queues for each document
an adaptive pool offers."""

from __future__ import annotations

import random
from collections.abc import Sequence

from django.db import transaction

from judging.machine.calibration import Calibration
from judging.models import Assignment, AssignmentItem, Judgment, MachineVerdict
from workbench.models import Job


def judged_documents(collection, qid: str, docnos: Sequence[str]) -> dict[str, bool]:
    """Of these documents of the topic, those with a judgment in the collection (any assessor, any pool,
    imported or not; machine assessors' left out): relevant or not by the latest one ("cannot judge" counts
    as not relevant)."""
    known: dict[str, bool] = {}
    for docno, grade in (Judgment.objects.filter(collection=collection, topic__qid=qid, docno__in=list(docnos))
                         .exclude(source=Judgment.Source.MACHINE).order_by("id").values_list("docno", "grade")):
        known[docno] = grade is not None and collection.is_relevant(grade)
    return known


def queue_offered_document(sender, *, pool, entry, **kwargs) -> None:
    """The assessors of the topic get the new document at the end of their queue."""
    for assignment in Assignment.objects.filter(pool=pool, topic_id=entry.topic_id):
        AssignmentItem.objects.get_or_create(assignment=assignment, docno=entry.docno,
                                             defaults={"judging_order": entry.judging_order})


# --- routing human effort by a machine assessor's uncertainty ---------------------------------------
#: the share of each queue kept in random order, so that agreement with the machine stays measurable
AUDIT_SHARE = 0.10


def route_order(uncertainty: dict[str, float], docnos: Sequence[str], *, audit_share: float = AUDIT_SHARE,
                seed: int = 0) -> list[str]:
    """``docnos`` in routed order: the ones the machine is least sure of first (highest ``uncertainty``; a
    document it did not judge counts as most unsure), with an ``audit_share`` drawn at random spread evenly
    through the queue. Django-free rule, deterministic for a seed."""
    docnos = list(docnos)
    rng = random.Random(seed)
    audit = set(rng.sample(docnos, round(audit_share * len(docnos)))) if docnos and audit_share > 0 else set()
    rest = sorted((d for d in docnos if d not in audit), key=lambda d: -uncertainty.get(d, float("inf")))
    audited = [d for d in docnos if d in audit]
    rng.shuffle(audited)
    if not audited:
        return rest
    every = max(1, len(docnos) // len(audited))
    out: list[str] = []
    for position in range(len(docnos)):
        if audited and (position + 1) % every == 0:
            out.append(audited.pop())
        elif rest:
            out.append(rest.pop(0))
        else:
            out.append(audited.pop())
    return out


def queues_route(*, judge, pool, audit_share: float = AUDIT_SHARE) -> int:
    """Reorder the unjudged documents of every human queue of ``pool`` by ``judge``'s uncertainty (see
    :func:`route_order`); judged documents keep their places. Returns how many queues were reordered."""
    stored = (Job.objects.filter(kind="machine judge", params__judge_id=judge.pk).exclude(params__calibration=None)
              .order_by("-id").values_list("params", flat=True).first() or {}).get("calibration")
    threshold = Calibration(tuple(stored["coef"]), tuple(stored["grades"]), tuple(stored["thresholds"]),
                            stored["relevant_from"]).relevant_threshold if stored else 0.5
    sure: dict[tuple[int, str], float] = {}
    for topic_id, docno, probability, grade in MachineVerdict.objects.filter(judge=judge, ok=True).values_list(
            "topic_id", "docno", "probability", "parsed_grade"):
        p = probability if probability is not None else float(grade >= judge.collection.relevant_from)
        sure[(topic_id, docno)] = 1.0 - abs(p - threshold) * 2
    routed = 0
    with transaction.atomic():
        for assignment in Assignment.objects.filter(pool=pool).exclude(assessor=judge.user):
            items = list(assignment.items.filter(latest__isnull=True).order_by("judging_order"))
            if len(items) < 2:
                continue
            slots = [item.judging_order for item in items]
            order = route_order({i.docno: sure.get((assignment.topic_id, i.docno), 1.0) for i in items},
                                [i.docno for i in items], audit_share=audit_share, seed=assignment.pk)
            by_docno = {i.docno: i for i in items}
            for slot, docno in zip(slots, order, strict=True):
                by_docno[docno].judging_order = slot
            AssignmentItem.objects.bulk_update(items, ["judging_order"])
            routed += 1
    return routed

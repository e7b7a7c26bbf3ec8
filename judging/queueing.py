"""Judging and adaptive pools, in one direction: judging asks the pool for a topic's next document with the
judgments it knows (:func:`pooling.advance.pool_advance`) and queues what the pool returns for the topic's
assessors. Pooling never calls back: it keeps what it was told on its entries.

- after each judgment in an adaptive pool, once it is committed (``judging.services``): :func:`advance_after_judgment`;
- when an organizer assigns an adaptive pool's topics (``judging.assignments``): :func:`take_in_judged`, so
  that a document the collection judged before the pool offered it is not asked again;
- when an assessor runs out of work (``judging.selectors.next_item_for``): :func:`queue_pool_additions`,
  the documents a build with a bigger budget added since, and the advances owed where one after a judgment
  failed (:func:`advances_owed`).
"""

from __future__ import annotations

import logging
import random
from collections.abc import Iterable, Sequence
from functools import partial

from django.db import transaction
from django.db.models import Exists, OuterRef, QuerySet

from judging.machine.bias import looks_manipulated, over_limit
from judging.machine.hybrid import fit_topics
from judging.machine_hybrid import HybridRefused, judge_pairs
from judging.models import Assignment, AssignmentItem, Judgment, MachineJudge
from judging.policies import HUMAN
from judging.qrels import qrels
from pooling.advance import Advance, pool_advance
from pooling.models import Pool, PoolEntry
from pooling.strategies import registry
from workbench.models import Document

logger = logging.getLogger(__name__)


def judged_documents(collection, qid: str, docnos: Sequence[str]) -> dict[str, bool]:
    """Of these documents of the topic, those with a judgment in the collection (any assessor, any pool,
    imported or not; machine assessors' left out): relevant or not by the latest one ("cannot judge" counts
    as not relevant)."""
    known: dict[str, bool] = {}
    for docno, grade in (Judgment.objects.filter(collection=collection, topic__qid=qid, docno__in=list(docnos))
                         .exclude(source=Judgment.Source.MACHINE).order_by("id").values_list("docno", "grade")):
        known[docno] = grade is not None and collection.is_relevant(grade)
    return known


def pool_advance_queued(pool: Pool, qid: str) -> Advance:
    """The pool's next document for the topic, given the collection's judgments, queued for the topic's
    assessors."""
    advanced = pool_advance(pool=pool, qid=qid, judged=partial(judged_documents, pool.collection, qid))
    if advanced.to_judge:
        with transaction.atomic():  # its own short write (an entry left unqueued is queued on the next fill)
            queue_entries(pool, advanced.to_judge)
    return advanced


def advance_after_judgment(pool: Pool, qid: str) -> None:
    """:func:`pool_advance_queued` once a judgment is committed. A failure is logged, not raised: the judgment is
    safe, and the advance it owes is made on the topic's next judgment or the next queue fill
    (:func:`advances_owed`)."""
    try:
        pool_advance_queued(pool, qid)
    except Exception:
        logger.exception("pool %s topic %s: the pool's advance after a judgment failed; the next judgment or "
                         "queue fill advances it", pool.pk, qid)


def queue_entries(pool: Pool, entries: Iterable[PoolEntry]) -> int:
    """The assessors of each entry's topic get its document at the end of their queue; items added."""
    added = 0
    for entry in entries:
        for assignment in Assignment.objects.filter(pool=pool, topic_id=entry.topic_id):
            added += AssignmentItem.objects.get_or_create(assignment=assignment, docno=entry.docno,
                                                          defaults={"judging_order": entry.judging_order})[1]
    return added


def take_in_judged(pool: Pool, qids: Iterable[str]) -> None:
    """Tell an adaptive pool of the judgments the collection has of the documents it offered on these topics
    without knowing them (judged elsewhere, before): it takes them in and offers its next document."""
    if not registry.is_adaptive(pool.strategy):
        return
    judgment = (Judgment.objects.filter(collection=pool.collection, topic_id=OuterRef("topic_id"),
                                        docno=OuterRef("docno")).exclude(source=Judgment.Source.MACHINE))
    judged = (PoolEntry.objects.filter(pool=pool, topic__qid__in=list(qids), relevant__isnull=True)
              .filter(Exists(judgment)).values_list("topic__qid", flat=True))
    for qid in sorted(set(judged)):
        pool_advance_queued(pool, qid)


def advances_owed(mine: QuerySet[Assignment]) -> None:
    """Advance the adaptive pools of these assignments' topics where a judgment was committed but the pool's
    advance after it failed (the judged entry was not told its judgment): one query when there are none."""
    judgment = (Judgment.objects.filter(collection_id=OuterRef("pool__collection_id"), topic_id=OuterRef("topic_id"),
                                        docno=OuterRef("docno")).exclude(source=Judgment.Source.MACHINE))
    owed = (PoolEntry.objects.filter(relevant__isnull=True)
            .filter(Exists(mine.filter(pool_id=OuterRef("pool_id"), topic_id=OuterRef("topic_id"))))
            .filter(Exists(judgment)).values_list("pool_id", "topic__qid").distinct())
    by_pool: dict[int, set[str]] = {}
    for pool_id, qid in owed:
        by_pool.setdefault(pool_id, set()).add(qid)
    for pool in Pool.objects.filter(pk__in=by_pool).select_related("collection"):
        for qid in sorted(by_pool[pool.pk]):
            advance_after_judgment(pool, qid)


def queue_pool_additions(assignments: QuerySet[Assignment]) -> int:
    """Documents an adaptive pool added on these assignments' topics that nobody holds yet (a build that
    raised the budget) join the queues of the topic's assessors; items added. One query when there are none
    (and one for :func:`reroute_when_due`)."""
    reroute_when_due(assignments)
    mine = assignments.filter(pool__strategy__in=registry.adaptive_names())
    advances_owed(mine)
    held = AssignmentItem.objects.filter(assignment__pool_id=OuterRef("pool_id"),
                                         assignment__topic_id=OuterRef("topic_id"), docno=OuterRef("docno"))
    unheld = (PoolEntry.objects.filter(relevant__isnull=True)
              .filter(Exists(mine.filter(pool_id=OuterRef("pool_id"), topic_id=OuterRef("topic_id"))))
              .exclude(Exists(held)).select_related("pool__collection", "topic").order_by("judging_order"))
    by_topic: dict[tuple[int, int], list[PoolEntry]] = {}
    for entry in unheld:
        by_topic.setdefault((entry.pool_id, entry.topic_id), []).append(entry)
    added = 0
    for new in by_topic.values():
        pool, qid = new[0].pool, new[0].topic.qid
        known = judged_documents(pool.collection, qid, [e.docno for e in new])
        if known:
            take_in_judged(pool, [qid])  # judged meanwhile: the pool learns it and offers its next one
        added += queue_entries(pool, [e for e in new if e.docno not in known])
    return added


# --- routing human effort by a machine assessor's uncertainty ---------------------------------------
#: the share of each queue kept in random order, so that agreement with the machine stays measurable
AUDIT_SHARE = 0.10
#: new human judgments in a collection after which its routed queues are routed again (the calibration refitted)
REROUTE_EVERY = 20


def _human_judgments(collection) -> int:
    return Judgment.objects.filter(collection=collection).exclude(source=Judgment.Source.MACHINE).count()


def reroute_when_due(assignments: QuerySet[Assignment]) -> int:
    """Route again the pools of these assignments that an organizer routed (:func:`queues_route`) once the
    collection has :data:`REROUTE_EVERY` new human judgments since: the calibration follows the judgments as they
    arrive. Pools routed again; one query when no judge routed any."""
    pools = Pool.objects.filter(pk__in=assignments.values("pool_id"))
    again = 0
    for judge in MachineJudge.objects.filter(config__has_key="routed", collection__in=pools.values("collection_id")):
        routed = judge.config["routed"]
        due = [p for p in pools.filter(collection=judge.collection_id, pk__in=[int(k) for k in routed])
               if _human_judgments(judge.collection) - routed[str(p.pk)]["at"] >= REROUTE_EVERY]
        for pool in due:
            queues_route(judge=judge, pool=pool, audit_share=routed[str(pool.pk)]["audit_share"])
            again += 1
    return again


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


def routing_gain(judge) -> dict[tuple[int, str], float]:
    """Per (topic pk, docno) the judge labelled, the chance its calibrated label is wrong (``min(p, 1 - p)``,
    the expected gain of asking a human): the per-topic calibration (``judging.machine.hybrid``) refitted on
    the human grades the collection has now. A judge whose bias check was over its limit
    (``judging.machine_bias``) has the documents that look stuffed or injected asked first (gain 1)."""
    collection = judge.collection
    pairs = judge_pairs(collection, judge.name)
    human = qrels(collection, policy=HUMAN).rename(columns={"rel": "human"})
    seen = pairs.merge(human, on=["qid", "docno"], how="inner")
    calibration = fit_topics(qids=seen["qid"], margin=seen["margin"], relevant=seen["human"] >= collection.relevant_from)
    p = calibration.probability(pairs["qid"], pairs["margin"])
    topic_ids = dict(collection.topics.values_list("qid", "pk"))
    gain = {(topic_ids[q], d): float(min(v, 1 - v)) for q, d, v in zip(pairs["qid"], pairs["docno"], p, strict=True)}
    if over_limit(judge.config):  # its grades of documents that look stuffed or injected are not trusted: humans first
        queries = {t.pk: t.title or t.description for t in collection.topics.all()}
        texts = dict(Document.objects.filter(collection=collection, docno__in=set(pairs["docno"]))
                     .values_list("docno", "text"))
        for topic_id, docno in gain:
            if looks_manipulated(queries[topic_id], texts.get(docno, "")):
                gain[(topic_id, docno)] = 1.0
    return gain


def queues_route(*, judge, pool, audit_share: float = AUDIT_SHARE) -> int:
    """Reorder the unjudged documents of every human queue of ``pool`` by the expected gain of a human grade
    (:func:`routing_gain`, see :func:`route_order`); judged documents keep their places. Returns how many queues
    were reordered."""
    try:
        sure = routing_gain(judge)
    except HybridRefused:  # the judge labelled nothing yet: every document counts as unsure
        sure = {}
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
        # remembered, so that the queues are routed again as human judgments arrive (reroute_when_due)
        judge.config = {**(judge.config or {}), "routed": {**(judge.config or {}).get("routed", {}), str(pool.pk): {
            "at": _human_judgments(judge.collection), "audit_share": audit_share}}}
        judge.save(update_fields=["config"])
    return routed

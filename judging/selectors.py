"""Reads for the judging pages: the assessor's queue, the organizer's dashboard, agreement and adjudication."""

from __future__ import annotations

import pandas as pd
from django.db.models import Count, Exists, OuterRef, Q, Subquery

from judging import agreement
from judging.assignments import assignment_progress
from judging.duplicates import covered_by_propagation
from judging.models import Assignment, AssignmentItem, Judgment
from judging.qrels import assessor_judgments, current_judgments
from judging.queueing import queue_pool_additions
from pooling.models import Pool, PoolEntry
from workbench.formats.ids import natural_positions
from workbench.models import Collection, Document

# --- the assessor's queue -------------------------------------------------------------------------

def assessor_queue(user) -> list[dict]:
    """The assessor's assignments with progress, in the order they are judged (with the documents an
    adaptive pool added since it was last asked)."""
    queue_pool_additions(Assignment.objects.filter(assessor=user))
    assignments = list(Assignment.objects.filter(assessor=user).select_related("topic", "pool__collection")
                       .order_by("pool_id", "id"))
    progress = assignment_progress([a.pk for a in assignments])
    rows = []
    for assignment in assignments:
        judged, total = progress.get(assignment.pk, (0, 0))
        rows.append({"assignment": assignment, "topic": assignment.topic,
                     "collection": assignment.pool.collection, "judged": judged, "total": total})
    return rows


def next_item_for(user, *, assignment_id: int | None = None):
    """The next document this assessor has not judged: in the given assignment if it has one left,
    else in their other assignments, in judging order; documents with a grade propagated from a judged
    near-duplicate are skipped unless the organizer wants the class's members judged."""

    item = _next_pending(user, assignment_id)
    if item is None or (assignment_id is not None and item.assignment_id != assignment_id):
        # the assignment (or the whole queue) is done: an adaptive pool may have grown since (a build that
        # raised its budget), its new documents join the topic's queues now
        mine = Assignment.objects.filter(assessor=user)
        if queue_pool_additions(mine.filter(pk=assignment_id) if item is not None else mine):
            item = _next_pending(user, assignment_id)
    return item


def _next_pending(user, assignment_id: int | None):
    # a document whose near-duplicate class is already judged for the topic is skipped (judging.duplicates)
    pending = AssignmentItem.objects.filter(assignment__assessor=user, latest__isnull=True).exclude(
        covered_by_propagation())
    if assignment_id is not None:
        item = pending.filter(assignment_id=assignment_id).order_by("judging_order").first()
        if item is not None:
            return item
    return pending.order_by("assignment__pool_id", "assignment_id", "judging_order").first()


def item_for(user, item_id: int):
    """One of the assessor's own items, or None: nobody reaches another assessor's work by URL."""
    return (AssignmentItem.objects.select_related("assignment__topic", "assignment__pool__collection", "latest")
            .filter(pk=item_id, assignment__assessor=user).first())


def neighbours(item) -> tuple[int | None, int | None]:
    """Ids of the items before and after this one in the assignment's judging order (one query: it is asked on
    every judging page)."""
    siblings = AssignmentItem.objects.filter(assignment_id=item.assignment_id)
    before = siblings.filter(judging_order__lt=item.judging_order).order_by("-judging_order").values("pk")[:1]
    after = siblings.filter(judging_order__gt=item.judging_order).order_by("judging_order").values("pk")[:1]
    row = (AssignmentItem.objects.filter(pk=item.pk).annotate(before=Subquery(before), after=Subquery(after))
           .values_list("before", "after").first())
    return row if row is not None else (None, None)


def upcoming_docnos(item, count: int) -> list[str]:
    """The docnos of the ``count`` items after this one in the assignment's judging order."""
    return list(AssignmentItem.objects.filter(assignment_id=item.assignment_id, judging_order__gt=item.judging_order)
                .order_by("judging_order").values_list("docno", flat=True)[:count])


def assignment_counts(assignment_id: int) -> tuple[int, int]:
    """(judged, total) of one assignment."""
    return assignment_progress([assignment_id]).get(assignment_id, (0, 0))


# --- documents without text ----------------------------------------------------------------------

def documents_with_text(collection: Collection):
    """The collection's documents an assessor can read: a row with a title or a text."""
    return Document.objects.filter(collection=collection).exclude(title="", text="")


def has_text(collection: Collection, docno: str) -> bool:
    """Whether the workbench holds a title or a text for ``docno`` (a missing row or an empty one: no)."""
    return documents_with_text(collection).filter(docno=docno).exists()


def pooled_without_text(collection: Collection) -> list[dict]:
    """Per pool of the collection, in name order: its pooled documents (topic-document pairs), how many of
    them have no text in the workbench (no document row, or one with an empty title and text), and a few of
    their docnos. Two grouped queries whatever the number of pools."""
    entries = PoolEntry.objects.filter(pool__collection=collection, pool__published=True).order_by()
    totals = dict(entries.values("pool_id").annotate(n=Count("id")).values_list("pool_id", "n"))
    missing = entries.filter(~Exists(documents_with_text(collection).filter(docno=OuterRef("docno"))))
    # 0.4 s in all for a pool of 100,000 entries on SQLite, half of them without text
    counts = dict(missing.values("pool_id").annotate(n=Count("id")).values_list("pool_id", "n"))
    rows = []
    for pool in Pool.objects.filter(collection=collection).order_by("name"):
        n = counts.get(pool.pk, 0)
        # any three (the first the scan meets: no sort of the whole pool), shown sorted
        examples = sorted(missing.filter(pool=pool).values_list("docno", flat=True).distinct()[:3]) if n else []
        rows.append({"pool": pool, "pooled": totals.get(pool.pk, 0), "without_text": n, "examples": examples})
    return rows


# --- the organizer's dashboard --------------------------------------------------------------------

#: a median under this many seconds per document over at least FAST_AFTER timed judgments is flagged
FAST_SECONDS, FAST_AFTER = 2.0, 20


def _rates(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Judged (with a grade), cannot judge (counted apart), assigned, judgments per hour of judging time,
    median seconds per document, and a flag where judging is implausibly fast."""
    grouped = frame.groupby(keys, sort=False)
    out = grouped.agg(assigned=("item", "size"), judged=("judged", "sum"), cannot_judge=("cannot", "sum"))
    web = frame[frame["judged"] & frame["time_ms"].notna()]
    timing = web.groupby(keys, sort=False)["time_ms"].agg(["sum", "median", "size"])
    out["per_hour"] = (timing["size"] / (timing["sum"] / 3_600_000)).where(timing["sum"] > 0)
    out["median_seconds"] = timing["median"] / 1000
    fast = (out["median_seconds"] < FAST_SECONDS) & (timing["size"].reindex(out.index).fillna(0) >= FAST_AFTER)
    out["flag"] = fast.map({True: f"implausibly fast: median under {FAST_SECONDS:g} s", False: ""})
    return out.reset_index()


def judging_dashboard(collection: Collection) -> dict[str, pd.DataFrame]:
    """Per topic and per assessor: judged / assigned, judgments per hour, median time per document.

    Judgments per hour divide the number of timed judgments by the visible time spent on them (the
    time assessors actually had the document in front of them), so breaks do not count.
    """

    rows = AssignmentItem.objects.filter(assignment__pool__collection=collection).values_list(
        "id", "assignment__topic__qid", "assignment__assessor__username", "latest_id", "latest__time_spent_ms",
        "latest__cannot_judge", "latest__created_at")
    frame = pd.DataFrame.from_records(list(rows), columns=["item", "qid", "assessor", "latest", "time_ms", "cannot",
                                                           "at"])
    if frame.empty:
        empty = pd.DataFrame(columns=["assigned", "judged", "cannot_judge", "per_hour", "median_seconds", "flag"])
        return {"topics": empty.assign(qid=[]), "assessors": empty.assign(assessor=[])}
    frame["cannot"] = frame["cannot"].fillna(False).astype(bool)
    frame["judged"] = frame["latest"].notna() & ~frame["cannot"]
    frame["time_ms"] = pd.to_numeric(frame["time_ms"], errors="coerce")
    topics = _rates(frame, ["qid"])
    topics = topics.iloc[_natural_order(topics["qid"])].reset_index(drop=True)
    assessors = _rates(frame, ["assessor"]).sort_values("assessor").reset_index(drop=True)
    return {"topics": topics, "assessors": _assessor_analytics(collection, frame, assessors)}


def _assessor_analytics(collection: Collection, frame: pd.DataFrame, assessors: pd.DataFrame) -> pd.DataFrame:
    """Beside each assessor's rates: the middle half of their seconds per document, their last judgment and
    their mean Cohen's kappa with the assessors who judged the same documents."""
    timed = frame[frame["judged"] & frame["time_ms"].notna()].groupby("assessor")["time_ms"]
    low, high = timed.quantile(0.25) / 1000, timed.quantile(0.75) / 1000
    last = frame.dropna(subset=["at"]).groupby("assessor")["at"].max()
    pairs = agreement_report(collection)["pairs"]
    kappa: dict[str, list[float]] = {}
    for row in pairs.to_dict("records") if len(pairs) else []:
        for name in (row["assessor_a"], row["assessor_b"]):
            if row["kappa"] == row["kappa"]:
                kappa.setdefault(name, []).append(float(row["kappa"]))
    names = assessors["assessor"]
    assessors["middle_half"] = [f"{low[n]:.1f}–{high[n]:.1f}" if n in low.index else "—" for n in names]
    assessors["last_activity"] = [last.get(n) for n in names]
    assessors["kappa"] = [sum(kappa[n]) / len(kappa[n]) if kappa.get(n) else float("nan") for n in names]
    return assessors


def assignment_rows(collection: Collection) -> list[dict]:
    """Every assignment of the collection with its progress, in natural topic order, for the dashboard."""
    rows = list(Assignment.objects.filter(pool__collection=collection)
                .annotate(total=Count("items"), judged=Count("items", filter=Q(items__latest__isnull=False)))
                .values("id", "pool__name", "topic__qid", "assessor__username", "total", "judged"))
    order = natural_positions([row["topic__qid"] for row in rows])
    return [rows[i] for i in order]


def _natural_order(qids: pd.Series) -> list[int]:
    return natural_positions(qids.astype(str).tolist())


# --- agreement and adjudication -------------------------------------------------------------------

def agreement_report(collection: Collection) -> dict[str, pd.DataFrame]:
    """Pairwise and per-topic agreement, and the documents the assessors disagree on with any
    adjudicated grade."""
    frame = assessor_judgments(collection)
    if frame.empty:
        empty = pd.DataFrame()
        return {"pairs": empty, "topics": empty, "disagreements": empty}
    relevant_from = collection.relevant_from
    pairs = agreement.pairwise_agreement(frame, relevant_from=relevant_from)
    topics = agreement.agreement_by_topic(frame, relevant_from=relevant_from)
    topics = topics.iloc[_natural_order(topics["qid"])].reset_index(drop=True) if len(topics) else topics
    disputed = agreement.disagreements(frame)
    adjudicated = current_judgments(collection)
    adjudicated = adjudicated[adjudicated["source"] == Judgment.Source.ADJUDICATION]
    final = adjudicated.drop_duplicates(["qid", "docno"], keep="last").set_index(["qid", "docno"])["grade"]
    if len(disputed):
        keys = list(zip(disputed["qid"], disputed["docno"], strict=True))
        disputed["adjudicated"] = [final.get(k) for k in keys]
        disputed = disputed.iloc[_natural_order(disputed["qid"])].reset_index(drop=True)
    return {"pairs": pairs, "topics": topics, "disagreements": disputed}


def disagreement_evidence(collection: Collection, keys: list[tuple[str, str]]) -> dict[tuple[str, str], dict]:
    """For each disputed (qid, docno): the topic's title, the start of the document, and each assessor's
    current judgment with its label, time spent, comment and supporting passage."""
    if not keys:
        return {}
    qids, docnos = {q for q, _ in keys}, {d for _, d in keys}
    labels = collection.grade_labels
    latest: dict[tuple[str, str, str], Judgment] = {}
    for j in (Judgment.objects.filter(collection=collection, topic__qid__in=qids, docno__in=docnos)
              .exclude(source__in=[Judgment.Source.ADJUDICATION, Judgment.Source.MACHINE])
              .select_related("topic").order_by("created_at", "id")):
        latest[(j.topic.qid, j.docno, j.assessor)] = j
    documents = dict(Document.objects.filter(collection=collection, docno__in=docnos)
                     .values_list("docno", "text"))
    titles = dict(collection.topics.filter(qid__in=qids).values_list("qid", "title"))
    out: dict[tuple[str, str], dict] = {key: {"title": titles.get(key[0], ""), "text": (documents.get(key[1]) or "")[:800],
                                              "assessors": []} for key in keys}
    for (qid, docno, assessor), j in sorted(latest.items()):
        if (qid, docno) in out:
            out[(qid, docno)]["assessors"].append({
                "assessor": assessor, "label": "cannot judge" if j.cannot_judge else labels.get(j.grade, j.grade),
                "seconds": None if j.time_spent_ms is None else round(j.time_spent_ms / 1000, 1),
                "comment": j.comment, "rationale": j.rationale,
                "passages": [(documents.get(docno) or "")[a:b] for a, b in (j.passages or [])]})
    return out

"""Reads for the judging pages: the assessor's queue, the organizer's dashboard, agreement and adjudication."""

from __future__ import annotations

import pandas as pd

from judging import agreement
from judging.assignments import assignment_progress
from judging.models import Assignment, AssignmentItem, Judgment
from judging.qrels import assessor_judgments, current_judgments
from workbench.formats.ids import natural_positions
from workbench.models import Collection

# --- the assessor's queue -------------------------------------------------------------------------

def assessor_queue(user) -> list[dict]:
    """The assessor's assignments with progress, in the order they are judged."""
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
    else in their other assignments, in judging order."""

    pending = AssignmentItem.objects.filter(assignment__assessor=user, latest__isnull=True)
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
    """Ids of the items before and after this one in the assignment's judging order."""
    siblings = AssignmentItem.objects.filter(assignment_id=item.assignment_id)
    before = (siblings.filter(judging_order__lt=item.judging_order).order_by("-judging_order")
              .values_list("pk", flat=True).first())
    after = (siblings.filter(judging_order__gt=item.judging_order).order_by("judging_order")
             .values_list("pk", flat=True).first())
    return before, after


def assignment_counts(assignment_id: int) -> tuple[int, int]:
    """(judged, total) of one assignment."""
    return assignment_progress([assignment_id]).get(assignment_id, (0, 0))


# --- the organizer's dashboard --------------------------------------------------------------------

def _rates(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Judged, assigned, judgments per hour of judging time and median seconds per document."""
    grouped = frame.groupby(keys, sort=False)
    out = grouped.agg(assigned=("item", "size"), judged=("judged", "sum"))
    web = frame[frame["judged"] & frame["time_ms"].notna()]
    timing = web.groupby(keys, sort=False)["time_ms"].agg(["sum", "median", "size"])
    out["per_hour"] = (timing["size"] / (timing["sum"] / 3_600_000)).where(timing["sum"] > 0)
    out["median_seconds"] = timing["median"] / 1000
    return out.reset_index()


def judging_dashboard(collection: Collection) -> dict[str, pd.DataFrame]:
    """Per topic and per assessor: judged / assigned, judgments per hour, median time per document.

    Judgments per hour divide the number of timed judgments by the visible time spent on them (the
    time assessors actually had the document in front of them), so breaks do not count.
    """

    rows = AssignmentItem.objects.filter(assignment__pool__collection=collection).values_list(
        "id", "assignment__topic__qid", "assignment__assessor__username", "latest_id", "latest__time_spent_ms")
    frame = pd.DataFrame.from_records(list(rows), columns=["item", "qid", "assessor", "latest", "time_ms"])
    if frame.empty:
        empty = pd.DataFrame(columns=["assigned", "judged", "per_hour", "median_seconds"])
        return {"topics": empty.assign(qid=[]), "assessors": empty.assign(assessor=[])}
    frame["judged"] = frame["latest"].notna()
    frame["time_ms"] = pd.to_numeric(frame["time_ms"], errors="coerce")
    topics = _rates(frame, ["qid"])
    topics = topics.iloc[_natural_order(topics["qid"])].reset_index(drop=True)
    assessors = _rates(frame, ["assessor"]).sort_values("assessor").reset_index(drop=True)
    return {"topics": topics, "assessors": assessors}


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

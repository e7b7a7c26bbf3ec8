"""Reads of judgments: the current grades, and qrels under a choice of policy."""

from __future__ import annotations

import pandas as pd
from django.db import connection

from judging.agreement import majority_qrels
from judging.assignments import assignment_progress
from judging.models import Assignment, AssignmentItem, Judgment
from workbench.models import Collection

JUDGMENT_COLUMNS = ["assessor", "qid", "docno", "grade", "source"]


def current_judgments(collection: Collection, *, assessor: str | None = None) -> pd.DataFrame:
    """The latest record of each assessor for each (topic, document), "cannot judge" excluded.

    Columns: assessor, qid, docno, grade, source.
    """
    records = Judgment.objects.filter(collection=collection)
    if assessor is not None:
        records = records.filter(assessor=assessor)
    # id order is creation order, and a revision always has a larger id than the judgment it revises
    query = records.order_by("id").values_list(
        "assessor", "topic_id", "docno", "grade", "source", "cannot_judge")
    # a raw cursor: the ORM's per-row converters cost more than the query for 100,000s of judgments
    sql, params = query.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    frame = pd.DataFrame.from_records(rows, columns=[*JUDGMENT_COLUMNS, "cannot_judge"])
    if frame.empty:
        return frame.drop(columns="cannot_judge").astype({"grade": "int64"})
    qids = dict(collection.topics.values_list("pk", "qid"))
    frame["qid"] = frame["qid"].map(qids)
    frame = frame.drop_duplicates(["assessor", "qid", "docno"], keep="last")
    frame = frame[~frame["cannot_judge"].astype(bool)].drop(columns="cannot_judge")
    return frame.astype({"grade": "int64"}).reset_index(drop=True)


QRELS_POLICIES = ("adjudicated", "majority")


def qrels(collection: Collection, *, assessor: str | None = None, policy: str = "adjudicated") -> pd.DataFrame:
    """Qrels (qid, docno, rel) sorted by qid then docno.

    With ``assessor``, that assessor's current grades. Otherwise, per document, the majority of the
    assessors' current grades (a tie goes to the lower grade: a document counts as relevant only if
    most assessors say so); with ``policy="adjudicated"`` (the default) an organizer's adjudicated
    grade, where one exists, replaces the majority.
    """
    if policy not in QRELS_POLICIES:
        raise ValueError(f"unknown qrels policy {policy!r} ({', '.join(QRELS_POLICIES)})")
    frame = current_judgments(collection, assessor=assessor)
    if frame.empty:
        return pd.DataFrame({"qid": pd.Series(dtype=str), "docno": pd.Series(dtype=str),
                             "rel": pd.Series(dtype="int64")})
    if assessor is None:
        adjudicated = frame[frame["source"] == Judgment.Source.ADJUDICATION]
        assessed = frame[frame["source"] != Judgment.Source.ADJUDICATION]
        parts = [majority_qrels(assessed[["assessor", "qid", "docno", "grade"]], tie="lower")] if len(assessed) else []
        if len(adjudicated) and policy == "adjudicated":
            # the latest adjudication of each document wins over the assessors' majority
            parts.insert(0, adjudicated.iloc[::-1].rename(columns={"grade": "rel"})[["qid", "docno", "rel"]])
        frame = pd.concat(parts).drop_duplicates(["qid", "docno"], keep="first").rename(columns={"rel": "grade"})
    out = frame.rename(columns={"grade": "rel"})[["qid", "docno", "rel"]]
    return sort_qrels(out)


def _qid_key(values: pd.Series) -> pd.Series:
    """Numeric topic ids sort as numbers (2 before 10); others as strings."""
    if values.str.fullmatch(r"\d+").all():
        return values.astype("int64")
    return values


def sort_qrels(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.sort_values("docno", kind="stable")
    frame = frame.sort_values("qid", key=_qid_key, kind="stable")
    return frame.reset_index(drop=True)


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
    keys = _qid_key(qids.astype(str)).tolist()
    return sorted(range(len(keys)), key=keys.__getitem__)


# --- agreement and adjudication -------------------------------------------------------------------

def assessor_judgments(collection: Collection) -> pd.DataFrame:
    """Current grades of the assessors who judged in the workbench or were imported (adjudications
    left out): columns assessor, qid, docno, grade."""
    frame = current_judgments(collection)
    frame = frame[frame["source"] != Judgment.Source.ADJUDICATION]
    return frame[["assessor", "qid", "docno", "grade"]].reset_index(drop=True)


def agreement_report(collection: Collection) -> dict[str, pd.DataFrame]:
    """Pairwise and per-topic agreement, and the documents the assessors disagree on with any
    adjudicated grade."""
    from judging import agreement

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

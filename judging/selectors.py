"""Reads of judgments: the current grades, and qrels under a choice of policy."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from django.db import connection

from judging.agreement import majority_qrels
from judging.assignments import assignment_progress
from judging.models import Assignment, AssignmentItem, Judgment
from workbench.models import Collection

JUDGMENT_COLUMNS = ["assessor", "qid", "docno", "grade", "source"]

# --- the judgment records behind current_judgments and qrels --------------------------------------
# A record's integer columns as SQL. "state" packs three in one, as 4 * grade + 2 for an adjudication + 1 for
# "cannot judge" (then grade is 0: the model's check constraint makes it null exactly then).
_INTEGERS = {
    "id": "{id}", "topic": "{topic_id}",
    "state": "4 * CAST(COALESCE({grade}, 0) AS BIGINT) + CASE WHEN {source} = %s THEN 2 ELSE 0 END"
             " + CASE WHEN {cannot_judge} THEN 1 ELSE 0 END",
}
_ADJUDICATION, _CANNOT_JUDGE = 2, 1
# Per database, aggregates that return a whole column as one string (integers comma separated, strings as
# a JSON array): 100,000s of records then cost one row instead of one Python tuple and objects each.
_COLUMN_AGGREGATES = {
    "sqlite": ("group_concat({})", "json_group_array({})"),
    "postgresql": ("string_agg(({})::text, ',' ORDER BY {id})", "json_agg({} ORDER BY {id})::text"),
}


def _judgment_records(collection: Collection, assessor: str | None, strings: list[str]) -> dict:
    """Every judgment record of the collection (or of one assessor), revisions included, as columns in id
    order: id, topic (the topic's pk), grade (int64 arrays), cannot_judge, adjudication (bool arrays) and
    the ``strings`` named (docno, assessor, source: Arrow string arrays)."""
    aggregates = _COLUMN_AGGREGATES.get(connection.vendor)
    records = _aggregated_records(collection, assessor, strings, *aggregates) if aggregates else None
    if records is None:
        records = _fetched_records(collection, assessor, strings)
    ids = records["id"]
    if len(ids) > 1 and not (ids[1:] > ids[:-1]).all():  # an aggregate's order is the database's choice
        order = np.argsort(ids, kind="stable")
        records = {name: values.take(order) for name, values in records.items()}
    state = records.pop("state")
    records["grade"] = state >> 2
    records["adjudication"] = (state & _ADJUDICATION).astype(bool)
    records["cannot_judge"] = (state & _CANNOT_JUDGE).astype(bool)
    return records


def _aggregated_records(collection, assessor, strings, integer_aggregate, string_aggregate) -> dict | None:
    """The records as one row of column aggregates, or None if a column came back unreadable."""
    quote = connection.ops.quote_name
    columns = {name: quote(name) for name in ("id", "topic_id", "grade", "cannot_judge", "source")}
    # every aggregate in id order where the database can be told (PostgreSQL); SQLite's all see one scan
    select = ["COUNT(*)", *(integer_aggregate.format(sql.format(**columns), id=columns["id"])
                            for sql in _INTEGERS.values()),
              *(string_aggregate.format(quote(name), id=columns["id"]) for name in strings)]
    where, params = f"{quote('collection_id')} = %s", [Judgment.Source.ADJUDICATION.value, collection.pk]
    if assessor is not None:
        where += f" AND {quote('assessor')} = %s"
        params.append(assessor)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {', '.join(select)} FROM {quote(Judgment._meta.db_table)} WHERE {where}", params)
        count, *values = cursor.fetchone()
    if not count:
        return _records(dict.fromkeys([*_INTEGERS, *strings], []))
    columns = {}
    try:
        for name, text in zip([*_INTEGERS, *strings], values, strict=True):
            columns[name] = np.fromstring(text, dtype=np.int64, sep=",") if name in _INTEGERS else json.loads(text)
    except (TypeError, ValueError):
        return None
    if any(len(column) != count for column in columns.values()):
        return None
    return _records(columns)


def _fetched_records(collection, assessor, strings) -> dict:
    """The records row by row, on any database."""
    query = Judgment.objects.filter(collection=collection)
    if assessor is not None:
        query = query.filter(assessor=assessor)
    fields = ["id", "topic_id", "grade", "cannot_judge", "source", "docno", "assessor"]
    # a raw cursor: the ORM's per-row converters cost more than the query for 100,000s of judgments
    sql, params = query.order_by("id").values_list(*fields).query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    columns = dict(zip(fields, zip(*rows, strict=True), strict=True)) if rows else dict.fromkeys(fields, ())
    return _records({
        "id": columns["id"], "topic": columns["topic_id"],
        "state": [(0 if cannot else 4 * grade) + _ADJUDICATION * (source == Judgment.Source.ADJUDICATION) + cannot
                  for grade, cannot, source in zip(columns["grade"], map(bool, columns["cannot_judge"]),
                                                   columns["source"], strict=True)],
        **{name: columns[name] for name in strings}})


def _records(columns: dict) -> dict:
    return {name: np.asarray(values, dtype=np.int64) if name in _INTEGERS else pa.array(values, type=pa.string())
            for name, values in columns.items()}


def _encoded(values: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Integer codes (int64, numbered in order of first occurrence) and the distinct values."""
    encoded = pc.dictionary_encode(values)
    return np.asarray(encoded.indices).astype(np.int64), encoded.dictionary


def _current(records: dict, doc_keys: np.ndarray, assessors: np.ndarray | None) -> np.ndarray:
    """Positions of the current judgments: the latest record (records are in id order) of each assessor
    (None: a single one) for each document key, unless it is a "cannot judge", which hides the grade it
    revises. A revision always has a larger id than the judgment it revises."""
    key = doc_keys
    if assessors is not None:  # one integer per (assessor, document), renumbered first so that it cannot overflow
        documents, distinct = pd.factorize(key)
        key = assessors * len(distinct) + documents
    rows = np.flatnonzero(~pd.Series(key).duplicated(keep="last").to_numpy())
    return rows[~records["cannot_judge"][rows]]


def _string_column(values: pa.Array) -> pd.Series:
    return pd.Series(pd.array(values, dtype="str"))


def current_judgments(collection: Collection, *, assessor: str | None = None) -> pd.DataFrame:
    """The latest record of each assessor for each (topic, document), "cannot judge" excluded.

    Columns: assessor, qid, docno, grade, source.
    """
    records = _judgment_records(collection, assessor, ["docno", "assessor", "source"])
    if not len(records["id"]):
        frame = pd.DataFrame.from_records([], columns=[*JUDGMENT_COLUMNS, "cannot_judge"])
        return frame.drop(columns="cannot_judge").astype({"grade": "int64"})
    topics, topic_ids = pd.factorize(records["topic"])
    docs, docnos = _encoded(records["docno"])
    assessors, assessor_names = _encoded(records["assessor"])
    rows = _current(records, topics.astype(np.int64) * len(docnos) + docs,
                    assessors if len(assessor_names) > 1 else None)
    known = dict(collection.topics.values_list("pk", "qid"))
    qids = pa.array([known.get(pk) for pk in topic_ids.tolist()], type=pa.string())
    return pd.DataFrame({
        "assessor": _string_column(assessor_names.take(assessors[rows])),
        "qid": _string_column(qids.take(topics[rows])),
        "docno": _string_column(docnos.take(docs[rows])),
        "grade": records["grade"][rows],
        "source": _string_column(records["source"].take(rows)),
    })


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
    records = _judgment_records(collection, assessor, ["docno"] if assessor is not None else ["docno", "assessor"])
    if not len(records["id"]):
        return _empty_qrels()
    # integer codes throughout: topics numbered in order of first occurrence, documents in docno order
    topics, topic_ids = pd.factorize(records["topic"])
    docs, docnos = _encoded(records["docno"])
    order = pc.sort_indices(docnos)  # by code point, as sort_qrels sorts docnos
    rank = np.empty(len(docnos), dtype=np.int64)
    rank[np.asarray(order)] = np.arange(len(docnos))
    docs, docnos = rank[docs], docnos.take(order)
    doc_keys = topics.astype(np.int64) * len(docnos) + docs  # a (topic, document) pair; sorts as the qrels do
    if assessor is not None:
        rows = _current(records, doc_keys, None)
        keys, rel = doc_keys[rows], records["grade"][rows]
    else:
        keys, rel = _policy_grades(records, doc_keys, policy)
    if not len(rel):
        return _empty_qrels()
    topic, doc = np.divmod(keys, len(docnos))
    natural = _natural_ranks(collection, topic_ids, np.unique(topic))
    if natural is None:  # qids that sort alike (such as "1" and "01"), or a judged topic of another collection
        return _qrels_from_judgments(current_judgments(collection, assessor=assessor), assessor=assessor,
                                     policy=policy)
    ranks, qids = natural
    keys = ranks[topic] * len(docnos) + doc  # unique: one grade per (topic, document)
    if not (keys[1:] > keys[:-1]).all():
        order = np.argsort(keys)
        topic, doc, rel = topic[order], doc[order], rel[order]
    return pd.DataFrame({"qid": _string_column(qids.take(topic)), "docno": _string_column(docnos.take(doc)),
                         "rel": rel})


def _policy_grades(records: dict, doc_keys: np.ndarray, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """(document key, rel) of every document graded by its assessors' majority, or by its latest
    adjudication where there is one under the adjudicated policy."""
    assessors, names = _encoded(records["assessor"])
    several = len(names) > 1
    rows = _current(records, doc_keys, assessors if several else None)
    adjudicated = records["adjudication"][rows]
    assessed = rows[~adjudicated]
    keys, rel = doc_keys[assessed], records["grade"][assessed]
    if several:  # documents judged by two or more assessors are voted on
        keys, rel = _majority(assessors[assessed], keys, rel)
    if policy == "adjudicated" and adjudicated.any():
        # the latest adjudication of each document (rows are in id order) wins over the assessors' majority
        final = rows[adjudicated]
        final = final[~pd.Series(doc_keys[final]).duplicated(keep="last").to_numpy()]
        kept = ~np.isin(keys, doc_keys[final])
        keys = np.concatenate([doc_keys[final], keys[kept]])
        rel = np.concatenate([records["grade"][final], rel[kept]])
    return keys, rel


def _majority(assessors: np.ndarray, keys: np.ndarray, grades: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(document key, rel) by majority_qrels' rule; a document judged once keeps its grade."""
    shared = pd.Series(keys).duplicated(keep=False).to_numpy()
    if not shared.any():
        return keys, grades
    votes = majority_qrels(pd.DataFrame({"assessor": assessors[shared], "qid": 0, "docno": keys[shared],
                                         "grade": grades[shared]}), tie="lower")
    single = ~shared
    return (np.concatenate([keys[single], votes["docno"].to_numpy(np.int64)]),
            np.concatenate([grades[single], votes["rel"].to_numpy(np.int64)]))


def _natural_ranks(collection: Collection, topic_ids: np.ndarray,
                   present: np.ndarray) -> tuple[np.ndarray, pa.Array] | None:
    """Each topic's position (by topic code) among the ``present`` ones in sort_qrels' order of their
    qids, and the qids (by topic code); None if two present qids sort alike or one is not the collection's."""
    known = dict(collection.topics.values_list("pk", "qid"))
    qids = [known.get(pk) for pk in topic_ids.tolist()]
    names = [qids[code] for code in present.tolist()]
    if None in names:
        return None
    keys = _qid_key(pd.Series(names, dtype=str))
    if keys.duplicated().any():
        return None
    ranks = np.zeros(len(qids), dtype=np.int64)
    ranks[present[keys.sort_values(kind="stable").index.to_numpy()]] = np.arange(len(present))
    return ranks, pa.array(qids, type=pa.string())


def _empty_qrels() -> pd.DataFrame:
    return pd.DataFrame({"qid": pd.Series(dtype=str), "docno": pd.Series(dtype=str),
                         "rel": pd.Series(dtype="int64")})


def _qrels_from_judgments(frame: pd.DataFrame, *, assessor: str | None, policy: str) -> pd.DataFrame:
    """qrels in pandas from current_judgments' frame: what qrels does where its integer codes alone cannot
    tell how sort_qrels orders the rows."""
    if frame.empty:
        return _empty_qrels()
    if assessor is None:
        adjudicated = frame[frame["source"] == Judgment.Source.ADJUDICATION]
        assessed = frame[frame["source"] != Judgment.Source.ADJUDICATION]
        parts = [majority_qrels(assessed[["assessor", "qid", "docno", "grade"]], tie="lower")] if len(assessed) else []
        if len(adjudicated) and policy == "adjudicated":
            # the latest adjudication of each document wins over the assessors' majority
            parts.insert(0, adjudicated.iloc[::-1].rename(columns={"grade": "rel"})[["qid", "docno", "rel"]])
        if not parts:
            return _empty_qrels()
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

"""Reads of judgments: the current grades, and qrels under a policy (the rules: ``judging.policies``).

The records are read as whole columns (one row of column aggregates where the database can, else a raw
cursor) and resolved on integer codes."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from django.db import connection
from django.db.models import Exists, OuterRef

from judging.agreement import majority_qrels
from judging.machine.hybrid import hybrid_qrels, margin_of
from judging.models import Judgment, MachineVerdict
from judging.policies import (
    ADJUDICATED,
    DEFAULT_POLICY,
    HUMAN,
    HUMAN_OVER_MACHINE,
    HYBRID,
    MACHINE,
    POLICIES,
    QRELS_POLICIES,
    check_policy,
    current_rows,
    policy_grades,
)
from workbench.formats.ids import all_integers
from workbench.models import Collection

__all__ = ["JUDGMENT_COLUMNS", "POLICIES", "QRELS_POLICIES", "assessor_judgments", "assessor_names", "current_judgments",
           "hybrid", "qrels", "sort_qrels"]

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
# a JSON array): 100,000s of records then cost one row instead of one Python tuple and objects each. The
# aggregates of one query see the rows of one scan in the same order (none has an ORDER BY of its own, which
# would sort the rows again for each: 7.7 s instead of 2.3 s for 3.6 million judgments on PostgreSQL), so the
# columns line up; the rows are then put in id order by their ids (:func:`_judgment_records`).
_COLUMN_AGGREGATES = {
    "sqlite": ("group_concat({})", "json_group_array({})"),
    "postgresql": ("string_agg(({})::text, ',')", "json_agg({})::text"),
}


def _judgment_records(collection: Collection, assessor: str | None, strings: list[str], machine: str = "exclude",
                      topic_ids: list[int] | None = None) -> dict:
    """Every judgment record of the collection (or of one assessor), revisions included, as columns in id
    order: id, topic (the topic's pk), grade (int64 arrays), cannot_judge, adjudication (bool arrays) and
    the ``strings`` named (docno, assessor, source: Arrow string arrays). Machine assessors' records are left
    out (``machine="exclude"``), the only ones (``"only"``) or kept (``"include"``; always for one assessor)."""
    if assessor is not None:
        machine = "include"
    aggregates = _COLUMN_AGGREGATES.get(connection.vendor)
    records = _aggregated_records(collection, assessor, strings, *aggregates, machine, topic_ids) if aggregates \
        else None
    if records is None:
        records = _fetched_records(collection, assessor, strings, machine, topic_ids)
    ids = records["id"]
    if len(ids) > 1 and not (ids[1:] > ids[:-1]).all():  # an aggregate's order is the database's choice
        order = np.argsort(ids, kind="stable")
        records = {name: values.take(order) for name, values in records.items()}
    state = records.pop("state")
    records["grade"] = state >> 2
    records["adjudication"] = (state & _ADJUDICATION).astype(bool)
    records["cannot_judge"] = (state & _CANNOT_JUDGE).astype(bool)
    return records


def _aggregated_records(collection, assessor, strings, integer_aggregate, string_aggregate, machine,
                        topic_ids=None) -> dict | None:
    """The records as one row of column aggregates, or None if a column came back unreadable."""
    quote = connection.ops.quote_name
    columns = {name: quote(name) for name in ("id", "topic_id", "grade", "cannot_judge", "source")}
    select = ["COUNT(*)", *(integer_aggregate.format(sql.format(**columns)) for sql in _INTEGERS.values()),
              *(string_aggregate.format(quote(name)) for name in strings)]
    where, params = f"{quote('collection_id')} = %s", [Judgment.Source.ADJUDICATION.value, collection.pk]
    if assessor is not None:
        where += f" AND {quote('assessor')} = %s"
        params.append(assessor)
    if machine != "include":
        where += f" AND {quote('source')} {'=' if machine == 'only' else '<>'} %s"
        params.append(Judgment.Source.MACHINE.value)
    if topic_ids is not None:
        where += f" AND {quote('topic_id')} IN ({', '.join(['%s'] * len(topic_ids))})"
        params.extend(topic_ids)
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


def _fetched_records(collection, assessor, strings, machine, topic_ids=None) -> dict:
    """The records row by row, on any database."""
    query = Judgment.objects.filter(collection=collection)
    if topic_ids is not None:
        query = query.filter(topic_id__in=topic_ids)
    if assessor is not None:
        query = query.filter(assessor=assessor)
    if machine == "only":
        query = query.filter(source=Judgment.Source.MACHINE)
    elif machine != "include":
        query = query.exclude(source=Judgment.Source.MACHINE)
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


def _string_column(values: pa.Array) -> pd.Series:
    return pd.Series(pd.array(values, dtype="str"))


def current_judgments(collection: Collection, *, assessor: str | None = None, machine: str = "exclude"
                      ) -> pd.DataFrame:
    """The latest record of each assessor for each (topic, document), "cannot judge" excluded; machine
    assessors' only for one of them by name, or with ``machine="include"``/``"only"``.

    Columns: assessor, qid, docno, grade, source.
    """
    records = _judgment_records(collection, assessor, ["docno", "assessor", "source"], machine)
    if not len(records["id"]):
        frame = pd.DataFrame.from_records([], columns=[*JUDGMENT_COLUMNS, "cannot_judge"])
        return frame.drop(columns="cannot_judge").astype({"grade": "int64"})
    topics, topic_ids = pd.factorize(records["topic"])
    docs, docnos = _encoded(records["docno"])
    assessors, assessor_names = _encoded(records["assessor"])
    rows = current_rows(records, topics.astype(np.int64) * len(docnos) + docs,
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


def qrels(collection: Collection, *, assessor: str | None = None, policy: str = DEFAULT_POLICY,
          topics: Sequence[str] | None = None) -> pd.DataFrame:
    """Qrels (qid, docno, rel) sorted by qid then docno; with ``topics``, those topics' only (read alone:
    a part of a job split by topic).

    With ``assessor``, that assessor's current grades. Otherwise, per document, the majority of the
    assessors' current grades (a tie goes to the lower grade: a document counts as relevant only if
    most assessors say so); with ``policy="adjudicated"`` (the default) an organizer's adjudicated
    grade, where one exists, replaces the majority.
    """
    check_policy(policy)
    if assessor is None and policy == HYBRID:
        return _of_topics(hybrid(collection)[0].drop(columns="probability"), topics)
    if assessor is None and policy == HUMAN_OVER_MACHINE:
        human, machine = qrels(collection, policy=HUMAN, topics=topics), qrels(collection, policy=MACHINE, topics=topics)
        if not len(machine):
            return human
        known = pd.MultiIndex.from_frame(human[["qid", "docno"]])
        fill = machine[~pd.MultiIndex.from_frame(machine[["qid", "docno"]]).isin(known)]
        return sort_qrels(pd.concat([human, fill], ignore_index=True)) if len(fill) else human
    machine = "only" if policy == MACHINE else "exclude"
    wanted, topic_ids = topics, _topic_ids(collection, topics)
    if topic_ids == []:
        return _empty_qrels()
    records = _judgment_records(collection, assessor, ["docno"] if assessor is not None else ["docno", "assessor"],
                                machine, topic_ids)
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
        rows = current_rows(records, doc_keys, None)
        keys, rel = doc_keys[rows], records["grade"][rows]
    else:
        assessors, names = _encoded(records["assessor"])
        keys, rel = policy_grades(records, doc_keys, assessors, len(names) > 1, policy)
    if not len(rel):
        return _empty_qrels()
    topic, doc = np.divmod(keys, len(docnos))
    natural = _natural_ranks(collection, topic_ids, np.unique(topic))
    if natural is None:  # qids that sort alike (such as "1" and "01"), or a judged topic of another collection
        found = _qrels_from_judgments(current_judgments(collection, assessor=assessor, machine=machine),
                                      assessor=assessor, policy=policy)
        return _of_topics(found, wanted)
    ranks, qids = natural
    keys = ranks[topic] * len(docnos) + doc  # unique: one grade per (topic, document)
    if not (keys[1:] > keys[:-1]).all():
        order = np.argsort(keys)
        topic, doc, rel = topic[order], doc[order], rel[order]
    return pd.DataFrame({"qid": _string_column(qids.take(topic)), "docno": _string_column(docnos.take(doc)),
                         "rel": rel})


def hybrid(collection: Collection) -> tuple[pd.DataFrame, object]:
    """The ``hybrid`` qrels (sorted; with each machine-labelled pair's calibrated ``probability`` of relevance, NaN
    for a human grade) and the per-topic calibration behind them (None without machine labels),
    refitted on the current human grades at each read (``judging.machine.hybrid``). The machine's margin of a
    pair is the mean of its machine judges' margins (from their probability where they gave one, else grade)."""
    human, machine = qrels(collection, policy=HUMAN), qrels(collection, policy=MACHINE)
    if not len(machine):
        return human.assign(probability=np.nan), None
    verdicts = pd.DataFrame.from_records(list(MachineVerdict.objects.filter(
        judge__collection=collection, ok=True).values_list("topic__qid", "docno", "parsed_grade", "probability")),
        columns=["qid", "docno", "grade", "probability"])
    verdicts["margin"] = margin_of(verdicts["grade"].astype(float), verdicts["probability"].astype(float),
                                   relevant_from=collection.relevant_from)
    margins = verdicts.groupby(["qid", "docno"], as_index=False)["margin"].mean()
    machine = machine.merge(margins, on=["qid", "docno"], how="left")
    machine["margin"] = machine["margin"].fillna(pd.Series(margin_of(machine["rel"], None,
                                                                     relevant_from=collection.relevant_from)))
    frame, calibration = hybrid_qrels(human, machine, grades=collection.grades, relevant_from=collection.relevant_from)
    return sort_qrels(frame.astype({"rel": "int64"})), calibration


def _topic_ids(collection: Collection, topics: Sequence[str] | None) -> list[int] | None:
    """The pks of ``topics`` (None: every topic)."""
    if topics is None:
        return None
    return list(collection.topics.filter(qid__in=[str(t) for t in topics]).values_list("pk", flat=True))


def _of_topics(frame: pd.DataFrame, topics: Sequence[str] | None) -> pd.DataFrame:
    return frame if topics is None else frame[frame["qid"].isin([str(t) for t in topics])].reset_index(drop=True)


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
        if len(adjudicated) and policy in (ADJUDICATED, HUMAN):
            # the latest adjudication of each document wins over the assessors' majority
            parts.insert(0, adjudicated.iloc[::-1].rename(columns={"grade": "rel"})[["qid", "docno", "rel"]])
        if not parts:
            return _empty_qrels()
        frame = pd.concat(parts).drop_duplicates(["qid", "docno"], keep="first").rename(columns={"rel": "grade"})
    out = frame.rename(columns={"grade": "rel"})[["qid", "docno", "rel"]]
    return sort_qrels(out)


def _qid_key(values: pd.Series) -> pd.Series:
    """Sort keys of qids in natural order (``workbench.formats.ids``): numbers when every qid is one."""
    if all_integers(values.unique()):
        return values.map(int)
    return values


def sort_qrels(frame: pd.DataFrame) -> pd.DataFrame:
    frame = frame.sort_values("docno", kind="stable")
    frame = frame.sort_values("qid", key=_qid_key, kind="stable")
    return frame.reset_index(drop=True)


def assessor_judgments(collection: Collection) -> pd.DataFrame:
    """Current grades of the assessors who judged in the workbench or were imported (adjudications
    left out): columns assessor, qid, docno, grade."""
    frame = current_judgments(collection)
    frame = frame[frame["source"] != Judgment.Source.ADJUDICATION]
    return frame[["assessor", "qid", "docno", "grade"]].reset_index(drop=True)


def assessor_names(collection: Collection) -> list[str]:
    """The assessors of :func:`assessor_judgments` (those with a current grade), sorted, without reading the
    judgments: for each name, the database looks for one grade of it that no later record of the same
    assessor revises (an index probe each; the first one found nearly always is), where the grades read
    whole took seconds for millions of judgments."""
    human = Judgment.objects.filter(collection=collection).exclude(source=Judgment.Source.MACHINE).order_by()
    later = human.filter(topic_id=OuterRef("topic_id"), docno=OuterRef("docno"), assessor=OuterRef("assessor"),
                         id__gt=OuterRef("id"))
    current = human.filter(cannot_judge=False).exclude(source=Judgment.Source.ADJUDICATION).filter(~Exists(later))
    names = human.values_list("assessor", flat=True).distinct()
    return sorted(name for name in names if current.filter(assessor=name).exists())

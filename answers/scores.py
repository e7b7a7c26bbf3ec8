"""Scores of answer runs: the four nugget scores, citation support and coverage, with flags (reads only).

Which records count (the same rule everywhere: command, leaderboard, exports):

- **Nugget assignments**: for each (answer, nugget), the latest record of a person (browser or import); a
  machine assessor's latest only where no person assigned it; with ``assessor``, that assessor's latest alone.
  An answer is scored against the newest bank version its counted assignments name; a nugget of that version
  nobody assigned counts as ``not_support`` (and the answer's ``unassigned`` says how many). An answer with no
  assignment is not scored. ``bank_changed``: the topic's bank has a newer version than the one scored.
- **Support**: per (sentence, cited segment) the same rule; precision and recall over the judged pairs
  (``evaluation.engine.nuggets.support_scores``), empty (NaN) for an answer none of whose pairs is judged.
- **Citation coverage**: the share of the answer's sentences that cite at least one segment.
- **Unjudged citations**: the segments the answer cites that nobody judged for relevance on its topic.

A run's line (``qid`` ``all``) is the mean over its scored answers, as nuggetizer's ``calculate_global_metrics``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from django.core.exceptions import EmptyResultSet
from django.db import connections
from django.db.models import Case, QuerySet, Value, When

from answers.models import (
    Answer,
    AnswerSentence,
    Nugget,
    NuggetAssignment,
    NuggetBank,
    Source,
    SupportJudgment,
)
from evaluation.engine.nuggets import SCORES, score_table, support_scores
from judging.models import Judgment
from workbench.models import Collection

__all__ = ["COLUMNS", "SCORES", "answer_scores", "answers_frame", "nugget_rows", "run_means"]

COLUMNS = ["run", "qid", *SCORES, "support_precision", "support_recall", "citation_coverage", "unjudged_citations",
           "unassigned", "bank_version", "bank_changed"]


def _frame(rows: QuerySet, columns: list[str]) -> pd.DataFrame:
    """A ``values_list`` of plain values (numbers, strings) as a frame, in no particular order: its SQL run as is,
    without the model's ordering and without Django's row by row conversion (92,000 assignments: a second)."""
    try:
        sql, params = rows.order_by().query.sql_with_params()
    except EmptyResultSet:  # a filter no row can pass (``__in`` an empty list)
        return pd.DataFrame([], columns=columns)
    with connections[rows.db].cursor() as cursor:
        cursor.execute(sql, params)
        return pd.DataFrame(cursor.fetchall(), columns=columns)


def _records(model, collection: Collection, assessor: str | None, fields: dict[str, str]) -> pd.DataFrame:
    """``model``'s records of the collection (or of ``assessor`` alone): ``id``, ``fields`` (field: column) and
    ``person`` (1 unless a machine made it), as said in SQL: no assessor or source string per row (92,000 of
    them) fetched."""
    rows = model.objects.filter(collection=collection)
    if assessor is not None:
        rows = rows.filter(assessor=assessor)
    rows = rows.annotate(person=Case(When(source=Source.MACHINE.value, then=Value(0)), default=Value(1)))
    return _frame(rows.values_list("id", *fields, "person"), ["id", *fields.values(), "person"])


def _counted(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Each key's counted record: a person's latest, else a machine's latest."""
    return frame.sort_values(["person", "id"]).drop_duplicates(keys, keep="last")


def answers_frame(collection: Collection, runs) -> pd.DataFrame:
    rows = Answer.objects.filter(run__collection=collection)
    if runs is not None:
        rows = rows.filter(run__tag__in=list(runs))
    frame = pd.DataFrame(list(rows.order_by().values_list("pk", "run__tag", "topic_id", "topic__qid", "cited")),
                         columns=["answer", "run", "topic", "qid", "cited"])
    return frame.sort_values(["run", "qid"], kind="stable").reset_index(drop=True)


def nugget_rows(collection: Collection, answers: pd.DataFrame, assessor: str | None) -> pd.DataFrame:
    """One row per (scored answer, nugget of its scored bank version): importance and assignment."""
    records = _records(NuggetAssignment, collection, assessor, {"answer_id": "answer", "nugget_id": "nugget",
                                                                 "bank_id": "bank", "assignment": "assignment"})
    records = _counted(records[records["answer"].isin(answers["answer"])], ["answer", "nugget"])
    versions = dict(NuggetBank.objects.filter(collection=collection).values_list("pk", "version"))
    records["version"] = records["bank"].map(versions)
    chosen = records.sort_values("version").drop_duplicates("answer", keep="last")[["answer", "bank", "version"]]
    nuggets = _frame(Nugget.objects.filter(bank_id__in=chosen["bank"].unique().tolist()).values_list(
        "id", "bank_id", "importance"), ["nugget", "bank", "importance"])
    rows = chosen.merge(nuggets, on="bank").merge(records[["answer", "nugget", "assignment"]],
                                                  on=["answer", "nugget"], how="left")
    rows["unassigned"] = rows["assignment"].isna()
    rows["assignment"] = rows["assignment"].fillna("not_support")
    return rows


def _nugget_scores(collection: Collection, answers: pd.DataFrame, assessor: str | None) -> pd.DataFrame:
    rows = nugget_rows(collection, answers, assessor)
    index = {pk: k for k, pk in enumerate(answers["answer"])}
    n = len(answers)
    if len(rows):
        table = score_table(rows["answer"].map(index).to_numpy(), rows["importance"].tolist(),
                            rows["assignment"].tolist(), n)
    else:
        table = {name: np.zeros(n) for name in SCORES}
    out = pd.DataFrame(table)
    version = rows.groupby("answer")["version"].max() if len(rows) else pd.Series(dtype=float)
    unassigned = rows.groupby("answer")["unassigned"].sum() if len(rows) else pd.Series(dtype=float)
    out["bank_version"] = answers["answer"].map(version).to_numpy()
    out["unassigned"] = answers["answer"].map(unassigned).fillna(0).astype(int).to_numpy()
    current = dict(NuggetBank.objects.filter(collection=collection).values_list("topic_id", "version")
                   .order_by("topic_id", "version"))
    newest = answers["topic"].map(current).to_numpy(dtype=float)
    out["bank_changed"] = out["bank_version"].notna().to_numpy() & (newest > out["bank_version"].fillna(0).to_numpy())
    return out


def _support(collection: Collection, answers: pd.DataFrame, assessor: str | None) -> pd.DataFrame:
    of_collection = AnswerSentence.objects.filter(answer__run__collection=collection)
    sentences = _frame(of_collection.values_list("id", "answer_id"), ["sentence", "answer"])
    sentences = sentences[sentences["answer"].isin(answers["answer"])].reset_index(drop=True)
    index = {pk: k for k, pk in enumerate(answers["answer"])}
    n = len(answers)
    citing = _frame(of_collection.exclude(citations=[]).values_list("id"), ["sentence"])["sentence"]
    cites = sentences["sentence"].isin(citing)
    per = sentences.assign(cites=cites.astype(float)).groupby("answer")["cites"].agg(["mean", "size"])
    coverage = answers["answer"].map(per["mean"]).fillna(0.0).to_numpy()
    judged = _records(SupportJudgment, collection, assessor, {"sentence_id": "sentence", "docno": "docno",
                                                              "support": "support"})
    judged = _counted(judged[judged["sentence"].isin(sentences["sentence"])], ["sentence", "docno"])
    position = pd.Series(np.arange(len(sentences)), index=sentences["sentence"])
    pairs = judged["sentence"].map(position).to_numpy(dtype=np.int64)
    owner = sentences["answer"].map(index).to_numpy(dtype=np.int64)
    precision, recall = support_scores(pairs, judged["support"].tolist(), owner, n)
    has = np.zeros(n, dtype=bool)
    has[owner[pairs]] = True
    return pd.DataFrame({"support_precision": np.where(has, precision, np.nan),
                         "support_recall": np.where(has, recall, np.nan), "citation_coverage": coverage})


def _unjudged(collection: Collection, answers: pd.DataFrame) -> np.ndarray:
    judged = set(Judgment.objects.filter(collection=collection).values_list("topic_id", "docno").distinct())
    return np.array([sum((topic, seg) not in judged for seg in cited)
                     for topic, cited in zip(answers["topic"], answers["cited"], strict=True)], dtype=int)


def answer_scores(collection: Collection, *, runs=None, assessor: str | None = None,
                  scored_only: bool = True) -> pd.DataFrame:
    """One row per answer (run, qid) with :data:`COLUMNS`, runs and topics in order; with ``scored_only``
    only the answers some nugget assignment counts for."""
    answers = answers_frame(collection, runs)
    if answers.empty:
        return pd.DataFrame(columns=COLUMNS)
    frame = pd.concat([answers[["run", "qid"]], _nugget_scores(collection, answers, assessor),
                       _support(collection, answers, assessor)], axis=1)
    frame["unjudged_citations"] = _unjudged(collection, answers)
    if scored_only:
        frame = frame[frame["bank_version"].notna()]
    return frame[COLUMNS].reset_index(drop=True)


def run_means(frame: pd.DataFrame) -> pd.DataFrame:
    """Each run's line: the mean of its answers' scores (``qid`` ``all``), support over the answers judged for
    support, flags summed (unjudged citations, unassigned nuggets) or any (bank changed)."""
    if frame.empty:
        return pd.DataFrame(columns=[*COLUMNS, "topics"])
    grouped = frame.groupby("run", sort=True)
    means = grouped[[*SCORES, "support_precision", "support_recall", "citation_coverage"]].mean()
    means["unjudged_citations"] = grouped["unjudged_citations"].sum()
    means["unassigned"] = grouped["unassigned"].sum()
    means["bank_changed"] = grouped["bank_changed"].sum()
    means["topics"] = grouped.size()
    means["bank_version"] = np.nan
    return means.reset_index().assign(qid="all")[[*COLUMNS, "topics"]]

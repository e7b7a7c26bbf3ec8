"""What answers adds to a collection's release bundle (:mod:`evaluation.release_parts`), when it has answer runs:

- ``answers/nuggets.jsonl``: each topic's current nugget bank, nuggetizer's JSON lines (``manage.py export_nuggets``);
- ``answers/assignments.jsonl``: per scored answer, the nuggets of the bank version it is scored against with the
  counted assignment of each, as ``nuggetizer assign`` writes them (a nugget nobody assigned is ``not_support``,
  as the scores count it): nuggetizer's metrics on this file give ``answer_scores.jsonl``'s scores;
- ``answers/support.jsonl``: every support judgment record, oldest first;
- ``answers/answer_scores.jsonl``: ``manage.py answer_scores SLUG --format json --all-columns``.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from answers.imports_nuggets import nuggets_export
from answers.models import Nugget, SupportJudgment
from answers.scores import COLUMNS, answer_scores, answers_frame, nugget_rows, run_means
from evaluation.release_parts import ReleaseFile

__all__ = ["RELEASE_FILES", "answer_release_files", "assignment_lines", "score_lines", "support_lines"]


def _value(value):
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def score_lines(frame: pd.DataFrame, columns: list[str]) -> list[dict]:
    """Each run's answers (run, topic order) then its mean line (``qid`` ``all``), ``columns`` only, NaN as None."""
    means = run_means(frame)
    mean_of = dict(zip(means["run"], means.to_dict("records"), strict=True))
    by_run: dict[str, list[dict]] = {}  # one to_dict of the whole frame, not one a run (a second for 100 runs)
    for run, record in zip(frame["run"], frame.to_dict("records"), strict=True):
        by_run.setdefault(run, []).append(record)
    return [{c: _value(record[c]) for c in columns} for run in sorted(by_run) for record in [*by_run[run], mean_of[run]]]


def assignment_lines(collection) -> str:
    """nuggetizer's assign output of the scored answers: {"qid", "run_id", "nuggets": [{text, importance,
    assignment}]} in bank order, runs then topics in order."""
    answers = answers_frame(collection, None)
    if answers.empty:
        return ""
    rows = nugget_rows(collection, answers, None)
    nuggets = dict(Nugget.objects.filter(pk__in=rows["nugget"].tolist()).values_list("pk", "order"))
    texts = dict(Nugget.objects.filter(pk__in=rows["nugget"].tolist()).values_list("pk", "text"))
    rows = rows.assign(order=rows["nugget"].map(nuggets)).sort_values(["answer", "order"])
    grouped = {answer: part for answer, part in rows.groupby("answer")}
    lines = []
    for answer, run, qid in zip(answers["answer"], answers["run"], answers["qid"], strict=True):
        part = grouped.get(answer)
        if part is None:
            continue
        listed = [{"text": texts[n], "importance": i, "assignment": a}
                  for n, i, a in zip(part["nugget"], part["importance"], part["assignment"], strict=True)]
        lines.append(json.dumps({"qid": qid, "run_id": run, "nuggets": listed}, ensure_ascii=False) + "\n")
    return "".join(lines)


def support_lines(collection) -> str:
    """Every support judgment record, oldest first: the answer (run, topic), sentence, cited segment, value."""
    records = SupportJudgment.objects.filter(collection=collection).order_by("created_at", "id").values_list(
        "id", "sentence__answer__run__tag", "sentence__answer__topic__qid", "sentence__position", "docno",
        "support", "assessor", "source", "created_at", "previous_id")
    return "".join(json.dumps({"id": pk, "run_id": run, "qid": qid, "sentence": position, "docno": docno,
                               "support": support, "assessor": assessor, "source": source,
                               "created_at": created.isoformat(), "revises": previous}, ensure_ascii=False) + "\n"
                   for pk, run, qid, position, docno, support, assessor, source, created, previous in records)


def answer_release_files(collection, policy: str) -> list[ReleaseFile]:
    """The four files, or none when the collection has no answer run."""
    if not collection.answer_runs.exists():
        return []
    scores = answer_scores(collection)
    score_text = "".join(json.dumps(line) + "\n" for line in score_lines(scores, COLUMNS)) if len(scores) else ""
    return [
        ReleaseFile("answers/nuggets.jsonl", "".join(nuggets_export(collection)),
                    "each topic's current nugget bank, nuggetizer's JSON lines (qid, query, nuggets with text and "
                    "importance); `manage.py import_nuggets` reads it back."),
        ReleaseFile("answers/assignments.jsonl", assignment_lines(collection),
                    "per scored answer (qid, run_id), the nuggets of the bank version it is scored against, each "
                    "with its counted assignment (a person's latest, else a machine's; a nugget nobody assigned "
                    "is not_support), as `nuggetizer assign` writes them."),
        ReleaseFile("answers/support.jsonl", support_lines(collection),
                    "every citation support judgment record, oldest first (run_id, qid, sentence, cited docno, "
                    "support, assessor, source, and the record it revises)."),
        ReleaseFile("answers/answer_scores.jsonl", score_text,
                    "the answer runs' scores per run and topic, then each run's mean (qid all): the four nugget "
                    "scores, support precision and recall, citation coverage and the flags (`manage.py "
                    "answer_scores SLUG --format json --all-columns`)."),
    ]


RELEASE_FILES = (answer_release_files,)

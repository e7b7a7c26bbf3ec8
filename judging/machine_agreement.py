"""How far a machine assessor agrees with the humans, always on topics its calibration did not see: Cohen's
kappa (binary and weighted), AUC, the confusion matrix, and Kendall's tau / tau_ap between the run rankings
under the machine's and the humans' qrels (``judging.machine.calibration`` computes; this module reads)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from django.db.models import Max

from judging.agreement import ranking_correlation
from judging.extensions import system_scores
from judging.machine.calibration import agreement, cross_validate, topic_z
from judging.machine_services import verdict_frame
from judging.models import Judgment, MachineJudge
from judging.policies import HUMAN
from judging.qrels import qrels
from workbench.cache import LRU

__all__ = ["machine_agreement"]

#: figures per state of what they depend on (:func:`_state`): the page shown again costs a few look-ups
_figures = LRU(size=32)

#: the leading runs (by the humans' qrels) whose ranking is compared on its own
TOP_RUNS = 10


def _held_out(judge: MachineJudge, human: pd.DataFrame, folds: int, train_topics) -> pd.DataFrame:
    """Every verdict of the judged topics with the human grade (NaN where none) and a held-out machine grade
    and probability (a calibrated judge is refitted on the other topics; a grading one keeps its grade)."""
    collection = judge.collection
    frame = verdict_frame(judge)
    if frame.empty:
        return frame.assign(human=[], predicted=[])
    frame = frame.merge(human.rename(columns={"rel": "human"}), on=["qid", "docno"], how="left")
    if frame["probability"].notna().all() and frame["score"].notna().all():  # a scoring judge: calibrate on some
        # topics, predict the others (labels imported with a probability but no score keep their grades)
        frame["raw"] = frame["score"].astype(float)
        frame["z"] = topic_z(frame["raw"], frame["qid"])
        out = cross_validate(frame.rename(columns={"grade": "machine_grade", "human": "grade"}),
                             scale=collection.grades, relevant_from=collection.relevant_from, folds=folds,
                             train_topics=train_topics)
        return out.rename(columns={"grade": "human"})
    return frame.assign(predicted=frame["grade"], probability=frame["grade"].astype(float))


def _rankings(collection, human: pd.DataFrame, held: pd.DataFrame) -> dict:
    topics = sorted(set(held["qid"]) & set(human["qid"]))
    machine = held[held["qid"].isin(topics)].rename(columns={"predicted": "rel"})[["qid", "docno", "rel"]]
    a = system_scores(collection, human[human["qid"].isin(topics)], topics)
    b = system_scores(collection, machine.astype({"rel": "int64"}), topics)
    out = {"runs": len(a), "tau": math.nan, "tau_ap": math.nan, "tau_top10": math.nan, "systems": []}
    if len(a) < 2 or set(a) != set(b):
        return out
    out["tau"], out["tau_ap"] = ranking_correlation(a, b)
    top = sorted(a, key=lambda t: (-a[t], t))[:TOP_RUNS]
    if len(top) >= 2:
        out["tau_top10"] = ranking_correlation({t: a[t] for t in top}, {t: b[t] for t in top})[0]
    out["systems"] = [{"run": t, "human": a[t], "machine": b[t]} for t in sorted(a, key=lambda t: (-a[t], t))]
    return out


def _state(judge: MachineJudge) -> tuple:
    """What the figures depend on: the judge (its creation time too: ids are reused after a rollback), its
    verdicts, the collection's judgments (append-only: the last id, and the topics they go with), its scale
    and its runs."""
    collection = judge.collection
    return (judge.pk, judge.created_at, judge.kind, repr(judge.config), repr(collection.grades),
            collection.relevant_from, judge.verdicts.aggregate(m=Max("id"))["m"],
            Judgment.objects.filter(collection=collection).aggregate(m=Max("id"))["m"], collection.topics.count(),
            tuple(collection.runs.order_by("id").values_list("id", "sha256", "contributes")))


def machine_agreement(judge: MachineJudge, *, folds: int = 2, train_topics=None) -> dict:
    """Held-out agreement of the judge with the humans' qrels (``human`` policy); NaN where there is
    not enough to measure (no human judgment on a judged pair, one class only, fewer than two runs).
    Computed once per state of the judge and its collection (:func:`_state`)."""
    key = (_state(judge), folds, tuple(train_topics) if train_topics is not None else None)
    return dict(_figures.get_or_compute(key, lambda: _machine_agreement(judge, folds, train_topics)))


def _machine_agreement(judge: MachineJudge, folds: int, train_topics) -> dict:
    collection = judge.collection
    human = qrels(collection, policy=HUMAN)
    held = _held_out(judge, human, folds, train_topics)
    both = held[held["human"].notna()] if len(held) else held
    figures = agreement(both["human"].astype(int).to_numpy() if len(both) else np.array([], int),
                        both["predicted"].astype(int).to_numpy() if len(both) else np.array([], int),
                        both["probability"].to_numpy() if len(both) else np.array([]),
                        scale=collection.grades, relevant_from=collection.relevant_from)
    figures["topics"] = int(both["qid"].nunique()) if len(both) else 0
    figures["judged_by_machine"] = len(held)
    rankings = _rankings(collection, human, held) if len(both) else {
        "runs": 0, "tau": math.nan, "tau_ap": math.nan, "tau_top10": math.nan, "systems": []}
    return {"judge": judge.name, "kind": judge.kind, **figures, **rankings}

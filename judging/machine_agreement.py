"""How far a machine assessor agrees with the humans, always on topics its calibration did not see: Cohen's
kappa (binary and weighted), AUC, the confusion matrix, and Kendall's tau / tau_ap between the run rankings
under the machine's and the humans' qrels (``judging.machine.calibration`` computes; this module reads).

Ranking every run twice takes seconds at TREC size (143 runs: 3 s on a quiet machine): the page never computes it.
A background job (:data:`KIND`, queued by the board job once the collection changed, or by the page when nothing
computes the judge's current state) stores the figures in its result, keyed by the state they depend on
(:func:`_state`); the page reads them, or says they are being computed with the job's progress.
"""

from __future__ import annotations

import hashlib
import json
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
from workbench.jobs import lifecycle as jobs
from workbench.jsonsafe import numpy_scalar
from workbench.models import Job

__all__ = ["KIND", "agreement_job_start", "agreement_latest", "agreement_stored", "machine_agreement", "store_agreement"]

#: the ``Job.kind`` of a judge's agreement computed in the background (its figures kept in the job's result)
KIND = "machine agreement"
#: the page's figures: the command's defaults
PAGE_FOLDS = 2

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


# ----------------------------------------------------------------------------------- stored by a job
def _state_key(state: tuple) -> str:
    return hashlib.sha1(repr(state).encode()).hexdigest()[:16]


def _jobs_of(judge: MachineJudge):
    """The agreement jobs of the judge, newest first (its collection's few: matched on their params here)."""
    found = Job.objects.filter(collection_id=judge.collection_id, kind=KIND).order_by("-id")[:50]
    return [job for job in found if job.params.get("judge") == judge.pk]


def agreement_stored(judge: MachineJudge) -> tuple[dict | None, Job | None]:
    """What the page shows: (the figures of the judge's current state, None) once a job stored them; else
    (None, the job that will: queued, or running on this state; a failed one, which says why) or (None, None)
    when no job computes them. A few look-ups: nothing is computed."""
    state = _state(judge)
    key = (state, PAGE_FOLDS, None)
    found = _figures.get(key)
    if found is not None:
        return dict(found), None
    wanted = _state_key(state)
    for job in _jobs_of(judge):
        if job.status == Job.Status.QUEUED:  # a queued job computes the state it finds when it runs
            return None, job
        if job.params.get("state") != wanted:
            continue
        if job.status == Job.Status.DONE and "figures" in job.result:
            figures = json.loads(job.result["figures"])  # JSON text: NaN (not enough data) as it was
            _figures.put(key, figures)
            return dict(figures), None
        return None, job  # running on this state, or failed on it
    return None, None


def agreement_latest(judge: MachineJudge) -> dict | None:
    """The figures of the judge's newest stored state, whatever it is (shown, marked "updating", while a job
    computes the current one), or None."""
    done = next((job for job in _jobs_of(judge) if job.status == Job.Status.DONE and "figures" in job.result), None)
    return None if done is None else json.loads(done.result["figures"])


def agreement_job_start(judge: MachineJudge, *, task, user=None) -> Job:
    """Queue ``task`` (:func:`judging.tasks.machine_agreement_job`) for the judge, unless one is queued already."""
    queued = next((job for job in _jobs_of(judge) if job.status == Job.Status.QUEUED), None)
    if queued is not None:
        return queued
    return jobs.job_start(task, kind=KIND, user=user, collection=judge.collection,
                          params={"judge": judge.pk, "name": judge.name, "state": _state_key(_state(judge))})


def store_agreement(progress: jobs.Progress) -> dict:
    """The job's work: the figures of the judge's state when it runs (the state recorded in its params), kept
    in its result as JSON text (NaN stays NaN; a database's JSON column refuses it)."""
    job = progress.job
    judge = MachineJudge.objects.select_related("collection").get(pk=job.params["judge"])
    state = _state(judge)
    job.params = {**job.params, "state": _state_key(state)}
    job.save(update_fields=["params"])
    progress.step("ranking every run under the humans' qrels and the machine's")
    figures = _machine_agreement(judge, PAGE_FOLDS, None)
    _figures.put((state, PAGE_FOLDS, None), figures)
    return {"figures": json.dumps(figures, default=numpy_scalar)}

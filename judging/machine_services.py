"""Machine assessors: creating one, and the job that has it judge every pair of a pool (``judging.machine``
holds the judges; this module gives them the pairs and records what they say).

The job is resumable: it skips every pair the judge already judged (the database refuses a second
judgment of the same pair by the same judge) and those that failed earlier in the same job, so a job whose
worker was killed continues where it stopped when it is run again. Calls to outside services happen here,
outside any transaction; each verdict is written in its own short one. A job split by topic
(``judging.tasks``, ``JOB_PARTS``) is planned by :func:`machine_plan` (which fits the calibration once) and its
parts each run :func:`machine_judge_run` on their topics, recording under the job itself.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import pandas as pd
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.db.models import Sum

from judging.machine import JUDGES
from judging.machine.base import JudgeError, Pair, Scale, Verdict
from judging.machine.calibration import Calibration, fit, topic_z
from judging.machine.injection import instruction_signs
from judging.machine_endpoints import endpoint_choices, given_config, judge_instance, merged_config
from judging.models import Judgment, MachineJudge, MachineVerdict
from judging.policies import HUMAN
from judging.qrels import qrels
from pooling.models import Pool, PoolEntry
from workbench.jobs.lifecycle import check_start_rate
from workbench.models import Collection, Document, Job

__all__ = ["FLAGGED", "MachineJobCancelled", "MachineRunSummary", "endpoint_choices", "judge_instance",
           "machine_job_cancelled", "machine_job_line", "machine_job_start", "machine_judge_ensure", "machine_judge_run",
           "machine_plan", "scale_of"]

#: how often (verdicts) the job looks for a cancel and reports progress (that also at least every 10% of its pairs)
REPORT_EVERY = 10
#: how a verdict left to the humans begins its line (the document's text reads as instructions to a judge)
FLAGGED = "flagged for humans:"
#: failures a job's summary lists (in the pool's topic order)
MAX_FAILURES = 20


class MachineJobCancelled(Exception):
    """The organizer cancelled the job; what it judged so far stays."""


@dataclass(frozen=True)
class MachineRunSummary:
    judge: str
    pool: str
    pairs: int
    already: int
    judged: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    failures: list
    flagged: int = 0


def scale_of(collection: Collection) -> Scale:
    return Scale(grades=tuple(collection.grades), relevant_from=collection.relevant_from,
                 labels=collection.grade_labels, descriptions=collection.grade_descriptions,
                 guidelines=collection.guidelines)


def machine_judge_ensure(*, collection: Collection, name: str, kind: str, config: dict | None = None) -> MachineJudge:
    """The collection's machine judge of that name, created (with its user) the first time; a new
    configuration replaces the stored one (an ``endpoint`` replaces a ``base_url`` and the other way round).
    Anything that looks like a key is refused, never stored."""
    kind = JUDGES.parse(kind)
    config = given_config(config)
    scale = scale_of(collection)
    with transaction.atomic():
        judge = MachineJudge.objects.filter(collection=collection, name=name).first()
        if judge is None:
            judge_instance(kind, config, scale)  # checks the options before anything is stored
            username = f"machine:{collection.slug}:{name}"[:150]
            user = get_user_model().objects.create_user(username=username, password=None)
            return MachineJudge.objects.create(collection=collection, name=name, kind=kind, user=user, config=config)
        if judge.kind != kind:
            raise JudgeError(f"machine judge {name!r} is a {judge.kind} judge: choose another name for a {kind} judge")
        merged = merged_config(judge.config, config)
        judge_instance(kind, merged, scale)
        if merged != judge.config:
            judge.config = merged
            judge.save(update_fields=["config"])
        return judge


def _pool_pairs(pool: Pool) -> list[list[Pair]]:
    """The pool's (topic, document) pairs with their texts, per topic in judging order."""
    collection = pool.collection
    entries = list(PoolEntry.objects.filter(pool=pool).order_by("topic_id", "judging_order")
                   .values_list("topic_id", "docno"))
    topics = {t.pk: t for t in collection.topics.filter(pk__in={t for t, _ in entries})}
    docnos = {d for _, d in entries}
    texts = {}
    for docno, title, text in Document.objects.filter(collection=collection, docno__in=docnos).values_list(
            "docno", "title", "text").iterator(chunk_size=2000):
        texts[docno] = f"{title}\n{text}".strip() if title else text
    out: dict[int, list[Pair]] = {}
    for topic_id, docno in entries:
        topic = topics[topic_id]
        out.setdefault(topic_id, []).append(Pair(
            qid=topic.qid, docno=docno, query=topic.title or topic.description, text=texts.get(docno, ""),
            topic_description=topic.description, topic_narrative=topic.narrative))
    return list(out.values())


def _calibration(judge_row: MachineJudge, judge, topics: list[list[Pair]], job: Job | None) -> Calibration | None:
    """The embedding judge's calibration, fitted once per job on the humans' grades of the pool's pairs
    (``human`` qrels) and kept with the job, so that a resumed job grades as it began."""
    if not hasattr(judge, "topic_scores"):
        return None
    stored = (job.params or {}).get("calibration") if job is not None else None
    if stored:
        return Calibration(tuple(stored["coef"]), tuple(stored["grades"]), tuple(stored["thresholds"]),
                           stored["relevant_from"], stored.get("trained_on", 0))
    human = qrels(judge_row.collection, policy=HUMAN)
    grades = {(q, d): g for q, d, g in human.itertuples(index=False)}
    raw, z, labels = [], [], []
    for pairs in topics:
        judged = [i for i, p in enumerate(pairs) if (p.qid, p.docno) in grades]
        if not judged:
            continue
        scores = judge.topic_scores(pairs)
        zs = topic_z(scores, [0] * len(scores))
        raw += scores[judged].tolist()
        z += zs[judged].tolist()
        labels += [grades[(pairs[i].qid, pairs[i].docno)] for i in judged]
    scale = scale_of(judge_row.collection)
    calibration = fit(raw=raw, z=z, grades=labels, scale=scale.grades, relevant_from=scale.relevant_from)
    if job is not None:
        Job.objects.filter(pk=job.pk).update(params={**(job.params or {}), "calibration": calibration.as_dict()})
        job.params = {**(job.params or {}), "calibration": calibration.as_dict()}
    return calibration


def _flag(verdict: Verdict, sign: str) -> Verdict:
    """A verdict on a document whose text reads as instructions to a judge: no judgment, left to the humans (the
    grade the machine gave stays in its record, for the audit)."""
    said = f"; the machine said {verdict.grade}" if verdict.ok else f"; the machine failed: {verdict.error}"
    return dataclasses.replace(verdict, ok=False, error=f"{FLAGGED} the document's text reads as instructions to a "
                                                        f"judge ({sign!r}){said}"[:500])


def _record(judge_row: MachineJudge, verdict: Verdict, topic_id: int, provenance, job: Job | None) -> bool:
    """Write one verdict (and its judgment when it has a grade); False when the pair was already judged."""
    fields = {"judge": judge_row, "topic_id": topic_id, "docno": verdict.docno, "job": job, "ok": verdict.ok,
              "error": verdict.error, "model": provenance.model[:200], "model_version": provenance.model_version[:200],
              "endpoint_host": provenance.endpoint_host[:200],
              "prompt_hash": verdict.prompt_hash or provenance.prompt_hash,
              "raw_reply": verdict.raw_reply, "parsed_grade": verdict.grade, "score": verdict.score,
              "probability": verdict.probability, "latency_ms": verdict.latency_ms,
              "prompt_tokens": verdict.prompt_tokens, "completion_tokens": verdict.completion_tokens}
    try:
        with transaction.atomic():
            if verdict.ok:
                fields["judgment"] = Judgment.objects.create(
                    collection=judge_row.collection, topic_id=topic_id, docno=verdict.docno, grade=verdict.grade,
                    assessor=judge_row.user.username, user=judge_row.user, source=Judgment.Source.MACHINE)
            MachineVerdict.objects.create(**fields)
    except IntegrityError:  # another worker judged this pair first: nothing judged twice
        return False
    return True


def _pending(judge: MachineJudge, topics: list[list[Pair]], job: Job | None) -> set[tuple[str, str]]:
    """The pool's pairs this judge has not judged (nor failed on in this job)."""
    done = set(MachineVerdict.objects.filter(judge=judge, ok=True).values_list("topic__qid", "docno"))
    # a document left to the humans is not asked again: its text still reads as instructions
    done |= set(MachineVerdict.objects.filter(judge=judge, ok=False, error__startswith=FLAGGED)
                .values_list("topic__qid", "docno"))
    if job is not None:  # a pair that failed in this job is not asked again when the job resumes
        done |= set(MachineVerdict.objects.filter(judge=judge, job=job, ok=False).values_list("topic__qid", "docno"))
    return {(p.qid, p.docno) for pairs in topics for p in pairs} - done


class _Tally:
    """What the job did so far: the summary's counts and the progress line."""

    def __init__(self, total: int, already: int) -> None:
        self.total, self.already = total, already
        self.judged = self.failed = self.flagged = self.prompt = self.completion = 0
        self.failures: list[str] = []

    def add(self, verdict: Verdict, written: bool) -> None:
        if written:
            flagged = verdict.error.startswith(FLAGGED)
            self.judged += verdict.ok
            self.flagged += flagged
            self.failed += not verdict.ok and not flagged
            if not verdict.ok and len(self.failures) < MAX_FAILURES:
                self.failures.append(f"{verdict.qid} {verdict.docno}: {verdict.error}")
        self.prompt += verdict.prompt_tokens
        self.completion += verdict.completion_tokens

    @property
    def count(self) -> int:
        return self.judged + self.failed + self.flagged

    def line(self) -> str:
        flagged = f", {self.flagged} left to humans" if self.flagged else ""
        return (f"judged {self.already + self.judged} of {self.total} pairs ({self.failed} failed{flagged}); "
                f"{self.prompt + self.completion} tokens so far")


def _same_collection(judge: MachineJudge, pool: Pool) -> None:
    if pool.collection_id != judge.collection_id:
        raise JudgeError(f"pool {pool.name!r} is not a pool of collection {judge.collection.slug!r}")


def _only(topics: list[list[Pair]], qids: Iterable[str]) -> list[list[Pair]]:
    chosen = set(qids)
    return [pairs for pairs in topics if pairs[0].qid in chosen]


def _report(tally: _Tally, wanted: int, every: int, report, job: Job | None) -> None:
    """Progress every ``every`` verdicts (and at the end); a look for a cancel every ``REPORT_EVERY``."""
    last = tally.count == wanted
    if report is not None and (last or tally.count % every == 0):
        report(tally.line(), tally.already + tally.count, tally.total)
    if job is not None and (last or tally.count % REPORT_EVERY == 0) and _cancelled(job):
        raise MachineJobCancelled(f"cancelled: {tally.line()}; run it again to continue")


def machine_judge_run(*, judge: MachineJudge, pool: Pool, job: Job | None = None,
                      report: Callable[[str, int, int], None] | None = None,
                      topics: Iterable[str] | None = None) -> MachineRunSummary:
    """Judge every pair of ``pool`` (of its ``topics`` only, qids, when given: a part of a split job) not judged
    yet by this machine judge (see the module docstring). The calibration is the job's, fitted on all the
    pool's topics whichever are judged."""
    _same_collection(judge, pool)
    every = _pool_pairs(pool)
    mine = every if topics is None else _only(every, topics)
    wanted = _pending(judge, mine, job)
    tally = _Tally(sum(len(t) for t in mine), 0)
    tally.already = tally.total - len(wanted)
    if wanted:
        instance = judge_instance(judge.kind, judge.config, scale_of(judge.collection))
        calibration = _calibration(judge, instance, every, job)
        if calibration is not None:
            instance.calibration = calibration
        provenance = instance.provenance()
        topic_ids = dict(judge.collection.topics.filter(qid__in={q for q, _ in wanted}).values_list("qid", "pk"))
        signs = {(p.qid, p.docno): instruction_signs(p.text) for pairs in mine for p in pairs
                 if (p.qid, p.docno) in wanted}
        every_n = max(1, min(REPORT_EVERY, tally.total // 10))
        for verdict in instance.judge(mine, wanted):
            if verdict is None:  # a while without a verdict: the job says it is alive (a command has no heartbeat)
                if report is not None:
                    report(tally.line(), tally.already + tally.count, tally.total)
                continue
            if signs.get((verdict.qid, verdict.docno)):
                verdict = _flag(verdict, signs[(verdict.qid, verdict.docno)])
            tally.add(verdict, _record(judge, verdict, topic_ids[verdict.qid], provenance, job))
            _report(tally, len(wanted), every_n, report, job)
    return MachineRunSummary(judge.name, pool.name, tally.total, tally.already, tally.judged, tally.failed,
                             tally.prompt, tally.completion, tally.failures, tally.flagged)


def machine_plan(*, judge: MachineJudge, pool: Pool, job: Job) -> list[tuple[str, int]]:
    """The pool's topics that have pairs left to judge, (qid, pairs left) in judging order, for a job split by
    topic; the judge's calibration (if its kind has one) is fitted first, once, on all the pool's topics as one
    worker fits it, and kept with the job: every part grades with it."""
    _same_collection(judge, pool)
    topics = _pool_pairs(pool)
    wanted = _pending(judge, topics, job)
    left = [(pairs[0].qid, sum((p.qid, p.docno) in wanted for p in pairs)) for pairs in topics]
    left = [(qid, n) for qid, n in left if n]
    if len(left) > 1:
        _calibration(judge, judge_instance(judge.kind, judge.config, scale_of(judge.collection)), topics, job)
    return left


def machine_job_line(*, judge: MachineJudge, pool: Pool, job: Job) -> str:
    """The job's progress line (as :class:`_Tally` words it) from what is recorded: a split job's parts each
    know only their own."""
    pairs = set(PoolEntry.objects.filter(pool=pool).values_list("topic__qid", "docno"))
    ok = set(MachineVerdict.objects.filter(judge=judge, ok=True).values_list("topic__qid", "docno")) & pairs
    failed = (set(MachineVerdict.objects.filter(judge=judge, job=job, ok=False).values_list("topic__qid", "docno"))
              & pairs) - ok
    tokens = MachineVerdict.objects.filter(judge=judge, job=job).aggregate(
        p=Sum("prompt_tokens", default=0), c=Sum("completion_tokens", default=0))
    return (f"judged {len(ok | failed)} of {len(pairs)} pairs ({len(failed)} failed); {tokens['p'] + tokens['c']} "
            f"tokens so far")


def machine_job_cancelled(job: Job) -> bool:
    """Whether the organizer cancelled the job (a part asks about its job)."""
    return _cancelled(job)


def _cancelled(job: Job) -> bool:
    return bool((Job.objects.filter(pk=job.pk).values_list("params", flat=True).first() or {}).get("cancel"))


def machine_job_cancel(*, job: Job) -> None:
    """Ask a running machine-judge job to stop (it stops at its next report; what it judged stays)."""
    with transaction.atomic():
        row = Job.objects.select_for_update().get(pk=job.pk)
        row.params = {**(row.params or {}), "cancel": True}
        row.save(update_fields=["params"])


def verdict_frame(judge: MachineJudge) -> pd.DataFrame:
    """The judge's successful verdicts: qid, docno, grade, score, probability."""
    rows = MachineVerdict.objects.filter(judge=judge, ok=True).values_list(
        "topic__qid", "docno", "parsed_grade", "score", "probability")
    return pd.DataFrame.from_records(list(rows), columns=["qid", "docno", "grade", "score", "probability"])


MACHINE_JOB = "machine judge"


def machine_job_for(*, judge: MachineJudge, pool: Pool, user=None) -> tuple[Job, bool]:
    """The job that judges ``pool`` with ``judge``: the unfinished one (a worker died, or it was cancelled)
    to resume, else a new one. Returns (job, resumed)."""
    unfinished = (Job.objects.filter(kind=MACHINE_JOB, collection=judge.collection, params__judge_id=judge.pk,
                                     params__pool_id=pool.pk).exclude(status=Job.Status.DONE).order_by("-id").first())
    if unfinished is not None:
        # a split job is planned again: its old parts go (their verdicts name the job itself, and stay)
        params = {k: v for k, v in unfinished.params.items() if k not in ("cancel", "join", "joining", "on_failed")}
        unfinished.parts.all().delete()
        Job.objects.filter(pk=unfinished.pk).update(params=params, status=Job.Status.QUEUED, error="")
        unfinished.refresh_from_db()
        return unfinished, True
    return Job.objects.create(kind=MACHINE_JOB, collection=judge.collection, started_by=user,
                              params={"judge_id": judge.pk, "pool_id": pool.pk, "judge": judge.name,
                                      "pool": pool.name}), False


def machine_job_start(*, judge: MachineJudge, pool: Pool, user, task) -> tuple[Job, bool]:
    """Start (or resume) the job as every job starts (``workbench.jobs.lifecycle.job_start``): the person's start limit
    (``JOB_STARTS_PER_MINUTE``) checked, ``task`` queued and its id kept with the job, so that the worker's
    heartbeat covers it. Returns (job, resumed)."""
    check_start_rate(user)
    job, resumed = machine_job_for(judge=judge, pool=pool,
                                   user=user if user is not None and user.is_authenticated else None)
    result = task.enqueue(job.pk)
    Job.objects.filter(pk=job.pk).update(task_id=str(result.id)[:64])
    job.refresh_from_db()
    return job, resumed


def machine_verdict_record(*, judge: MachineJudge, verdict: Verdict, topic_id: int, provenance, sign: str = "") -> bool:
    """Record a verdict given outside a job (labels pushed over the API, ``judging.machine_labels``) as a job
    records its own: the judgment and its provenance in one transaction; False when the pair was judged already.
    ``sign``: the phrase of the document's text that reads as instructions to a judge (``instruction_signs``):
    then, as in a job, no judgment: the verdict is flagged and the pair left to the humans."""
    return _record(judge, _flag(verdict, sign) if sign else verdict, topic_id, provenance, None)

"""Judging's background jobs: importing uploaded qrels, a machine assessor judging a pool (split by topic into
parts any worker claims with ``JOB_PARTS`` > 1), importing a dataset (run by ``manage.py db_worker``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django_tasks import task

from judging import machine_agreement
from judging.machine_import import FLAGGED_SAID, machine_labels_import
from judging.machine_services import (
    MAX_FAILURES,
    MachineJobCancelled,
    MachineRunSummary,
    machine_job_cancelled,
    machine_job_line,
    machine_judge_run,
    machine_plan,
)
from judging.models import MachineJudge
from judging.services import qrels_import
from pooling.models import Pool
from workbench.collections import uploads
from workbench.jobs import lifecycle as jobs
from workbench.jobs import subjobs
from workbench.jobs.kinds import JobKind
from workbench.models import Job
from workbench.tasks import staged


@task()
def import_qrels(job_id: int) -> None:
    with jobs.running(job_id) as progress, staged(progress) as files:
        job = progress.job
        lines = []
        for path in files:
            progress.step(f"reading {path.name}")
            summary = qrels_import(collection=job.collection, source=path, assessor=job.params.get("assessor") or None)
            lines.append(f"{path.name}: {summary.created} judgments on {summary.topics} topics as assessor "
                         f"{summary.assessor!r}" + (f", {summary.revised} revised" if summary.revised else "")
                         + (f", {summary.unchanged} unchanged" if summary.unchanged else ""))
        progress.finish(lines=lines)


uploads.register(uploads.UploadKind(
    "qrels", "Qrels (earlier judgments)", import_qrels, options=("assessor",),
    help="TREC qrels (qid iteration docno grade), e.g. from an earlier round; recorded as that assessor's."))


@task()
def import_machine_labels(job_id: int) -> None:
    """A machine judge's labels made elsewhere (``judging.machine_import``); the judge is the assessor named,
    else the file's name."""
    with jobs.running(job_id) as progress, staged(progress) as files:
        path = next(iter(files))
        progress.step(f"reading {path.name}")
        judge = progress.job.params.get("assessor") or files.name(path).rsplit(".", 1)[0]
        s = machine_labels_import(collection=progress.job.collection, source=path, judge=judge)
        progress.finish(lines=[f"{files.name(path)}: {s.recorded} labels ({s.format}) on {s.topics} topics as machine "
                               f"judge {s.judge!r}" + (f", {s.already} already judged, kept" if s.already else "")
                               + (f", {s.flagged} {FLAGGED_SAID}" if s.flagged else "")])


uploads.register(uploads.UploadKind(
    "machine_labels", "Machine labels (a judge's qrels or probabilities)", import_machine_labels,
    options=("assessor",),
    help="TREC qrels (e.g. UMBRELA's output) or a CSV with a header, topic_id,doc_id,annotation,prob_yes,prob_no "
         "or topic_id,doc_id,prob_0,...,prob_k: recorded as the judgments of the machine judge named in Assessor "
         "(default: the file's name), with the file's sha256."))


@task()
def machine_judge(job_id: int) -> None:
    """A machine assessor judges a pool (``judging.machine_services.machine_judge_run``); resumable. With
    ``JOB_PARTS`` > 1 and at least two topics with pairs left, the pool's topics are split into ``JOB_PARTS``
    slices balanced by pairs left, each judged by a part any worker claims (:func:`machine_judge_part`),
    joined by :func:`join_machine_judge`; the calibration is fitted once, here, and every part grades with it."""
    machine_judge_now(job_id)


def machine_judge_now(job_id: int, watch: Callable[[str, int, int], None] | None = None) -> None:
    """What :func:`machine_judge` does, in this process; ``watch(line, done, total)`` also hears each progress
    report (``manage.py machine_judge`` shows them)."""
    if _split(job_id):
        return
    with jobs.running(job_id) as progress:
        judge, pool = _judge_and_pool(progress.job)
        progress.step(f"machine judge {judge.name} on pool {pool.name}: reading the pool")

        def report(text: str, done: int, total: int) -> None:
            progress.step(text, done=done, total=total)
            if watch is not None:
                watch(text, done, total)
        summary = machine_judge_run(judge=judge, pool=pool, job=progress.job, report=report)
        progress.finish(lines=_lines(judge, pool, summary))


def _judge_and_pool(job: Job) -> tuple[MachineJudge, Pool]:
    judge = MachineJudge.objects.select_related("collection", "user").get(pk=job.params["judge_id"])
    return judge, Pool.objects.get(pk=job.params["pool_id"])


def _lines(judge: MachineJudge, pool: Pool, summary: MachineRunSummary) -> list[str]:
    flagged = f", {summary.flagged} left to humans (text that reads as instructions)" if summary.flagged else ""
    return [f"{summary.judged} pairs judged by {judge.name} on pool {pool.name} ({summary.already} already "
            f"judged, {summary.failed} failed{flagged}); {summary.prompt_tokens + summary.completion_tokens} tokens",
            *summary.failures]


def _split(job_id: int) -> bool:
    """Plan the job in parts (True) if ``JOB_PARTS`` asks for it and there are two topics or more to judge; else
    (or if planning fails: one worker then says why) it runs in one worker."""
    shares = int(getattr(settings, "JOB_PARTS", 1) or 1)
    if shares < 2:
        return False
    now = timezone.now()  # running while it plans (fitting the calibration may take a while)
    Job.objects.filter(pk=job_id).update(status=Job.Status.RUNNING, started_at=now, heartbeat_at=now,
                                         step="planning the parts (fitting the calibration, if any)")
    job = Job.objects.get(pk=job_id)
    judge, pool = _judge_and_pool(job)
    try:
        left = machine_plan(judge=judge, pool=pool, job=job)
    except Exception:  # noqa: BLE001 - one worker runs it and fails with one line saying why
        return False
    if len(left) < 2:
        return False
    slices = subjobs.balanced([n for _, n in left], shares)
    subjobs.split(job_id, task=machine_judge_part, join=join_machine_judge,
                  parts=[{"topics": [qid for qid, _ in left[start:stop]]} for start, stop in slices])
    return True


@task(takes_context=True)
def machine_judge_part(context, job_id: int) -> None:
    """One part of a split machine-judge job: the pairs of its topics, recorded under the job itself (so that
    a resumed job, or a part done again after its worker died, skips what was judged); it stops when the job is
    cancelled, and the job then ends as one worker's cancelled job does."""
    if not Job.objects.filter(pk=job_id).exists():  # a part of a job planned again (resumed): gone
        return
    with subjobs.part(job_id, context) as progress:
        if progress is None:
            return
        part, parent = progress.job, progress.job.parent
        judge, pool = _judge_and_pool(parent)
        where = f"part {part.params['part'] + 1} of {parent.total}"
        progress.step(f"{where}: machine judge {judge.name} on {len(part.params['topics'])} topics of pool {pool.name}")
        try:
            if machine_job_cancelled(parent):
                raise MachineJobCancelled("cancelled")
            summary = machine_judge_run(
                judge=judge, pool=pool, job=parent, topics=part.params["topics"],
                report=lambda text, done, total: progress.step(f"{where}: {text}", done=done, total=total))
        except MachineJobCancelled:
            _cancel(parent, f"cancelled: {machine_job_line(judge=judge, pool=pool, job=parent)}; "
                            f"run it again to continue")
            raise
        subjobs.keep(progress, dataclasses.asdict(summary))


def _cancel(job: Job, error: str) -> None:
    """The split job fails as one worker's cancelled job does (the first part to stop says it; its others stop)."""
    with transaction.atomic():
        row = Job.objects.select_for_update().get(pk=job.pk)
        if not row.finished:
            row.status, row.error, row.finished_at = Job.Status.FAILED, error[:2000], timezone.now()
            row.save(update_fields=["status", "error", "finished_at"])


@task(takes_context=True)
def join_machine_judge(context, job_id: int) -> None:
    """The summary of a split machine-judge job from its parts': the lines one worker writes."""
    job = Job.objects.get(pk=job_id)
    if job.finished or subjobs.superseded(job, context):
        return
    with jobs.running(job_id) as progress:
        judge, pool = _judge_and_pool(progress.job)
        progress.step("joining the parts' tallies")
        parts = [MachineRunSummary(**found) for found in subjobs.outputs(progress.job)]
        failures = [line for found in parts for line in found.failures][:MAX_FAILURES]
        summary = MachineRunSummary(judge.name, pool.name, *(sum(getattr(p, name) for p in parts) for name in (
            "pairs", "already", "judged", "failed", "prompt_tokens", "completion_tokens")), failures,
            sum(p.flagged for p in parts))
        progress.finish(lines=_lines(judge, pool, summary))




@task()
def import_dataset(job_id: int) -> None:
    """A collection's topics, qrels and corpus (by reference) from irds:ID or a BEIR folder (``judging.datasets``)."""
    from judging.datasets import dataset_import

    with jobs.running(job_id) as progress:
        params = progress.job.params
        read = 0

        def advance(n: int) -> None:
            nonlocal read
            read += n
            progress.step(f"indexed {read:,} documents of the corpus", done=read)

        progress.step(f"reading {params['location']}")
        summary = dataset_import(collection=progress.job.collection, location=params["location"],
                                 split=params.get("split") or "test", progress=advance)
        progress.finish(lines=[f"{params['location']}: {summary.topics} topics and {summary.judgments} judgments "
                               f"imported; corpus {summary.reference.location} by reference "
                               f"({summary.documents:,} documents)"])


@task()
def machine_agreement_job(job_id: int) -> None:
    """A machine judge's agreement with the humans (``judging.machine_agreement``), kept in the job's result for
    its page."""
    with jobs.running(job_id) as progress:
        result = machine_agreement.store_agreement(progress)
        job = progress.job
        progress.finish(**result, url=reverse("judging:machine_agreement", args=[job.collection.slug,
                                                                                 job.params["name"]]),
                        label="See the agreement")


#: this app's jobs (registered by workbench.jobs.kinds.autodiscover)
JOB_KINDS = (
    JobKind("qrels import", "Qrels import", import_qrels, params=("directory", "assessor"),
            help="Reads uploaded qrels as one assessor's judgments."),
    JobKind("machine labels import", "Machine labels import", import_machine_labels, params=("directory", "assessor"),
            help="Reads a machine judge's labels made elsewhere (qrels or probability CSVs) as its judgments."),
    JobKind("machine judge", "Machine judge", machine_judge, part=machine_judge_part, join=join_machine_judge,
            params=("judge_id", "pool_id"), help="A machine assessor judges a pool; resumable, split by topic."),
    JobKind("dataset import", "Dataset import", import_dataset, params=("location", "split"),
            help="A collection's topics, qrels and corpus (by reference) from irds:ID or a BEIR folder."),
    JobKind(machine_agreement.KIND, "Machine agreement", machine_agreement_job, params=("judge", "name"),
            help="How far a machine judge agrees with the humans: kappa, AUC, the run rankings under both qrels."),
)

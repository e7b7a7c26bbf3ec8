"""Judging's background jobs: importing uploaded qrels, a machine assessor judging a pool (run by
``manage.py db_worker``)."""

from __future__ import annotations

from django_tasks import task

from judging.machine_services import machine_judge_run
from judging.models import MachineJudge
from judging.services import qrels_import
from pooling.models import Pool
from workbench import jobs, uploads
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
def machine_judge(job_id: int) -> None:
    """A machine assessor judges a pool (``judging.machine_services.machine_judge_run``); resumable."""
    with jobs.running(job_id) as progress:
        job = progress.job
        judge = MachineJudge.objects.select_related("collection", "user").get(pk=job.params["judge_id"])
        pool = Pool.objects.get(pk=job.params["pool_id"])
        progress.step(f"machine judge {judge.name} on pool {pool.name}: reading the pool")
        summary = machine_judge_run(judge=judge, pool=pool, job=job,
                                    report=lambda text, done, total: progress.step(text, done=done, total=total))
        lines = [f"{summary.judged} pairs judged by {judge.name} on pool {pool.name} ({summary.already} already "
                 f"judged, {summary.failed} failed); {summary.prompt_tokens + summary.completion_tokens} tokens",
                 *summary.failures]
        progress.finish(lines=lines)


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

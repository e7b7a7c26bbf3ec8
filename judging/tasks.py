"""Judging's background jobs: importing uploaded qrels (run by ``manage.py db_worker``)."""

from __future__ import annotations

from django_tasks import task

from judging.services import qrels_import
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

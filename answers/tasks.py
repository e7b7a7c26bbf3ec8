"""The answers app's background jobs: importing uploaded answer runs, nugget banks and nugget assignments
(the console's upload form and the API's upload endpoint offer each, ``workbench.collections.uploads``)."""

from __future__ import annotations

from django_tasks import task

from answers.banks_tasks import JOB_KINDS as BANK_JOB_KINDS
from answers.imports import answers_import
from answers.imports_nuggets import assignments_import, nuggets_import
from answers.judging_tasks import JOB_KINDS as JUDGING_JOB_KINDS
from workbench.collections import uploads
from workbench.formats import limits
from workbench.jobs import lifecycle as jobs
from workbench.jobs.kinds import JobKind
from workbench.tasks import staged

MAX_PROBLEMS = 50


@task()
def import_answers(job_id: int) -> None:
    """Uploaded answer runs, all or none (``answers.imports.answers_import``)."""
    with jobs.running(job_id) as progress, staged(progress, archives=True, kind="runs") as files:
        job, params = progress.job, progress.job.params
        paths = list(files)
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            progress.step(f"{'checked' if done <= len(paths) else 'stored'} {min(done, len(paths))} of "
                          f"{len(paths)} answer files", done=done)

        progress.step(f"checking {len(paths)} answer files", done=0, total=2 * len(paths))
        imported = answers_import(collection=job.collection, sources=paths, names=[files.name(p) for p in paths],
                                  replace=bool(params.get("replace")), contributes=params.get("contributes", True),
                                  description=params.get("description") or "", max_problems=MAX_PROBLEMS,
                                  progress=advance)
        progress.finish(lines=[f"answer run {item.run.tag!r}: {item.run.num_topics} topics, "
                               f"{item.run.num_sentences} sentences, {item.run.num_citations} citations"
                               + (" (replaced)" if item.replaced else "") for item in imported])


@task()
def import_nuggets(job_id: int) -> None:
    with jobs.running(job_id) as progress, staged(progress) as files:
        lines = []
        for path in files:
            progress.step(f"reading {files.name(path)}")
            s = nuggets_import(collection=progress.job.collection, source=path, name=files.name(path),
                               user=progress.job.started_by, max_problems=MAX_PROBLEMS)
            lines.append(f"{files.name(path)}: {s.versions} new bank versions ({s.nuggets} nuggets), "
                         f"{s.unchanged} unchanged")
        progress.finish(lines=lines)


@task()
def import_assignments(job_id: int) -> None:
    with jobs.running(job_id) as progress, staged(progress) as files:
        lines = []
        for path in files:
            progress.step(f"reading {files.name(path)}")
            s = assignments_import(collection=progress.job.collection, source=path, name=files.name(path),
                                   assessor=progress.job.params.get("assessor") or None, max_problems=MAX_PROBLEMS)
            lines.append(f"{files.name(path)}: {s.created} nugget assignments on {s.answers} answers as "
                         f"{s.assessor!r}" + (f", {s.revised} revised" if s.revised else "")
                         + (f", {s.unchanged} unchanged" if s.unchanged else ""))
        progress.finish(lines=lines)


uploads.register(uploads.UploadKind(
    "answers", "Answer runs", import_answers, multiple=True, archives=True,
    options=("contributes", "description", "replace"),
    help="TREC RAG / AutoJudge answer runs in JSON lines (metadata, responses or answer with citations, "
         "references), one run per file; several at once; all or none are imported. " + limits.stated("runs")))
uploads.register(uploads.UploadKind(
    "nuggets", "Nugget banks", import_nuggets,
    help='nuggetizer\'s JSON lines, one topic a line: {"qid", "query", "nuggets": [{"text", "importance"}]}; '
         "each changed topic gets a new bank version."))
uploads.register(uploads.UploadKind(
    "nugget_assignments", "Nugget assignments", import_assignments, options=("assessor",),
    help='nuggetizer\'s assign output: {"qid", "run_id", "nuggets": [{"text", "importance", "assignment"}]} '
         "per line, against each topic's current bank; recorded as the assessor's (default: the file's name)."))

JOB_KINDS = (
    JobKind("answer runs import", "Answer runs import", import_answers, retry=True, params=("directory",),
            help="Reads uploaded answer runs (JSON lines), all or none."),
    JobKind("nugget banks import", "Nugget banks import", import_nuggets, retry=True, params=("directory",),
            help="Reads nuggetizer nugget banks: a new bank version per changed topic."),
    JobKind("nugget assignments import", "Nugget assignments import", import_assignments, retry=True,
            params=("directory", "assessor"), help="Reads nuggetizer's assign output as one assessor's assignments."),
) + BANK_JOB_KINDS + JUDGING_JOB_KINDS

"""The workbench's background jobs: imports of uploaded topics, documents and runs (run by
``manage.py db_worker``; see ``workbench.jobs`` and ``workbench.uploads``)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

from django_tasks import task

from workbench import jobs, uploads
from workbench.formats.catalog import formats_help
from workbench.services import ImportRefused, RunSpec, documents_import, runs_import, topics_import


@contextlib.contextmanager
def staged(progress: jobs.Progress) -> Iterator[list[Path]]:
    """The job's uploaded files; problems name them as the user did; the files are removed afterwards."""
    directory = progress.job.params["directory"]
    try:
        yield uploads.staged_files(directory)
    except ImportRefused as exc:
        raise uploads.relative_problems(exc, directory) from None
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _line(summary, noun: str) -> str:
    return f"{summary.created} {noun} added" + (f", {summary.updated} updated" if summary.updated else "")


@task()
def import_topics(job_id: int) -> None:
    with jobs.running(job_id) as progress, staged(progress) as files:
        job = progress.job
        lines = []
        for path in files:
            progress.step(f"reading {path.name}")
            summary = topics_import(collection=job.collection, source=path, replace=job.params.get("replace", False))
            lines.append(f"{path.name}: {_line(summary, 'topics')}")
        progress.finish(lines=lines)


@task()
def import_documents(job_id: int) -> None:
    with jobs.running(job_id) as progress, staged(progress) as files:
        job = progress.job
        read = 0

        def advance(n: int) -> None:
            nonlocal read
            read += n
            progress.step(f"read and checked {read:,} documents", done=read)

        progress.step(f"reading {len(files)} file(s)")
        summary = documents_import(collection=job.collection, sources=files,
                                   replace=job.params.get("replace", False), progress=advance)
        progress.finish(lines=[_line(summary, "documents")])


@task()
def import_runs(job_id: int) -> None:
    with jobs.running(job_id) as progress, staged(progress) as files:
        job, params = progress.job, progress.job.params
        specs = [RunSpec(source=path, team=params.get("team", ""), description=params.get("description", ""),
                         contributes=params.get("contributes", True), pool_priority=params.get("pool_priority") or 1)
                 for path in files]
        progress.step("checking the run files", done=0, total=2 * len(specs))
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            progress.step("checking the run files" if done <= len(specs) else "storing the runs", done=done)

        imported = runs_import(collection=job.collection, specs=specs, replace=params.get("replace", False),
                               max_problems=1000, progress=advance)
        lines = [f"run {i.run.tag}: {i.run.num_entries:,} lines on {i.run.num_topics} topics"
                 + (" (contributes to the pool)" if i.run.contributes else " (does not contribute)") for i in imported]
        warnings = [w for i in imported for w in i.warnings]
        progress.finish(lines=lines, warnings=warnings[:1000])


uploads.register(uploads.UploadKind(
    "topics", "Topics", import_topics, options=("replace",),
    help=f"{formats_help('topics')}."))
uploads.register(uploads.UploadKind(
    "documents", "Documents", import_documents, multiple=True, options=("replace",),
    help=f"{formats_help('documents')}; several files at once, plain or .gz."))
uploads.register(uploads.UploadKind(
    "runs", "Runs", import_runs, multiple=True,
    options=("contributes", "team", "pool_priority", "description", "replace"),
    help="TREC run files (qid Q0 docno rank score tag); several at once; all or none are imported."))

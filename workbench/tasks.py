"""The workbench's background jobs: imports of uploaded topics, documents and runs (run by
``manage.py db_worker``; see ``workbench.jobs`` and ``workbench.uploads``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from django_tasks import task

from workbench import files as store
from workbench import jobs, uploads
from workbench.formats import FormatError, limits
from workbench.formats.catalog import formats_help
from workbench.formats.manifest import read_manifest
from workbench.services import ImportRefused, RunSpec, documents_import, runs_import, topics_import


@contextlib.contextmanager
def staged(progress: jobs.Progress, *, archives: bool = False) -> Iterator[uploads.Staged]:
    """The job's uploaded files (archives unpacked with ``archives``), as a local folder of this worker
    (``workbench.files.local_copy``: the stored files themselves on a local disk, a download from S3);
    every problem names them as the user did (``BERT.gz:54``, ``runs.tar.gz:alpha.run:12``), never by their
    staged path; the files are removed when the job ends, whether it succeeds or fails."""
    prefix = uploads.staged_prefix(progress.job.params.get("directory"))
    try:
        if not prefix or not store.list_tree(prefix):
            raise ImportRefused(["the uploaded files are gone (the job ran before, or they were removed)"])
        with store.local_copy(prefix) as directory:
            files = uploads.Staged(directory, [], {})
            try:
                if archives:
                    progress.step("unpacking the archives, if any")
                files = uploads.open_staged(directory, archives=archives)
                yield files
            except (ImportRefused, FormatError) as exc:
                raise files.refused(exc) from None
            except OSError as exc:  # a disk error names the staged path: the user's name instead
                raise files.refused(exc) from exc
    finally:
        store.delete_tree(prefix)


def _line(summary, noun: str) -> str:
    return f"{summary.created} {noun} added" + (f", {summary.updated} updated" if summary.updated else "")


@task()
def import_topics(job_id: int) -> None:
    with jobs.running(job_id) as progress, staged(progress) as files:
        job = progress.job
        lines = []
        for path in files:
            progress.step(f"reading {files.name(path)}")
            summary = topics_import(collection=job.collection, source=path, replace=job.params.get("replace", False))
            lines.append(f"{files.name(path)}: {_line(summary, 'topics')}")
        progress.finish(lines=lines)


@task()
def import_documents(job_id: int) -> None:
    with jobs.running(job_id) as progress, staged(progress, archives=True) as files:
        job = progress.job
        read = 0

        def advance(n: int) -> None:
            nonlocal read
            read += n
            progress.step(f"read and checked {read:,} documents", done=read)

        progress.step(f"reading {len(files)} file(s)")
        summary = documents_import(collection=job.collection, sources=list(files),
                                   replace=job.params.get("replace", False), progress=advance)
        progress.finish(lines=[_line(summary, "documents")])


def _manifest(files: uploads.Staged) -> tuple[dict | None, str]:
    if files.manifest is None:
        return None, "manifest"
    name = files.name(files.manifest)
    try:
        return read_manifest(files.manifest, name=name), name
    except FormatError as exc:
        raise ImportRefused(exc.problems) from None


def _run_line(imported) -> str:
    run = imported.run
    said = [f"team {run.team}" if run.team else "no team", f"priority {run.pool_priority}"]
    if run.run_type:
        said.append(run.run_type)
    return (f"run {run.tag}: {run.num_entries:,} lines on {run.num_topics} topics ("
            + ("offered to the pool" if run.contributes else "not offered to the pool") + f"); {', '.join(said)}")


@task()
def import_runs(job_id: int) -> None:
    with jobs.running(job_id) as progress, staged(progress, archives=True) as files:
        job, params = progress.job, progress.job.params
        manifest, manifest_name = _manifest(files)
        specs = [RunSpec(source=path, name=files.name(path), team=params.get("team") or "",
                         description=params.get("description") or "", contributes=params.get("contributes", True),
                         pool_priority=params.get("pool_priority") or 1)
                 for path in files]
        progress.step(f"checking {len(specs)} run files", done=0, total=2 * len(specs))
        done = 0

        def advance(n: int) -> None:
            nonlocal done
            done += n
            progress.step(f"checking {len(specs)} run files" if done <= len(specs) else "storing the runs",
                          done=done)

        imported = runs_import(collection=job.collection, specs=specs, replace=params.get("replace", False),
                               max_problems=1000, progress=advance, manifest=manifest, manifest_name=manifest_name)
        warnings = [files.rename(w) for i in imported for w in i.warnings]
        progress.finish(lines=[_run_line(i) for i in imported], warnings=warnings[:1000])


uploads.register(uploads.UploadKind(
    "topics", "Topics", import_topics, options=("replace",),
    help=f"{formats_help('topics')}. {limits.stated('topics')}"))
uploads.register(uploads.UploadKind(
    "documents", "Documents", import_documents, multiple=True, options=("replace",), archives=True,
    help=f"{formats_help('documents')}; several files at once, plain or .gz. {limits.stated('documents')}"))
uploads.register(uploads.UploadKind(
    "runs", "Runs", import_runs, multiple=True, archives=True,
    options=("manifest", "contributes", "team", "pool_priority", "description", "replace"),
    help="TREC run files (qid Q0 docno rank score tag); several at once; all or none are imported. "
         + limits.stated("runs")))


# each import reads its staged files and writes in one transaction: a job whose worker died is retried once
for _task in (import_topics, import_documents, import_runs):
    jobs.recovery(_task, retry=True)


@task()
def find_duplicates(job_id: int) -> None:
    """Near-duplicate classes of the collection's documents (``workbench.duplicates.duplicates_detect``)."""
    from workbench.duplicates import duplicates_detect

    with jobs.running(job_id) as progress:
        job = progress.job
        total = job.collection.documents.count()
        progress.step(f"reading {total:,} documents", done=0, total=total)
        summary = duplicates_detect(
            collection=job.collection, threshold=job.params.get("threshold", 0.7),
            shingle=job.params.get("shingle", 3),
            progress=lambda n: progress.step(f"signatures of {n:,} of {total:,} documents", done=n))
        members = sum(len(c.members) for c in summary.classes)
        progress.finish(lines=[f"{summary.documents:,} documents read: {len(summary.classes):,} classes proposed "
                               f"({members:,} documents that need not be judged on their own)"]
                        + ([f"{summary.kept:,} classes already decided were kept"] if summary.kept else []))


@task()
def index_corpus(job_id: int) -> None:
    """Index a corpus used by reference (``workbench.corpus.corpus_reference_index``)."""
    from workbench.corpus import corpus_reference_index
    from workbench.models import CorpusReference

    with jobs.running(job_id) as progress:
        reference = CorpusReference.objects.get(pk=progress.job.params["reference"])
        read = 0

        def advance(n: int) -> None:
            nonlocal read
            read += n
            progress.step(f"indexed {read:,} documents", done=read)

        progress.step(f"reading {reference.location}")
        count = corpus_reference_index(reference=reference, progress=advance)
        progress.finish(lines=[f"{reference.location}: {count:,} documents indexed ({reference.format}); their "
                               "text is copied in when they are pooled or opened"])


jobs.recovery(index_corpus, retry=True)

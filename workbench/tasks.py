"""The workbench's background jobs: imports of uploaded topics, documents and runs (run by
``manage.py db_worker``; see ``workbench.jobs.lifecycle`` and ``workbench.collections.uploads``). An import of many run files is split
into parts any worker claims with ``JOB_PARTS`` > 1 (``workbench.jobs.subjobs``; :func:`import_runs`); so is the
near-duplicate detection (``workbench.corpora.duplicate_tasks``, its ``find_duplicates`` job re-exported here)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path

from django.conf import settings
from django_tasks import task

from workbench.collections import files as store
from workbench.collections import uploads
from workbench.collections.run_imports import (
    checked_bytes,
    checked_runs,
    runs_adopt,
    runs_check,
    runs_settle,
    runs_stage,
)
from workbench.collections.services import (
    ImportRefused,
    RunSpec,
    documents_import,
    runs_import,
    topics_import,
)
from workbench.corpora.duplicate_tasks import duplicates_part, find_duplicates, join_duplicates
from workbench.formats import FormatError, limits
from workbench.formats.catalog import formats_help
from workbench.formats.manifest import read_manifest
from workbench.jobs import lifecycle as jobs
from workbench.jobs import subjobs
from workbench.jobs.kinds import JobKind
from workbench.jobs.lifecycle import MAX_PROBLEMS
from workbench.models import Collection, Job


@contextlib.contextmanager
def staged(progress: jobs.Progress, *, archives: bool = False, kind: str = "other") -> Iterator[uploads.Staged]:
    """The job's uploaded files (archives unpacked with ``archives``, within the limits of ``kind``), as a
    local folder of this worker (``workbench.collections.files.local_copy``: the stored files themselves on a local disk, a download from S3);
    every problem names them as the user did (``BERT.gz:54``, ``runs.tar.gz:alpha.run:12``), never by their
    staged path; the files are removed when the job ends, whether it succeeds or fails."""
    prefix = uploads.staged_prefix(progress.job.params.get("directory"))
    try:
        if not prefix or not store.list_tree(prefix):
            raise ImportRefused([uploads.GONE])
        with store.local_copy(prefix) as directory:
            files = uploads.Staged(directory, [], {})
            try:
                if archives:
                    progress.step("unpacking the archives, if any")
                files = uploads.open_staged(directory, archives=archives, kind=kind)
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
    with jobs.running(job_id) as progress, staged(progress, archives=True, kind="documents") as files:
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


def _specs(files: uploads.Staged, params: dict) -> list[RunSpec]:
    """The job's run files with the upload's defaults (team, description, contribution, priority)."""
    return [RunSpec(source=path, name=files.name(path), team=params.get("team") or "",
                    description=params.get("description") or "", contributes=params.get("contributes", True),
                    pool_priority=params.get("pool_priority") or 1)
            for path in files]


def _advancing(progress: jobs.Progress, files: int, done: int = 0):
    """``progress`` of checking ``files`` run files (1 after each), then of storing them."""

    def advance(n: int) -> None:
        nonlocal done
        done += n
        progress.step(f"checking {files} run files" if done <= files else "storing the runs", done=done)

    return advance


def _finish_runs(progress: jobs.Progress, imported: list, rename=str) -> None:
    warnings = [rename(w) for i in imported for w in i.warnings]
    progress.finish(lines=[_run_line(i) for i in imported], warnings=warnings[:1000])


@task()
def import_runs(job_id: int) -> None:
    """Import the uploaded run files, all or none. With ``JOB_PARTS`` > 1 and at least two files a part (no
    archive among them) the files are split into parts any worker claims (:func:`_run_slices`): each part reads,
    checks and encodes its own files (:func:`import_runs_part`), and :func:`join_runs_import` stores them all."""
    job = Job.objects.get(pk=job_id)
    slices = _run_slices(job)
    if slices or job.parts.exists():  # split (a planner retried after it split keeps its parts)
        subjobs.split(job_id, task=import_runs_part, parts=slices, join=join_runs_import, on_failed=_discard_upload)
        return
    with jobs.running(job_id) as progress, staged(progress, archives=True, kind="runs") as files:
        job, params = progress.job, progress.job.params
        manifest, manifest_name = _manifest(files)
        specs = _specs(files, params)
        progress.step(f"checking {len(specs)} run files", done=0, total=2 * len(specs))
        imported = runs_import(collection=job.collection, specs=specs, replace=params.get("replace", False),
                               max_problems=MAX_PROBLEMS, progress=_advancing(progress, len(specs)),
                               manifest=manifest, manifest_name=manifest_name)
        _finish_runs(progress, imported, files.rename)


def start_runs_import(collection, paths: Sequence[str | Path], *, manifest: str | Path | None = None, user=None,
                      **options) -> Job:
    """Start the import of local run files as the console's upload does (for scripts and benchmarks): the files
    copied into the file store (``uploads.stage``), then the job queued, split with ``JOB_PARTS`` > 1 like an
    upload's. ``options``: the upload form's (team, description, contributes, pool_priority, replace)."""
    from django.core.files import File

    def opened(path) -> File:
        return File(open(path, "rb"), name=Path(path).name)  # noqa: SIM115 - stage() closes it once stored

    prefix = uploads.stage((opened(p) for p in paths), manifest=opened(manifest) if manifest else None)
    return jobs.job_start(import_runs, kind="runs import", user=user, collection=collection,
                          params={"directory": prefix, "files": uploads.shown_names([Path(p).name for p in paths]),
                                  **({"manifest": Path(manifest).name} if manifest else {}), **options})


def _run_slices(job: Job) -> list[dict]:
    """The parts of a split import: ``JOB_PARTS`` contiguous slices of the staged files (in the order given) of
    about the same bytes; [] (one worker) when ``JOB_PARTS`` is 1, with fewer than two files a part, or with an
    archive among them (unpacked on one worker)."""
    shares = int(getattr(settings, "JOB_PARTS", 1) or 1)
    prefix = uploads.staged_prefix(job.params.get("directory"))
    if shares <= 1 or not prefix:
        return []
    files = (uploads.staged_names(prefix) or {}).get("files") or []
    if len(files) < 2 * shares or any(uploads.is_archive(original) for _, original in files):
        return []
    try:
        sizes = [store.size(f"{prefix}/{name}") for name, _ in files]
    except Exception:  # noqa: BLE001 - a file gone (or the store unreachable): one worker says why, in one line
        return []
    return [{"files": files[start:stop]} for start, stop in subjobs.balanced(sizes, shares)]


@task(takes_context=True)
def import_runs_part(context, job_id: int) -> None:
    """One part of a split import: its own staged files (only those are fetched) read, checked and encoded as
    one worker does, kept for the join with their warnings, or every problem they have; both naming the files
    as the user named them."""
    with subjobs.part(job_id, context) as progress:
        if progress is None:
            return
        job, parent = progress.job, progress.job.parent
        names = job.params["files"]
        prefix = uploads.staged_prefix(parent.params.get("directory"))
        if not uploads.staged_names(prefix):
            raise ImportRefused([uploads.GONE])
        progress.step(f"part {job.params['part'] + 1} of {parent.total}: checking {len(names)} run files",
                      done=0, total=len(names))
        with store.local_copy(prefix, only=[name for name, _ in names]) as directory:
            files = uploads.Staged(directory, [directory / n for n, _ in names], {directory / n: o for n, o in names})
            try:
                checked, problems = runs_check(job.collection, _specs(files, parent.params), max_problems=MAX_PROBLEMS,
                                               progress=_advancing(progress, len(names)))
            except OSError as exc:  # a disk error names the staged path: the user's name instead
                raise files.refused(exc) from exc
        if problems:
            subjobs.keep(progress, {"problems": files.refused(ImportRefused(problems)).problems})
            return
        checked = [dataclasses.replace(c, warnings=tuple(map(files.rename, c.warnings))) for c in checked]
        if len({c.tag for c in checked}) == len(checked):  # else the join refuses them (a tag in two files)
            progress.step(f"part {job.params['part'] + 1} of {parent.total}: storing {len(checked)} runs")
            runs_stage(_staging(parent, job.params["part"]), checked)
        subjobs.keep(progress, checked_bytes([dataclasses.replace(c, blob=b"") for c in checked]))


def _staging(job: Job, part: int) -> str:
    """The staging collection of a part of a split import (a slug no user can give: it starts with "_")."""
    return f"_import-{job.pk}-{part}"


def _staged_manifest(job: Job) -> tuple[dict | None, str]:
    """The manifest of the job's upload, if it has one (only that file fetched), as :func:`_manifest` reads it."""
    prefix = uploads.staged_prefix(job.params.get("directory"))
    recorded = uploads.staged_names(prefix)
    if recorded is None:
        raise ImportRefused([uploads.GONE])
    if not recorded.get("manifest"):
        return None, "manifest"
    name, original = recorded["manifest"]
    with store.local_copy(prefix, only=[name]) as directory:
        files = uploads.Staged(directory, [], {directory / name: original}, directory / name)
        try:
            return _manifest(files)
        except (ImportRefused, OSError) as exc:
            raise files.refused(exc) from None


@task(takes_context=True)
def join_runs_import(context, job_id: int) -> None:
    """The runs of a split import stored from its parts' outputs, as one worker stores them: refused with every
    problem of every file (in the files' order), else all stored in one transaction."""
    job = Job.objects.get(pk=job_id)
    if job.finished or subjobs.superseded(job, context):
        return
    with jobs.running(job_id) as progress:
        try:
            job, params = progress.job, progress.job.params
            progress.step("joining the parts")
            manifest, manifest_name = _staged_manifest(job)
            outputs = subjobs.outputs(job)
            problems = [p for found in outputs if isinstance(found, dict) for p in found["problems"]]
            if problems:
                raise ImportRefused(problems)
            checked = [run for found in outputs for run in checked_runs(found)]
            progress.step("moving the runs the parts stored into the collection", done=len(checked),
                          total=2 * len(checked))
            imported = runs_adopt(job.collection, [_staging(job, i) for i in range(len(outputs))],
                                  runs_settle(checked, manifest=manifest, manifest_name=manifest_name),
                                  replace=params.get("replace", False))
            progress.step("storing the runs", done=2 * len(checked))
            _finish_runs(progress, imported)
        finally:
            _discard_upload(job)


def _discard_upload(job: Job) -> None:
    """A split import's staged upload, its parts' outputs and the runs they stored removed (its join ended, or
    it failed)."""
    store.delete_tree(uploads.staged_prefix(job.params.get("directory")))
    store.delete_tree(subjobs.parts_folder(job))
    Collection.all_objects.filter(slug__startswith=f"_import-{job.pk}-", staging=True).delete()


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


@task()
def index_corpus(job_id: int) -> None:
    """Index a corpus used by reference (``workbench.corpora.corpus.corpus_reference_index``)."""
    from workbench.corpora.corpus import corpus_reference_index
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



#: this app's jobs (registered by workbench.jobs.kinds.autodiscover): each import reads its staged files and writes
#: in one transaction, so a job whose worker died is retried once; a part writes only its own output and the join
#: stores in one transaction, so each is retried once
JOB_KINDS = (
    JobKind("topics import", "Topics import", import_topics, retry=True, params=("directory", "replace"),
            help="Reads uploaded topic files into the collection."),
    JobKind("documents import", "Documents import", import_documents, retry=True, params=("directory", "replace"),
            help="Reads uploaded document files (and archives) into the collection."),
    JobKind("runs import", "Runs import", import_runs, retry=True, part=import_runs_part, join=join_runs_import,
            params=("directory",), help="Reads uploaded run files, all or none; split by file when large."),
    JobKind("corpus index", "Corpus index", index_corpus, retry=True, params=("reference",),
            help="Indexes a corpus used by reference (its documents' offsets)."),
    JobKind("near-duplicates", "Near-duplicate detection", find_duplicates, retry=True, part=duplicates_part,
            join=join_duplicates, help="Finds classes of near-duplicate documents (MinHash of word shingles)."),
)

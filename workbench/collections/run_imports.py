"""The import of run files, in two halves that a split job (``workbench.tasks``: parts, then a join) runs on
different workers and one process runs together (:func:`runs_import`):

- :func:`runs_check` reads and checks every file like a submission checker and encodes each run
  (``runstore.encode``): no database write. Its result travels between workers as bytes
  (:func:`checked_bytes`, :func:`checked_runs`);
- :func:`runs_settle` refuses a tag given by two files and a manifest line naming no uploaded run, and gives each
  run its metadata; :func:`runs_store` stores the runs all or none, in one transaction.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from workbench.collections import runstore
from workbench.collections.bulk import insert_rows
from workbench.collections.refusals import ImportRefused
from workbench.collections.signals import collection_changed
from workbench.formats import FormatError, read_run
from workbench.formats.manifest import ManifestEntry, header_fields
from workbench.models import Collection, Run, RunData

__all__ = ["CheckedRun", "ImportedRun", "RunSpec", "checked_bytes", "checked_runs", "runs_adopt", "runs_check",
           "runs_import", "runs_stage",
           "runs_settle", "runs_store"]


@dataclass(frozen=True)
class RunSpec:
    """One run file to import, with the metadata the organizer gives it."""

    source: str | Path
    team: str = ""
    description: str = ""
    contributes: bool = True
    pool_priority: int = 1
    run_type: str = ""
    #: the file's name as the user gave it (messages and ``Run.source_file``); default: the source's
    name: str = ""

    @property
    def shown(self) -> str:
        return self.name or str(self.source)


@dataclass(frozen=True)
class ImportedRun:
    run: Run
    warnings: tuple[str, ...]
    metadata: dict | None = None  # the file's metadata header (ir_metadata), if it has one


@dataclass(frozen=True)
class CheckedRun:
    """A run file read, checked and encoded: all that storing it needs (its lines only as the stored table)."""

    spec: RunSpec
    tag: str
    blob: bytes
    num_topics: int
    num_entries: int
    sha256: str
    #: team, run type and description its ir_metadata header declares (``header_fields``)
    header: dict
    warnings: tuple[str, ...] = ()
    metadata: dict | None = None
    #: the parsed file, for ``runs_store``'s ``accept`` (not kept otherwise, nor sent between workers)
    run_file: object = dataclasses.field(default=None, compare=False, repr=False)
    #: each topic's first rows apart (``runstore.encode_with_head``), None when that is the whole table (not
    #: sent between workers: the part that checks a run stores it)
    head: bytes | None = None


def _sha256_of(source: str | Path) -> str:
    digest = hashlib.sha256()
    with open(source, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _checked(spec: RunSpec, run_file, keep_file: bool) -> CheckedRun:
    frame = run_file.frame
    blob, head = runstore.encode_with_head(frame)
    return CheckedRun(spec=spec, tag=run_file.tag, blob=blob, head=head, num_topics=int(frame["qid"].nunique()),
                      num_entries=len(frame),
                      sha256=_sha256_of(spec.source) if isinstance(spec.source, str | Path) else "",
                      header=header_fields(run_file.metadata), warnings=run_file.warnings,
                      metadata=run_file.metadata, run_file=run_file if keep_file else None)


def runs_check(collection: Collection, specs: Iterable[RunSpec], *, max_problems: int = 20,
               progress: Callable[[int], None] | None = None,
               keep_files: bool = False) -> tuple[list[CheckedRun], list[str]]:
    """Every file read and checked like a submission (``progress(1)`` after each), and encoded as soon as it is
    read while no file had a problem: (the checked runs, []), or ([], every problem of every file in order).
    ``keep_files`` keeps each parsed file (with its lines) for ``runs_store``'s ``accept``."""
    known_qids = set(collection.topics.values_list("qid", flat=True)) or None
    checked, problems = [], []
    for spec in specs:
        try:
            run_file = read_run(spec.source, name=spec.name or None, max_depth=collection.max_depth,
                                known_qids=known_qids, max_problems=max_problems)
        except FormatError as exc:
            problems.extend(exc.problems)
            checked.clear()  # nothing will be stored: no need to hold what was encoded
        else:
            if not problems:
                checked.append(_checked(spec, run_file, keep_files))
        if progress:
            progress(1)
    return ([], problems) if problems else (checked, [])


def _resolved(spec: RunSpec, header: dict, entry: ManifestEntry | None) -> RunSpec:
    """The run's metadata: the manifest's line first, then the file's ir_metadata header, then the
    upload's defaults (``spec``)."""
    chosen = {name: header.get(name, getattr(spec, name)) for name in ("team", "run_type", "description")}
    if entry is not None:
        for name, value in (("team", entry.team), ("run_type", entry.type), ("description", entry.description)):
            if value is not None:
                chosen[name] = value
    contributes = spec.contributes if entry is None or entry.contributes is None else entry.contributes
    priority = spec.pool_priority if entry is None or entry.priority is None else entry.priority
    return dataclasses.replace(spec, contributes=contributes, pool_priority=priority, **chosen)


def _check_manifest(manifest: Mapping[str, ManifestEntry], manifest_name: str, tags: list[str]) -> None:
    uploaded = set(tags)
    unknown = [entry for tag, entry in manifest.items() if tag not in uploaded]
    if unknown:
        shown = ", ".join(sorted(uploaded)[:10]) + (" …" if len(uploaded) > 10 else "")
        raise ImportRefused([f"{manifest_name}:{e.line}: run tag {e.tag!r} is not among the uploaded runs "
                             f"({shown})" for e in sorted(unknown, key=lambda e: e.line)])


def runs_settle(checked: Sequence[CheckedRun], *, manifest: Mapping[str, ManifestEntry] | None = None,
                manifest_name: str = "manifest") -> list[CheckedRun]:
    """The checked runs of one import, together: a tag in more than one file, or a manifest line naming a run
    not uploaded, refuses them all; else each run with its metadata (:func:`_resolved`)."""
    tags = [c.tag for c in checked]
    dupes = sorted(tag for tag, count in Counter(tags).items() if count > 1)
    if dupes:
        raise ImportRefused([f"run tag {t!r} appears in more than one file" for t in dupes])
    if manifest is not None:
        _check_manifest(manifest, manifest_name, tags)
    return [dataclasses.replace(c, spec=_resolved(c.spec, c.header, (manifest or {}).get(c.tag))) for c in checked]


def _store_run(collection: Collection, checked: CheckedRun) -> Run:
    spec = checked.spec
    run = Run.objects.create(
        collection=collection, tag=checked.tag, team=spec.team, description=spec.description,
        source_file=(spec.name or Path(str(spec.source)).name)[:500], contributes=spec.contributes,
        pool_priority=spec.pool_priority, run_type=spec.run_type, num_topics=checked.num_topics,
        num_entries=checked.num_entries, sha256=checked.sha256)
    return run


def _refuse_existing(collection: Collection, checked: Sequence[CheckedRun], replace: bool) -> None:
    """Runs of these tags already in the collection refuse the import, or are removed with ``replace``."""
    existing = set(collection.runs.filter(tag__in=[c.tag for c in checked]).values_list("tag", flat=True))
    if existing and not replace:
        raise ImportRefused([f"{c.spec.shown}: run {c.tag!r} is already in collection {collection.slug!r} "
                             "(use --replace to replace it)" for c in checked if c.tag in existing])
    collection.runs.filter(tag__in=existing).delete()


def _store_all(collection: Collection, checked: Sequence[CheckedRun], progress=None) -> list[Run]:
    runs = []
    for item in checked:
        runs.append(_store_run(collection, item))
        if progress:
            progress(1)
    # the tables in one go (on PostgreSQL a binary COPY, not hex-encoded parameters)
    insert_rows(RunData, ("run", "table", "head"), ("int8", "bytea", "bytea"),
                ((run.pk, item.blob, item.head) for run, item in zip(runs, checked, strict=True)))
    return runs


def runs_store(collection: Collection, checked: Sequence[CheckedRun], *, replace: bool = False,
               progress: Callable[[int], None] | None = None, accept: Callable[[list], None] | None = None,
               stored: Callable[[list[ImportedRun]], None] | None = None) -> list[ImportedRun]:
    """Store the settled runs (:func:`runs_settle`) all or none, in one transaction (see :func:`runs_import`)."""
    with transaction.atomic():
        if accept is not None:  # the caller's own rules (a track's limits) on the checked files, before any write
            accept([c.run_file for c in checked])
        _refuse_existing(collection, checked, replace)
        runs = _store_all(collection, checked, progress)
        imported = [ImportedRun(run=run, warnings=item.warnings, metadata=item.metadata)
                    for run, item in zip(runs, checked, strict=True)]
        if stored is not None:
            stored(imported)
    return imported


def runs_stage(slug: str, checked: Sequence[CheckedRun]) -> None:
    """A part of a split import stores its checked runs (their tables: most of the bytes an import writes) in a
    staging collection of its own, which nobody sees (``Collection.staging``), replacing one a worker that died
    left; the join moves them into their collection (:func:`runs_adopt`)."""
    with transaction.atomic():
        Collection.all_objects.filter(slug=slug, staging=True).delete()
        staging = Collection.all_objects.create(slug=slug, name=slug, staging=True)
        _store_all(staging, checked)


def runs_adopt(collection: Collection, slugs: Sequence[str], checked: Sequence[CheckedRun], *,
               replace: bool = False) -> list[ImportedRun]:
    """The runs the parts staged (:func:`runs_stage`) moved into ``collection`` with their settled metadata
    (:func:`runs_settle`), all or none, in one transaction, as :func:`runs_store` stores them: their tables are
    not copied again, only their rows change collection."""
    with transaction.atomic():
        _refuse_existing(collection, checked, replace)
        staged = {run.tag: run for run in Run.objects.filter(collection__slug__in=list(slugs),
                                                             collection__staging=True)}
        if set(staged) != {c.tag for c in checked}:
            raise ImportRefused(["the runs checked by the parts are not all staged (a part was done again): "
                                 "import the files again"])
        runs = []
        for item in checked:
            run, spec = staged[item.tag], item.spec
            run.collection, run.team, run.description = collection, spec.team, spec.description
            run.contributes, run.pool_priority, run.run_type = spec.contributes, spec.pool_priority, spec.run_type
            runs.append(run)
        Run.objects.bulk_update(runs, ["collection", "team", "description", "contributes", "pool_priority",
                                       "run_type"], batch_size=500)
        Collection.all_objects.filter(slug__in=list(slugs), staging=True).delete()
        collection_changed.send(sender=Run, collection_id=collection.pk)  # bulk_update sends no post_save
    return [ImportedRun(run=run, warnings=item.warnings, metadata=item.metadata)
            for run, item in zip(runs, checked, strict=True)]


def runs_import(*, collection: Collection, specs: Iterable[RunSpec], replace: bool = False,
                max_problems: int = 20, progress: Callable[[int], None] | None = None,
                accept: Callable[[list], None] | None = None,
                stored: Callable[[list[ImportedRun]], None] | None = None,
                manifest: Mapping[str, ManifestEntry] | None = None,
                manifest_name: str = "manifest") -> list[ImportedRun]:
    """Validate every run file like a submission checker, then store them all or none.

    Files are read, checked and encoded before the transaction that stores them begins, so the
    database is locked only while the runs are written. ``accept`` sees the checked run files first, inside
    the transaction that stores them (so it may lock what its rules count, and its rules hold however many
    imports run at once), and may refuse them (:class:`ImportRefused`); ``stored`` sees the stored runs in
    the same transaction. ``progress`` is called with 1 after each file is validated and after each run
    is stored.

    A run's team, type and description come from its line in ``manifest`` (by run tag; see
    :mod:`workbench.formats.manifest`), else from its file's ir_metadata header, else from its spec;
    contribution and priority from the manifest, else the spec. A manifest line naming a run not
    uploaded refuses the whole import (``manifest.csv:LINE: ...``)."""
    checked, problems = runs_check(collection, specs, max_problems=max_problems, progress=progress,
                                   keep_files=accept is not None)
    if problems:
        raise ImportRefused(problems)
    return runs_store(collection, runs_settle(checked, manifest=manifest, manifest_name=manifest_name),
                      replace=replace, progress=progress, accept=accept, stored=stored)


_MAGIC = b"workbench checked runs 1\n"


def checked_bytes(checked: Sequence[CheckedRun]) -> bytes:
    """The checked runs (without their parsed files) as bytes another worker reads back (:func:`checked_runs`):
    a JSON header (each run's fields and its table's size), then the tables end to end."""
    header = [{"spec": {**dataclasses.asdict(c.spec), "source": str(c.spec.source)}, "tag": c.tag,
               "num_topics": c.num_topics, "num_entries": c.num_entries, "sha256": c.sha256, "header": c.header,
               "warnings": list(c.warnings), "metadata": c.metadata, "size": len(c.blob)} for c in checked]
    text = json.dumps(header, default=str).encode()  # default: a YAML date of a metadata header, as text
    return b"".join([_MAGIC, len(text).to_bytes(8, "big"), text, *(c.blob for c in checked)])


def checked_runs(data: bytes) -> list[CheckedRun]:
    """The checked runs :func:`checked_bytes` wrote."""
    if not data.startswith(_MAGIC):
        raise ValueError("not the checked runs of a part of a run import")
    start = len(_MAGIC) + 8
    end = start + int.from_bytes(data[len(_MAGIC):start], "big")
    found, view = [], memoryview(data)
    for fields in json.loads(data[start:end]):
        size = fields.pop("size")
        found.append(CheckedRun(**{**fields, "spec": RunSpec(**fields["spec"]), "warnings": tuple(fields["warnings"]),
                                   "blob": bytes(view[end:end + size])}))
        end += size
    return found

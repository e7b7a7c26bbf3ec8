"""Writes of the shared domain: collections, topics, documents and runs (their import: ``workbench.collections.run_imports``).

Every import parses and validates all of its input before it writes anything, and writes in one
transaction (documents: in batches into a staging collection, then moved in one transaction): a failed import
leaves nothing behind.
"""

from __future__ import annotations

import json
import logging
import re
import tempfile
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
from django.core.exceptions import ValidationError
from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from workbench.collections.bulk import insert_columns
from workbench.collections.refusals import ImportRefused
from workbench.collections.run_imports import (
    ImportedRun as ImportedRun,  # the runs' import, named here as before
)
from workbench.collections.run_imports import RunSpec as RunSpec
from workbench.collections.run_imports import runs_import as runs_import
from workbench.formats import FormatError, iter_documents, read_topics
from workbench.models import Collection, Document, Run, Topic, validate_scale

logger = logging.getLogger("workbench.collections.services")


def parse_scale(text: str) -> list[dict]:
    """Parse ``"0=Not relevant,1=Relevant,2=Highly relevant"`` into an ordered scale."""
    scale = []
    for part in text.split(","):
        grade, sep, label = part.partition("=")
        if not sep or not label.strip():
            raise ValidationError(f"grade {part.strip()!r} is not GRADE=LABEL")
        try:
            value = int(grade.strip())
        except ValueError:
            raise ValidationError(f"grade {grade.strip()!r} is not an integer") from None
        scale.append({"grade": value, "label": label.strip()})
    scale.sort(key=lambda item: item["grade"])
    validate_scale(scale)
    return scale


@transaction.atomic
def collection_create(*, slug: str, name: str = "", scale: list[dict] | None = None,
                      relevant_from: int | None = None, max_depth: int = 1000,
                      description: str = "", guidelines: str = "") -> Collection:
    collection = Collection(slug=slug, name=name or slug, description=description, max_depth=max_depth,
                            guidelines=guidelines)
    if scale is not None:
        collection.scale = scale
    if relevant_from is None:
        positives = [g for g in collection.grades if g > 0]
        relevant_from = positives[0] if positives else collection.grades[-1]
    collection.relevant_from = relevant_from
    collection.full_clean()
    collection.save()
    return collection


@dataclass(frozen=True)
class ImportSummary:
    created: int
    updated: int = 0
    skipped: int = 0


def _parsed_topics(source: str | Path) -> list:
    """The file's topics, refused whole if it cannot be read, holds none or names a topic twice."""
    try:
        records = read_topics(source)
    except FormatError as exc:
        raise ImportRefused(exc.problems) from None
    if not records:
        raise ImportRefused([f"{source}: no topics found"])
    seen: set[str] = set()
    dupes = sorted({r.qid for r in records if r.qid in seen or seen.add(r.qid)})
    if dupes:
        raise ImportRefused([f"{source}: topic {q!r} appears more than once" for q in dupes])
    return records


#: most values one ``IN (...)`` query names: under SQLite's limit on a statement's variables (999 before 3.32)
IN_BATCH = 900


def _existing_topics(collection: Collection, qids: list[str]) -> dict[str, Topic]:
    """The collection's topics among ``qids``, asked in batches (a million topics pass SQLite's limit)."""
    if len(qids) > 50 * IN_BATCH:  # many: one pass over the collection's topics is cheaper than many queries
        wanted = set(qids)
        return {t.qid: t for t in collection.topics.iterator(chunk_size=10_000) if t.qid in wanted}
    found: dict[str, Topic] = {}
    for start in range(0, len(qids), IN_BATCH):
        found.update((t.qid, t) for t in collection.topics.filter(qid__in=qids[start:start + IN_BATCH]))
    return found


def topics_import(*, collection: Collection, source: str | Path, replace: bool = False) -> ImportSummary:
    """Import topics; a qid already in the collection is refused unless ``replace`` updates it.

    The file is read and checked before the transaction that writes the topics begins."""
    records = _parsed_topics(source)
    with transaction.atomic():
        existing = _existing_topics(collection, [r.qid for r in records])
        if existing and not replace:
            raise ImportRefused([f"{source}: topic {q!r} is already in collection {collection.slug!r} "
                                 "(use --replace to update it)" for q in sorted(existing)])
        created, updated = [], []
        for record in records:
            topic = existing.get(record.qid) or Topic(collection=collection, qid=record.qid)
            topic.title = record.title
            topic.description = record.description
            topic.narrative = record.narrative
            topic.extra = dict(record.extra)
            (updated if topic.pk else created).append(topic)
        Topic.objects.bulk_create(created, batch_size=1000)
        if updated:
            fields = ["title", "description", "narrative", "extra"]  # each row: a WHEN pk THEN value per field
            Topic.objects.bulk_update(updated, fields, batch_size=IN_BATCH // (2 * len(fields) + 1))
    return ImportSummary(created=len(created), updated=len(updated))


_WORD = re.compile(r"\w+")


def _word_count(*texts: str) -> int:
    return sum(len(_WORD.findall(text)) for text in texts)


_SPOOL_SCHEMA = pa.schema([("docno", pa.string()), ("title", pa.string()), ("text", pa.string()),
                          ("extra", pa.string()), ("length", pa.int64())])


def _spool_documents(sources: Sequence[str | Path], spool, batch_size: int,
                     progress: Callable[[int], None] | None) -> int:
    """Read and check every document of ``sources`` (no database write yet), spooling them to an Arrow
    stream in batches; the number of documents."""
    seen: set[str] = set()
    columns: dict[str, list] = {name: [] for name in _SPOOL_SCHEMA.names}
    with pa.ipc.new_stream(spool, _SPOOL_SCHEMA) as writer:
        def flush() -> None:
            if columns["docno"]:
                writer.write_batch(pa.record_batch([pa.array(columns[n], _SPOOL_SCHEMA.field(n).type)
                                                    for n in _SPOOL_SCHEMA.names], schema=_SPOOL_SCHEMA))
                if progress:
                    progress(len(columns["docno"]))
                for values in columns.values():
                    values.clear()

        for source in sources:
            try:
                for record in iter_documents(source):
                    if record.docno in seen:
                        raise ImportRefused([f"{source}: document {record.docno!r} appears more than once"])
                    seen.add(record.docno)
                    for name, value in (("docno", record.docno), ("title", record.title), ("text", record.text),
                                        ("extra", json.dumps(dict(record.extra)) if record.extra else ""),
                                        ("length", _word_count(record.title, record.text))):
                        columns[name].append(value)
                    if len(columns["docno"]) >= batch_size:
                        flush()
            except FormatError as exc:
                raise ImportRefused(exc.problems) from None
        flush()
    if not seen:
        raise ImportRefused([f"{', '.join(map(str, sources))}: no documents found"])
    return len(seen)


def _existing_documents(collection: Collection, docnos: list[str]) -> dict[str, int]:
    """Which of ``docnos`` the collection holds (docno -> pk), asked ``IN_BATCH`` at a time."""
    found = {}
    for start in range(0, len(docnos), IN_BATCH):
        found.update(collection.documents.filter(docno__in=docnos[start:start + IN_BATCH]).values_list("docno", "pk"))
    return found


def _write_documents(collection: Collection, batch: pa.RecordBatch, replace: bool) -> tuple[int, int]:
    """One spooled batch into the collection: (created, updated). New documents go in as columns
    (``insert_columns``: no model instance per row), so the write transaction is short."""
    existing = _existing_documents(collection, batch.column("docno").to_pylist())
    if existing and not replace:
        raise ImportRefused([f"document {d!r} is already in collection {collection.slug!r} "
                             "(use --replace to update it)" for d in sorted(existing)][:20])
    if not existing:
        extra = pc.if_else(pc.equal(batch.column("extra"), ""), "{}", batch.column("extra"))
        insert_columns(Document, {"docno": batch.column("docno"), "title": batch.column("title"),
                                  "text": batch.column("text"), "extra": extra, "length": batch.column("length")},
                       {"collection": collection.pk})
        return batch.num_rows, 0
    rows = batch.to_pydict()
    documents = [Document(collection=collection, docno=docno, title=title, text=text,
                          extra=json.loads(extra) if extra else {}, length=length, pk=existing.get(docno))
                 for docno, title, text, extra, length in zip(*(rows[n] for n in _SPOOL_SCHEMA.names), strict=True)]
    fresh = [d for d in documents if d.pk is None]
    stale = [d for d in documents if d.pk is not None]
    Document.objects.bulk_create(fresh, batch_size=len(fresh) or 1)
    fields = ["title", "text", "extra", "length"]  # a CASE of two variables a field, and the pk, per document
    Document.objects.bulk_update(stale, fields, batch_size=IN_BATCH // (2 * len(fields) + 1))
    return len(fresh), len(stale)


def documents_import(*, collection: Collection, sources: Sequence[str | Path], replace: bool = False,
                     batch_size: int = 2000,
                     progress: Callable[[int], None] | None = None) -> ImportSummary:
    """Import documents from one or more files, all or none.

    Every file is read and checked first, outside any transaction, into a temporary spool (so that
    assessors' judgments are not kept waiting on the database's write lock while a large corpus is
    parsed). New documents (none of them in the collection yet) are then written batch by batch, each batch
    its own short transaction, into a staging collection nobody sees, and moved into the collection in one
    transaction (:func:`_staged_documents`): assessors' writes go in between the batches, and the collection
    gets every document or none. Documents that replace others are written in one transaction. ``progress``
    is called with the number of documents read, batch by batch."""
    with tempfile.TemporaryFile() as spool:
        _spool_documents(sources, spool, batch_size, progress)
        spool.seek(0)
        staged = _staged_documents(collection, spool)
        if staged is not None:
            return ImportSummary(created=staged, updated=0)
        spool.seek(0)
        created = updated = 0
        with transaction.atomic(), pa.ipc.open_stream(spool) as reader:
            for batch in reader:
                fresh, stale = _write_documents(collection, batch, replace)
                created, updated = created + fresh, updated + stale
    return ImportSummary(created=created, updated=updated)


#: a staging collection of documents older than this was left by a worker that died mid-import: removed
STAGED_DOCUMENTS_LEFT_AFTER = timedelta(days=1)


def _staged_documents(collection: Collection, spool) -> int | None:
    """The spooled documents written into a staging collection batch by batch (a short transaction each), then
    moved into ``collection`` in one transaction; the number of documents. None, with nothing written, when the
    caller's one transaction must do it: some documents are in the collection already (replaced or refused), or
    a transaction is open already (its writes cannot be committed apart)."""
    if transaction.get_connection().in_atomic_block or _any_in(collection, spool):
        return None
    spool.seek(0)
    prefix = f"_documents-{collection.pk}-"
    for left in Collection.all_objects.filter(slug__startswith=prefix, staging=True,
                                              created_at__lt=timezone.now() - STAGED_DOCUMENTS_LEFT_AFTER):
        _discard_staged(left)
    staging = Collection.all_objects.create(slug=f"{prefix}{uuid.uuid4().hex[:16]}", name="staged documents",
                                            staging=True)
    try:
        with pa.ipc.open_stream(spool) as reader:
            for batch in reader:
                with transaction.atomic():
                    _write_documents(staging, batch, False)
        try:
            with transaction.atomic():
                return Document.objects.filter(collection=staging).update(collection=collection)
        except IntegrityError:  # the same documents were added meanwhile: the one-transaction path decides
            return None
    finally:
        _discard_staged(staging)


def _any_in(collection: Collection, spool) -> bool:
    """Whether a spooled document is in ``collection`` already (reads only)."""
    with pa.ipc.open_stream(spool) as reader:
        return any(_existing_documents(collection, batch.column("docno").to_pylist()) for batch in reader)


def _discard_staged(staging: Collection, batch: int = 5000) -> None:
    """A staging collection removed with what is left in it, in short transactions; kept (for a later import to
    remove) when the database refuses."""
    try:
        ids = list(Document.objects.filter(collection=staging).values_list("pk", flat=True))
        for start in range(0, len(ids), batch):
            with transaction.atomic():
                Document.objects.filter(pk__in=ids[start:start + batch]).delete()
        Collection.all_objects.filter(pk=staging.pk, staging=True).delete()
    except DatabaseError as exc:
        logger.warning("staged documents %s not removed yet: %s", staging.slug, exc)


@transaction.atomic
def run_update(*, run: Run, contributes: bool | None = None, pool_priority: int | None = None,
               team: str | None = None, description: str | None = None) -> Run:
    if contributes is not None:
        run.contributes = contributes
    if pool_priority is not None:
        run.pool_priority = pool_priority
    if team is not None:
        run.team = team
    if description is not None:
        run.description = description
    run.full_clean()
    run.save()
    return run


#: what :func:`runs_update` may set on many runs at once
BULK_RUN_FIELDS = ("team", "contributes", "pool_priority", "run_type")


@transaction.atomic
def runs_update(*, collection: Collection, run_ids: Iterable[int], **values) -> int:
    """Set team, contributes, pool_priority and/or run_type (``None``: unchanged) on the collection's runs
    ``run_ids`` at once; the number of runs updated. Runs of other collections are never touched."""
    unknown = set(values) - set(BULK_RUN_FIELDS)
    if unknown:
        raise ValueError(f"runs_update cannot set {', '.join(sorted(unknown))}")
    changes = {name: value for name, value in values.items() if value is not None}
    if "pool_priority" in changes and int(changes["pool_priority"]) < 1:
        raise ValidationError("priority must be 1 or more")
    if "team" in changes and len(changes["team"]) > Run._meta.get_field("team").max_length:
        raise ValidationError("team names are at most 200 characters")
    runs = collection.runs.filter(pk__in=list(run_ids))
    if not changes:
        return 0
    return runs.update(**changes)

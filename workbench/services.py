"""Writes of the shared domain: collections, topics, documents and runs.

Every import parses and validates all of its input before it writes anything, and writes in one
transaction: a failed import leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import transaction

from workbench import runstore
from workbench.formats import FormatError, iter_documents, read_run, read_topics
from workbench.models import Collection, Document, Run, RunData, Topic, validate_scale


class ImportRefused(Exception):
    """Input that cannot be imported; ``problems`` holds one line per problem."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        more = f" (and {len(self.problems) - 1} more problems)" if len(self.problems) > 1 else ""
        super().__init__(f"{self.problems[0]}{more}")


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
                      description: str = "") -> Collection:
    collection = Collection(slug=slug, name=name or slug, description=description, max_depth=max_depth)
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


def topics_import(*, collection: Collection, source: str | Path, replace: bool = False) -> ImportSummary:
    """Import topics; a qid already in the collection is refused unless ``replace`` updates it.

    The file is read and checked before the transaction that writes the topics begins."""
    records = _parsed_topics(source)
    with transaction.atomic():
        existing = {t.qid: t for t in collection.topics.filter(qid__in=[r.qid for r in records])}
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
            Topic.objects.bulk_update(updated, ["title", "description", "narrative", "extra"], batch_size=1000)
    return ImportSummary(created=len(created), updated=len(updated))


_WORD = re.compile(r"\w+")


def _word_count(*texts: str) -> int:
    return sum(len(_WORD.findall(text)) for text in texts)


@transaction.atomic
def documents_import(*, collection: Collection, sources: Sequence[str | Path], replace: bool = False,
                     batch_size: int = 2000,
                     progress: Callable[[int], None] | None = None) -> ImportSummary:
    """Stream documents from one or more files into the collection in batches."""
    seen: set[str] = set()
    created = updated = 0
    batch: list[Document] = []

    def flush() -> None:
        nonlocal created, updated
        if not batch:
            return
        docnos = [d.docno for d in batch]
        existing = dict(collection.documents.filter(docno__in=docnos).values_list("docno", "pk"))
        if existing and not replace:
            raise ImportRefused([f"document {d!r} is already in collection {collection.slug!r} "
                                 "(use --replace to update it)" for d in sorted(existing)][:20])
        fresh = [d for d in batch if d.docno not in existing]
        stale = [d for d in batch if d.docno in existing]
        for doc in stale:
            doc.pk = existing[doc.docno]
        Document.objects.bulk_create(fresh, batch_size=batch_size)
        if stale:
            Document.objects.bulk_update(stale, ["title", "text", "extra", "length"], batch_size=batch_size)
        created += len(fresh)
        updated += len(stale)
        if progress:
            progress(len(batch))
        batch.clear()

    for source in sources:
        try:
            for record in iter_documents(source):
                if record.docno in seen:
                    raise ImportRefused([f"{source}: document {record.docno!r} appears more than once"])
                seen.add(record.docno)
                batch.append(Document(collection=collection, docno=record.docno, title=record.title,
                                      text=record.text, extra=dict(record.extra),
                                      length=_word_count(record.title, record.text)))
                if len(batch) >= batch_size:
                    flush()
        except FormatError as exc:
            raise ImportRefused(exc.problems) from None
    flush()
    if not seen:
        raise ImportRefused([f"{', '.join(map(str, sources))}: no documents found"])
    return ImportSummary(created=created, updated=updated)


@dataclass(frozen=True)
class RunSpec:
    """One run file to import, with the metadata the organizer gives it."""

    source: str | Path
    team: str = ""
    description: str = ""
    contributes: bool = True
    pool_priority: int = 1


@dataclass(frozen=True)
class ImportedRun:
    run: Run
    warnings: tuple[str, ...]


def _sha256_of(source: str | Path) -> str:
    digest = hashlib.sha256()
    with open(source, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _parsed_runs(collection: Collection, specs: list[RunSpec], max_problems: int,
                 progress: Callable[[int], None] | None) -> list:
    """Every file read and checked like a submission; all problems of all files, or (spec, RunFile) pairs."""
    known_qids = set(collection.topics.values_list("qid", flat=True)) or None
    parsed, problems = [], []
    for spec in specs:
        try:
            parsed.append((spec, read_run(spec.source, max_depth=collection.max_depth,
                                          known_qids=known_qids, max_problems=max_problems)))
        except FormatError as exc:
            problems.extend(exc.problems)
        if progress:
            progress(1)
    if problems:
        raise ImportRefused(problems)
    tags = [run_file.tag for _, run_file in parsed]
    dupes = sorted({t for t in tags if tags.count(t) > 1})
    if dupes:
        raise ImportRefused([f"run tag {t!r} appears in more than one file" for t in dupes])
    return parsed


def _store_run(collection: Collection, spec: RunSpec, run_file, blob: bytes) -> Run:
    frame = run_file.frame
    run = Run.objects.create(
        collection=collection, tag=run_file.tag, team=spec.team, description=spec.description,
        source_file=Path(str(spec.source)).name, contributes=spec.contributes,
        pool_priority=spec.pool_priority, num_topics=int(frame["qid"].nunique()), num_entries=len(frame),
        sha256=_sha256_of(spec.source) if isinstance(spec.source, str | Path) else "")
    RunData.objects.create(run=run, table=blob)
    return run


def runs_import(*, collection: Collection, specs: Iterable[RunSpec], replace: bool = False,
                max_problems: int = 20, progress: Callable[[int], None] | None = None) -> list[ImportedRun]:
    """Validate every run file like a submission checker, then store them all or none.

    Files are read, checked and encoded before the transaction that stores them begins, so the
    database is locked only while the runs are written. ``progress`` is called with 1 after each file
    is validated and after each run is stored."""
    parsed = _parsed_runs(collection, list(specs), max_problems, progress)
    blobs = [runstore.encode(run_file.frame) for _, run_file in parsed]
    tags = [run_file.tag for _, run_file in parsed]
    imported = []
    with transaction.atomic():
        existing = set(collection.runs.filter(tag__in=tags).values_list("tag", flat=True))
        if existing and not replace:
            raise ImportRefused([f"{spec.source}: run {rf.tag!r} is already in collection {collection.slug!r} "
                                 "(use --replace to replace it)" for spec, rf in parsed if rf.tag in existing])
        collection.runs.filter(tag__in=existing).delete()
        for (spec, run_file), blob in zip(parsed, blobs, strict=True):
            run = _store_run(collection, spec, run_file, blob)
            imported.append(ImportedRun(run=run, warnings=run_file.warnings))
            if progress:
                progress(1)
    return imported


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

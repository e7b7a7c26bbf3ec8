"""Corpora by reference: a collection points to a corpus instead of copying it.

A reference is a documents file on this machine (TREC SGML, JSONL or TSV, plain or ``.gz``, or Parquet; see
:mod:`workbench.formats.corpus_index`) or an ir_datasets id ``irds:ID`` (:mod:`workbench.formats.irds`). A
file is indexed once by docno in a background job; then only the documents judging needs are copied into
the collection's documents: a pool's documents by the job that builds the pool, any other one the first
time someone opens it (:func:`document_for`). The collection's documents table is the cache, so the
judging page reads one row by docno whatever the corpus's size.

One registry of stores (``STORES``: kind -> documents of docnos); pages and judges never ask where a text
lives, they call :func:`document_for` or :func:`documents_copy_in`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from workbench.collections.services import IN_BATCH, ImportRefused, _word_count
from workbench.formats import FormatError, corpus_files, irds
from workbench.formats.corpus_index import CorpusIndex, build_index
from workbench.formats.documents import FORMATS, DocumentRecord
from workbench.models import Collection, CorpusReference, Document

#: the formats of a corpus file: the documents readers' and Parquet
CORPUS_FORMATS = (*FORMATS, "parquet")

#: most docnos asked of a store at once
FETCH_BATCH = 10_000


def index_path(reference: CorpusReference) -> Path:
    """Where a file's offset index lives: ``VAR_DIR/corpus/<id>.idx``."""
    return Path(settings.VAR_DIR) / "corpus" / f"{reference.pk}.idx"


def kind_of(location: str) -> str:
    return "irds" if irds.dataset_id(location) is not None else "file"


def _file_documents(reference: CorpusReference, docnos: list[str]) -> dict[str, DocumentRecord]:
    return CorpusIndex(reference.location, index_path(reference), name=reference.location).get_many(docnos)


def _irds_documents(reference: CorpusReference, docnos: list[str]) -> dict[str, DocumentRecord]:
    return irds.get_many(reference.location, docnos)


#: kind of reference -> (reference, docnos) -> the documents the corpus holds among them
STORES: dict[str, Callable[[CorpusReference, list[str]], dict[str, DocumentRecord]]] = {
    "file": _file_documents,
    "irds": _irds_documents,
}


def _checked_location(location: str, format: str | None) -> str:
    location = location.strip()
    if not location:
        raise ValidationError("Give a corpus file's path or irds:ID.")
    if kind_of(location) == "irds":
        if not irds.dataset_id(location):
            raise ValidationError("Give the ir_datasets id after irds:, e.g. irds:vaswani.")
        return location
    if format and format not in CORPUS_FORMATS:
        raise ValidationError(f"Unknown documents format {format!r} (one of {', '.join(CORPUS_FORMATS)}).")
    try:
        return corpus_files.resolve(location)  # a BEIR folder: its corpus.jsonl
    except FormatError as exc:
        raise ValidationError(str(exc)) from None


def location_refusal(location: str) -> str | None:
    """Why the console may not use ``location`` (a path outside ``CORPUS_DIRS``), or None: the path and, for a
    BEIR folder, each of its files resolved on its own (a link out of ``CORPUS_DIRS`` is outside). The commands,
    run by someone with the machine's shell, may name any file."""
    if kind_of(location) == "irds":
        return None
    allowed = [Path(d).expanduser().resolve() for d in settings.CORPUS_DIRS]
    if not allowed:
        return "Corpus files are not enabled here: set CORPUS_DIRS to the server folders that hold corpora."
    try:
        path = Path(location).expanduser()
        paths = [p.resolve() for p in (path, *_folder_files(path))]
    except (OSError, ValueError, RuntimeError) as exc:
        return f"{location[:200]}: not a usable path ({exc})"
    if not all(any(p == root or root in p.parents for root in allowed) for p in paths):
        return f"Only files under {', '.join(map(str, allowed))} (CORPUS_DIRS) can be used."
    return None


def command_location_refusal(location: str) -> str | None:
    """Why ``manage.py add_corpus`` may not use ``location``, or None: with ``CORPUS_DIRS`` unset no corpus file
    is enabled (as the README says), for the commands as for the console; with it set, the shell's user may
    name any file (irds:ID needs no folder)."""
    if kind_of(location) == "irds" or settings.CORPUS_DIRS:
        return None
    return ("corpus files are not enabled here: set CORPUS_DIRS to the folders that hold corpora "
            "(e.g. CORPUS_DIRS=/data/corpora), or use irds:ID")


def _folder_files(path: Path) -> list[Path]:
    """A BEIR folder's files (corpus, queries, every qrels split), each checked on its own where it leads."""
    try:
        if not path.is_dir():
            return []
    except (OSError, ValueError):  # a name too long, a NUL byte: reading it says so, not this check
        return []
    qrels = path / "qrels"
    return [path / "corpus.jsonl", path / "queries.jsonl", qrels,
            *(sorted(qrels.glob("*.tsv")) if qrels.is_dir() else [])]


def corpus_reference_add(*, collection: Collection, location: str, format: str | None = None) -> CorpusReference:
    """Point ``collection`` to a corpus (not yet indexed: see :func:`corpus_reference_index`)."""
    location = _checked_location(location, format)
    if collection.corpus_references.filter(location=location).exists():
        raise ValidationError(f"{location} is already a corpus of collection {collection.slug!r}.")
    return CorpusReference.objects.create(collection=collection, location=location, format=format or "")


def corpus_reference_index(*, reference: CorpusReference, progress: Callable[[int], None] | None = None) -> int:
    """Index the reference's corpus once (a file by docno; an ir_datasets id through its own docstore);
    the number of documents. A corpus that cannot be read leaves the reference failed with one line."""
    CorpusReference.objects.filter(pk=reference.pk).update(status=CorpusReference.Status.INDEXING, error="")
    try:
        if kind_of(reference.location) == "irds":
            count, chosen = irds.check_local(reference.location), "irds"
        else:
            target = index_path(reference)
            target.parent.mkdir(parents=True, exist_ok=True)
            summary = build_index(reference.location, target, format=reference.format or None, progress=progress)
            count, chosen = summary.documents, summary.format
    except FormatError as exc:
        CorpusReference.objects.filter(pk=reference.pk).update(status=CorpusReference.Status.FAILED,
                                                               error=str(exc.problems[0])[:2000])
        raise ImportRefused(exc.problems) from None
    CorpusReference.objects.filter(pk=reference.pk).update(
        status=CorpusReference.Status.READY, format=chosen, documents=count, indexed_at=timezone.now())
    reference.refresh_from_db()
    return count


def corpus_reference_remove(*, reference: CorpusReference) -> None:
    """Forget a reference and its index (documents already copied in stay)."""
    reference.delete()


def index_removed(sender, instance: CorpusReference, **kwargs) -> None:
    """A deleted reference's index file goes with it (whether the reference or its collection was deleted)."""
    index_path(instance).unlink(missing_ok=True)


def _store(collection: Collection, records: Iterable[DocumentRecord]) -> int:
    rows = [Document(collection=collection, docno=r.docno, title=r.title, text=r.text,
                     extra=json.loads(json.dumps(dict(r.extra))) if r.extra else {},
                     length=_word_count(r.title, r.text)) for r in records]
    with transaction.atomic():  # two assessors opening one document at once: the second insert is skipped
        Document.objects.bulk_create(rows, batch_size=500, ignore_conflicts=True)
    return len(rows)


def _held(collection: Collection, docnos: list[str]) -> set[str]:
    held: set[str] = set()
    for start in range(0, len(docnos), IN_BATCH):
        held.update(collection.documents.filter(docno__in=docnos[start:start + IN_BATCH]).values_list("docno", flat=True))
    return held


def documents_copy_in(*, collection: Collection, docnos: Iterable[str],
                      progress: Callable[[int], None] | None = None) -> int:
    """Copy the text of ``docnos`` that the collection does not hold yet from its ready corpora (in the order
    they were added); the number copied. Docnos no corpus holds are left out (judging shows them without text)."""
    references = _ready(collection)
    wanted = list(dict.fromkeys(docnos))
    copied = 0
    for start in range(0, len(wanted), FETCH_BATCH):
        batch = wanted[start:start + FETCH_BATCH]
        copied += _copy_batch(collection, references, batch)
        if progress:
            progress(len(batch))
    return copied


def _ready(collection: Collection) -> list[CorpusReference]:
    return list(collection.corpus_references.filter(status=CorpusReference.Status.READY).order_by("id"))


def _copy_batch(collection: Collection, references: list[CorpusReference], batch: list[str]) -> int:
    held = _held(collection, batch)
    missing = [d for d in batch if d not in held]
    copied = 0
    for reference in references:
        if not missing:
            break
        try:
            found = STORES[kind_of(reference.location)](reference, missing)
        except FormatError as exc:
            raise ImportRefused(exc.problems) from None
        copied += _store(collection, found.values())
        missing = [d for d in missing if d not in found]
    return copied


def document_for(collection: Collection, docno: str, *, along: Callable[[], Iterable[str]] | None = None
                 ) -> Document | None:
    """The collection's document ``docno``: its row, copied in from a corpus the first time it is asked for.
    ``along`` gives the docnos likely asked for next (an assessor's queue): those not held yet are copied in
    with it, in the same read of the corpus and the same insert, so that opening them reads one row. A corpus
    that cannot be read now (moved, changed) gives None, as for a document the workbench lacks."""
    found = Document.objects.filter(collection=collection, docno=docno).first()
    if found is not None:
        return found
    references = _ready(collection)
    if not references:
        return None
    wanted = list(dict.fromkeys([docno, *(along() if along is not None else ())]))[:FETCH_BATCH]
    try:
        _copy_batch(collection, references, wanted)
    except (ImportRefused, OSError):
        return None
    return Document.objects.filter(collection=collection, docno=docno).first()


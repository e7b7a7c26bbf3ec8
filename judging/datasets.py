"""A whole test collection from ir_datasets (``irds:ID``) or a BEIR folder, read from a copy on this machine:
its topics and qrels imported, its corpus used by reference (``workbench.corpora.corpus``: indexed once, only pooled
or opened documents copied in). Nothing is downloaded (:mod:`workbench.formats.irds`).

Here because qrels are judging's; topics and the corpus go through the workbench's own services."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ValidationError

from judging.services import qrels_import
from workbench.collections.services import ImportRefused, topics_import
from workbench.corpora.corpus import corpus_reference_add, corpus_reference_index, corpus_reference_remove
from workbench.formats import FormatError, irds
from workbench.models import Collection, CorpusReference


@dataclass(frozen=True)
class DatasetSummary:
    reference: CorpusReference
    documents: int
    topics: int
    judgments: int


def _written(folder: Path, name: str, lines: Iterable[str]) -> Path:
    path = folder / name
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(lines)
    return path


def _is_folder(location: str) -> bool:
    try:
        return Path(location).is_dir()
    except (OSError, ValueError):  # a name too long, a NUL byte: not a folder
        return False


def _sources(location: str, split: str, folder: Path) -> tuple[str, Path, Path | None, str]:
    """(corpus location, topics file, qrels file or None, assessor name) of an ir_datasets id or a BEIR folder."""
    if irds.dataset_id(location) is not None:
        dataset = irds.load(location)
        topics = _written(folder, "topics.jsonl", (json.dumps(t) + "\n" for t in irds.topics_lines(location))) \
            if dataset.has_queries() else None
        qrels = _written(folder, "qrels.txt", irds.qrels_lines(location)) if dataset.has_qrels() else None
        if topics is None:
            raise ImportRefused([f"{location}: this ir_datasets id has no queries"])
        return location, topics, qrels, location[:150]
    if not _is_folder(location):
        raise ImportRefused([f"{location}: neither irds:ID nor a BEIR folder (a folder with corpus.jsonl, "
                             "queries.jsonl and qrels/)"])
    corpus, queries, qrels_file = irds.beir_files(location, split)
    qrels = _written(folder, "qrels.txt", irds.beir_qrels_lines(qrels_file))
    return str(corpus), queries, qrels, f"beir:{Path(location).resolve().name}/{split}"[:150]


def dataset_import(*, collection: Collection, location: str, split: str = "test",
                   progress: Callable[[int], None] | None = None) -> DatasetSummary:
    """Index the dataset's corpus by reference, then import its topics and qrels; if anything is refused, the
    collection is left as it was (the reference is removed again)."""
    with tempfile.TemporaryDirectory() as scratch:
        try:
            corpus, topics, qrels, assessor = _sources(location.strip(), split, Path(scratch))
        except FormatError as exc:
            raise ImportRefused(exc.problems) from None
        try:
            reference = corpus_reference_add(collection=collection, location=corpus)
        except ValidationError as exc:
            raise ImportRefused(exc.messages) from None
        try:
            documents = corpus_reference_index(reference=reference, progress=progress)
            topic_summary = topics_import(collection=collection, source=topics, replace=True)
            judged = qrels_import(collection=collection, source=qrels, assessor=assessor) if qrels else None
        except ImportRefused as exc:  # the files written here named as the dataset's, not by the server's folder
            corpus_reference_remove(reference=reference)
            raise ImportRefused([str(p).replace(f"{scratch}/", f"{location.strip()[:200]}: ") for p in exc.problems]
                                ) from None
        except Exception:
            corpus_reference_remove(reference=reference)
            raise
    return DatasetSummary(reference=reference, documents=documents,
                          topics=topic_summary.created + topic_summary.updated,
                          judgments=judged.created if judged else 0)

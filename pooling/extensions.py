"""What pooling needs from the layer above it, without importing it (layers point down).

Adaptive pools learn from judgments and put each new document in front of the topic's assessors; both
live in judging, which fills these in its ``AppConfig.ready()``:

- :func:`register_judged_documents`: a reader ``(collection, qid, docnos) -> {docno: relevant}`` of the
  documents the collection has judged (any assessor, any pool, imported or not). Without one, nothing
  counts as judged.
- :data:`document_offered`: sent with ``pool`` and ``entry`` when an adaptive pool adds a document that
  still needs a judgment.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from django.dispatch import Signal

JudgedDocuments = Callable[[object, str, Sequence[str]], dict[str, bool]]

document_offered = Signal()

_judged_documents: JudgedDocuments | None = None


def register_judged_documents(reader: JudgedDocuments) -> None:
    global _judged_documents
    _judged_documents = reader


def judged_documents(collection, qid: str, docnos: Sequence[str]) -> dict[str, bool]:
    """Of these documents of the topic, those with a judgment: relevant or not."""
    return _judged_documents(collection, qid, docnos) if _judged_documents is not None else {}

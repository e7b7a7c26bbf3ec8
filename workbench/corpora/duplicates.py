"""Near-duplicate classes of a collection's documents: detection (a background job or ``find_duplicates``) and
the organizer's decisions. The detection itself is ``workbench.formats.neardup`` (Django-free); judgments are
propagated inside a class by ``judging.duplicates`` (a layer above)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, QuerySet
from django.utils import timezone

from workbench.formats import neardup
from workbench.models import Collection, Document, DuplicateClass, DuplicateMember

__all__ = ["DetectionSummary", "duplicate_class_decide", "duplicate_classes", "duplicate_member_remove",
           "duplicates_detect", "duplicates_join", "duplicates_signatures", "duplicates_slices",
           "validate_detection_params"]


@dataclass(frozen=True)
class DetectionSummary:
    documents: int
    classes: list[neardup.DuplicateClass]  # the classes stored (proposed), in order
    kept: int  # classes the organizer had already decided, left as they were


def validate_detection_params(threshold: float, shingle: int) -> None:
    problems = {}
    if not 0 < threshold <= 1:
        problems["threshold"] = f"threshold must be above 0 and at most 1, not {threshold}"
    if not 1 <= shingle <= 20:
        problems["shingle"] = f"shingle must be from 1 to 20 words, not {shingle}"
    if problems:
        raise ValidationError(problems)


def _decided(collection: Collection) -> tuple[QuerySet[DuplicateClass], set[str]]:
    """The classes the organizer accepted or split, and their documents (left out of detection)."""
    decided = DuplicateClass.objects.filter(collection=collection).exclude(status=DuplicateClass.Status.PROPOSED)
    skip = set(decided.values_list("representative", flat=True))
    skip |= set(DuplicateMember.objects.filter(duplicate_class__in=decided).values_list("docno", flat=True))
    return decided, skip


def _texts(collection: Collection, skip: set[str], start: int | None = None, stop: int | None = None
           ) -> Iterator[tuple[str, str]]:
    """The texts to compare, in primary key order (those of ``start <= pk < stop`` only, either bound open)."""
    rows = Document.objects.filter(collection=collection)
    if start is not None:
        rows = rows.filter(pk__gte=start)
    if stop is not None:
        rows = rows.filter(pk__lt=stop)
    for docno, title, text in rows.order_by("pk").values_list("docno", "title", "text").iterator(chunk_size=5000):
        if docno not in skip:
            yield docno, f"{title}\n{text}" if title else text


def duplicates_detect(*, collection: Collection, threshold: float = neardup.DEFAULT_THRESHOLD,
                      shingle: int = neardup.DEFAULT_SHINGLE, progress: Callable[[int], None] | None = None
                      ) -> DetectionSummary:
    """Find the collection's near-duplicate classes and store them as *proposed*, replacing earlier proposals.
    Classes the organizer accepted or split stay as they are, and their documents are left out of detection."""
    validate_detection_params(threshold, shingle)
    decided, skip = _decided(collection)
    found = neardup.Signatures(threshold=threshold, shingle=shingle).read(_texts(collection, skip), progress=progress)
    return _store(collection, found, threshold, shingle, kept=decided.count())


def duplicates_slices(collection: Collection, parts: int, minimum: int) -> list[dict]:
    """Up to ``parts`` slices of the collection's documents for detection in parts, as primary key ranges
    (``start <= pk < stop``; the first and last open) of about the same count, none under ``minimum``
    documents; [] when that leaves fewer than two."""
    documents = Document.objects.filter(collection=collection).order_by("pk").values_list("pk", flat=True)
    count = documents.count()
    parts = min(parts, count // max(1, minimum))
    if parts < 2:
        return []
    cuts = [None, *(documents[count * i // parts] for i in range(1, parts)), None]
    return [{"start": start, "stop": stop, "documents": count * (i + 1) // parts - count * i // parts}
            for i, (start, stop) in enumerate(itertools.pairwise(cuts))]


def duplicates_signatures(*, collection: Collection, start: int | None, stop: int | None,
                          threshold: float = neardup.DEFAULT_THRESHOLD, shingle: int = neardup.DEFAULT_SHINGLE,
                          progress: Callable[[int], None] | None = None) -> bytes:
    """The signatures of one slice of the documents (:func:`duplicates_slices`) as detection reads them, as bytes
    (``neardup.Signatures.to_bytes``) for :func:`duplicates_join`. The documents of decided classes are left out
    as the part finds them (as one worker finds them when it starts)."""
    validate_detection_params(threshold, shingle)
    _, skip = _decided(collection)
    found = neardup.Signatures(threshold=threshold, shingle=shingle)
    return found.read(_texts(collection, skip, start, stop), progress=progress).to_bytes()


def duplicates_join(*, collection: Collection, slices: Iterable[bytes], threshold: float = neardup.DEFAULT_THRESHOLD,
                    shingle: int = neardup.DEFAULT_SHINGLE, progress: Callable[[int], None] | None = None
                    ) -> DetectionSummary:
    """The classes of the slices' signatures (in the slices' order) stored as :func:`duplicates_detect` stores
    them: the same classes as one reading of every document. ``progress(n)`` once the slices are read."""
    found = neardup.Signatures(threshold=threshold, shingle=shingle)
    for data in slices:
        found.add_bytes(data)
    if progress is not None:
        progress(len(found))
    return _store(collection, found, threshold, shingle, kept=_decided(collection)[0].count())


def _store(collection: Collection, found: neardup.Signatures, threshold: float, shingle: int, *, kept: int
           ) -> DetectionSummary:
    """The classes of the signatures found stored as *proposed* (earlier proposals replaced) in one transaction."""
    classes = neardup.classes(found)
    with transaction.atomic():
        DuplicateClass.objects.filter(collection=collection, status=DuplicateClass.Status.PROPOSED).delete()
        stored = DuplicateClass.objects.bulk_create(
            [DuplicateClass(collection=collection, representative=c.representative, similarity=c.similarity,
                            threshold=threshold, shingle=shingle) for c in classes], batch_size=2000)
        if stored and stored[0].pk is None:  # a backend that does not return keys
            by_rep = dict(DuplicateClass.objects.filter(collection=collection, status=DuplicateClass.Status.PROPOSED)
                          .values_list("representative", "pk"))
            ids = [by_rep[c.representative] for c in classes]
        else:
            ids = [s.pk for s in stored]
        DuplicateMember.objects.bulk_create(
            [DuplicateMember(duplicate_class_id=pk, collection=collection, docno=m, similarity=s)
             for pk, c in zip(ids, classes, strict=True) for m, s in zip(c.members, c.similarities, strict=True)],
            batch_size=5000)
    return DetectionSummary(documents=len(found), classes=classes, kept=kept)


def duplicate_classes(collection: Collection, *, status: str | None = None) -> QuerySet[DuplicateClass]:
    """The collection's classes with their member counts, most similar first."""
    qs = DuplicateClass.objects.filter(collection=collection).annotate(size=Count("members"))
    if status:
        qs = qs.filter(status=status)
    return qs.order_by("-similarity", "representative")


@transaction.atomic
def duplicate_class_decide(*, duplicate_class: DuplicateClass, status: str, user=None) -> DuplicateClass:
    """Accept or split a class (or take it back to proposed). What this means for judgments propagated inside
    the class is the judging layer's business (``judging.duplicates.duplicate_class_set``)."""
    if status not in DuplicateClass.Status.values:
        raise ValidationError({"status": f"unknown decision {status!r}"})
    duplicate_class.status = status
    duplicate_class.decided_at = timezone.now()
    duplicate_class.decided_by = user if user is not None and user.is_authenticated else None
    duplicate_class.save(update_fields=["status", "decided_at", "decided_by"])
    return duplicate_class


@transaction.atomic
def duplicate_member_remove(*, duplicate_class: DuplicateClass, docno: str, user=None) -> DuplicateClass:
    """Take one document out of a class (it is then judged on its own); a class left with no member is split."""
    removed, _ = duplicate_class.members.filter(docno=docno).delete()
    if not removed:
        raise ValidationError({"member": f"{docno!r} is not a member of the class of {duplicate_class.representative}"})
    rest = list(duplicate_class.members.values_list("similarity", flat=True))
    if rest:
        duplicate_class.similarity = min(rest)
        duplicate_class.save(update_fields=["similarity"])
    else:
        duplicate_class_decide(duplicate_class=duplicate_class, status=DuplicateClass.Status.SPLIT, user=user)
    return duplicate_class

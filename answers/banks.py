"""Nugget banks by hand and by machine: a topic's current bank with the judged relevant segments it is made from,
and every change (edit, add, delete, merge, split, vital/okay) stored as a new bank version whose nuggets name
the nugget they came from (``origin``). Versions are never changed: assignments keep naming the version they
were made against. A change made on a page showing an older version is refused (someone else saved first)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Max

from answers.models import Nugget, NuggetBank, Source
from judging.qrels import qrels
from workbench.corpora.corpus import document_for
from workbench.models import Topic

__all__ = ["BankRefused", "Draft", "bank_save", "current", "relevant_segments"]

#: characters of a relevant segment shown on the bank page and sent to a drafter
SEGMENT_CHARS = 3000
#: relevant segments shown on the bank page
MAX_SEGMENTS = 100


class BankRefused(ValueError):
    """A bank change that cannot be stored: one line for the user."""


@dataclass(frozen=True)
class Draft:
    """One nugget of a version to save: its text and importance, the nugget it came from (or None), its source."""

    text: str
    importance: str
    origin: int | None = None
    source: str = Source.WEB
    machine_judge_id: int | None = None
    provenance: dict | None = None


def current(topic: Topic) -> NuggetBank | None:
    return NuggetBank.objects.filter(topic=topic).order_by("-version").first()


def relevant_segments(topic: Topic, limit: int = MAX_SEGMENTS) -> list[tuple[str, str]]:
    """(docno, text) of the topic's judged relevant segments (the collection's qrels), those with a text first."""
    collection = topic.collection
    frame = qrels(collection, topics=[topic.qid])
    docnos = [d for d, rel in zip(frame["docno"], frame["rel"], strict=True) if collection.is_relevant(int(rel))]
    found = []
    for docno in docnos[: limit * 2]:
        held = document_for(collection, docno)
        found.append((docno, (held.text if held else "")[:SEGMENT_CHARS]))
    found.sort(key=lambda pair: not pair[1])
    return found[:limit]


def _unchanged(bank: NuggetBank | None, drafts: list[Draft]) -> bool:
    if bank is None:
        return not drafts
    now = [(n.text, n.importance, n.pk) for n in bank.nuggets.order_by("order")]
    return now == [(d.text, d.importance, d.origin) for d in drafts]


def bank_save(*, topic: Topic, user, drafts: list[Draft], based_on: int, note: str,
              source: str = Source.WEB) -> NuggetBank | None:
    """A new version of the topic's bank holding ``drafts`` in order, made from version ``based_on`` (0: none);
    None when nothing changed. BankRefused when a newer version than ``based_on`` exists, when a nugget has no
    text, or an importance other than vital or okay."""
    drafts = [Draft(" ".join(d.text.split()), d.importance, d.origin, d.source, d.machine_judge_id, d.provenance)
              for d in drafts]
    for i, draft in enumerate(drafts, start=1):
        if not draft.text:
            raise BankRefused(f"nugget {i} has no text")
        if draft.importance not in Nugget.Importance.values:
            raise BankRefused(f"nugget {i} is marked {draft.importance!r}, not vital or okay")
    with transaction.atomic():
        latest = NuggetBank.objects.filter(topic=topic).aggregate(v=Max("version"))["v"] or 0
        if latest != based_on:
            raise BankRefused(f"Not saved: version {latest} of this bank was saved since you opened version "
                              f"{based_on}. Your changes are shown on the newest version; make them again.")
        bank = NuggetBank.objects.filter(topic=topic, version=latest).first()
        if _unchanged(bank, drafts):
            return None
        origins = set(Nugget.objects.filter(bank__topic=topic, pk__in=[d.origin for d in drafts if d.origin])
                      .values_list("pk", flat=True))
        try:
            made = NuggetBank.objects.create(collection=topic.collection, topic=topic, version=latest + 1,
                                             query=bank.query if bank else topic.title, source=source,
                                             note=note[:500], created_by=user)
        except IntegrityError:  # the same version saved at the same moment by someone else
            raise BankRefused("Not saved: someone saved this bank at the same moment; reload and try again.") from None
        Nugget.objects.bulk_create([
            Nugget(bank=made, order=k, text=d.text, importance=d.importance,
                   origin_id=d.origin if d.origin in origins else None, source=d.source, created_by=user,
                   machine_judge_id=d.machine_judge_id, provenance=d.provenance or {})
            for k, d in enumerate(drafts)])
    return made

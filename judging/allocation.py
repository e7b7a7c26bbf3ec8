"""Who judges what: pooled documents allocated to assessors, balanced by reading effort. Django-free.

Each unit of work (a whole topic, or a batch of a topic's pooled documents in judging order) needs
``overlap`` distinct assessors. Units are taken from the largest effort down, and each goes to the
assessors with the least work so far (longest-processing-time-first greedy, R. L. Graham, "Bounds on
multiprocessing timing anomalies", SIAM J. Appl. Math. 17, 1969), counting the unjudged work they
already hold. An assessor who already holds a document of the unit is not chosen for it again.
Effort is reading effort: the words of each document plus a fixed cost per document for reading the
topic and deciding.

>>> pieces = allocate([(1, "a", 1), (2, "b", 1), (3, "c", 1)], holders={}, lengths={"a": 450, "b": 350, "c": 250},
...                   load={7: 0, 8: 0}, overlap=1)
>>> [(p.topic, p.assessor, p.effort) for p in pieces]
[(1, 7, 500), (2, 8, 400), (3, 8, 300)]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

__all__ = ["PER_DOCUMENT_EFFORT", "UNKNOWN_DOCUMENT_LENGTH", "Piece", "allocate", "effort"]

#: Words an assessor "reads" per document on top of its text: the topic, the decision, the keypress.
PER_DOCUMENT_EFFORT = 50
#: Effort of a document whose text the workbench does not hold.
UNKNOWN_DOCUMENT_LENGTH = 300

Topic = Hashable
Assessor = Hashable


@dataclass(frozen=True)
class Piece:
    """Documents of one topic given to one assessor: ``docs`` as (docno, judging order)."""

    topic: Topic
    assessor: Assessor
    docs: tuple[tuple[str, int], ...]
    effort: int


def effort(docnos: Iterable[str], lengths: Mapping[str, int]) -> int:
    """Reading effort of these documents (words + a fixed cost per document)."""
    docnos = list(docnos)
    return sum(lengths.get(d, UNKNOWN_DOCUMENT_LENGTH) for d in docnos) + PER_DOCUMENT_EFFORT * len(docnos)


def _units(rows: Sequence[tuple[Topic, str, int]], holders, overlap: int,
           batch_size: int | None) -> list[tuple[Topic, list[tuple[str, int]]]]:
    """Each topic's documents that still need assessors, whole or in batches, in judging order."""
    by_topic: dict[Topic, list[tuple[str, int]]] = defaultdict(list)
    for topic, docno, order in rows:
        if len(holders[(topic, docno)]) < overlap:
            by_topic[topic].append((docno, order))
    units = []
    for topic, docs in by_topic.items():
        size = batch_size or len(docs)
        units.extend((topic, docs[i:i + size]) for i in range(0, len(docs), size))
    return units


def allocate(rows: Sequence[tuple[Topic, str, int]], *, holders: Mapping[tuple[Topic, str], set[Assessor]],
             lengths: Mapping[str, int], load: Mapping[Assessor, int], overlap: int = 1,
             batch_size: int | None = None) -> list[Piece]:
    """Give every document of ``rows`` (topic, docno, judging order) to ``overlap`` distinct assessors.

    ``holders``: who already holds each (topic, docno); ``load``: every candidate assessor's unjudged
    effort so far (ties go to the smaller key). Documents held by ``overlap`` assessors already are
    skipped. Returns the pieces in the order they were allocated.
    """
    holders = defaultdict(set, {key: set(value) for key, value in holders.items()})
    load = dict(load)
    units = _units(rows, holders, overlap, batch_size)
    units.sort(key=lambda unit: -effort((d for d, _ in unit[1]), lengths))
    pieces = []
    for topic, docs in units:
        taken = set().union(*(holders[(topic, d)] for d, _ in docs))
        candidates = sorted((a for a in load if a not in taken), key=lambda a: (load[a], a))
        needed = overlap - min(len(holders[(topic, d)]) for d, _ in docs)
        for assessor in candidates[:needed]:
            docs_for = tuple((d, o) for d, o in docs if len(holders[(topic, d)]) < overlap)
            work = effort((d for d, _ in docs_for), lengths)
            for d, _ in docs_for:
                holders[(topic, d)].add(assessor)
            load[assessor] += work
            pieces.append(Piece(topic, assessor, docs_for, work))
    return pieces

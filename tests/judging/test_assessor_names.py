"""Who judged a collection, asked of the database (:func:`judging.qrels.assessor_names`), against the names
read from every current grade (:func:`judging.qrels.assessor_judgments`), on the records that make them
differ: revisions, "cannot judge", adjudications and machine assessors."""

from __future__ import annotations

from judging.models import Judgment
from judging.qrels import assessor_judgments, assessor_names

WEB, IMPORT, ADJUDICATION, MACHINE = (Judgment.Source.WEB, Judgment.Source.IMPORT, Judgment.Source.ADJUDICATION,
                                      Judgment.Source.MACHINE)


def _judge(collection, qid, docno, assessor, source=WEB, grade=1, cannot=False, previous=None):
    return Judgment.objects.create(collection=collection, topic=collection.topics.get(qid=qid), docno=docno,
                                   grade=None if cannot else grade, cannot_judge=cannot, assessor=assessor,
                                   source=source, previous=previous)


def _read_whole(collection) -> list[str]:
    frame = assessor_judgments(collection)
    return sorted(frame["assessor"].unique()) if len(frame) else []


def test_the_names_are_those_with_a_current_grade(pool):
    collection = pool.collection
    assert assessor_names(collection) == _read_whole(collection) == []
    first = _judge(collection, "301", "d1", "alice")
    _judge(collection, "301", "d1", "alice", grade=0, previous=first)  # revised: still alice's
    carol = _judge(collection, "301", "d2", "carol")
    _judge(collection, "301", "d2", "carol", cannot=True, previous=carol)  # her only grade taken back
    _judge(collection, "302", "d5", "dave", cannot=True)  # never graded anything
    _judge(collection, "301", "d1", "erin", source=ADJUDICATION)  # an adjudicator is not an assessor
    _judge(collection, "301", "d3", "llm", source=MACHINE)  # nor is a machine
    _judge(collection, "302", "d5", "qrels", source=IMPORT)
    later = _judge(collection, "303", "d7", "bob", cannot=True)
    _judge(collection, "303", "d7", "bob", grade=2, previous=later)  # graded after "cannot judge"
    assert assessor_names(collection) == _read_whole(collection) == ["alice", "bob", "qrels"]
    _judge(collection, "302", "d4", "carol")  # a grade of hers again
    _judge(collection, "302", "d6", "erin")  # the adjudicator's own grade, as an assessor
    assert assessor_names(collection) == _read_whole(collection) == ["alice", "bob", "carol", "erin", "qrels"]

"""The pooled and judged counts behind completeness and the judged figures (one grouping in the database)
against a plain-Python count of the same rows."""

from __future__ import annotations

from judging.completeness import Counts, pool_judged_counts, topic_completeness
from judging.models import Judgment
from pooling.models import Pool, PoolEntry

WEB, IMPORT, MACHINE = Judgment.Source.WEB, Judgment.Source.IMPORT, Judgment.Source.MACHINE


def _judge(collection, qid, docno, source=WEB, assessor="alice", grade=1, cannot=False):
    return Judgment.objects.create(collection=collection, topic=collection.topics.get(qid=qid), docno=docno,
                                   grade=None if cannot else grade, cannot_judge=cannot, assessor=assessor,
                                   source=source)


def _reference(collection, pools, topics=None) -> dict[str, Counts]:
    pooled = {(e.topic.qid, e.docno) for e in PoolEntry.objects.filter(pool__in=pools).select_related("topic")}
    judged = {(j.topic.qid, j.docno) for j in Judgment.objects.filter(collection=collection)
              .exclude(source=MACHINE).select_related("topic")}
    found = {}
    for qid in {q for q, _ in pooled | judged}:
        if topics is None or qid in topics:
            mine = {d for q, d in pooled if q == qid}
            seen = {d for q, d in judged if q == qid}
            found[qid] = Counts(len(mine), len(mine & seen), len(seen))
    return found


def test_counts_match_a_plain_count_across_pools_revisions_machines_and_topics(pool):
    collection = pool.collection
    topics = {t.qid: t for t in collection.topics.all()}
    second = Pool.objects.create(collection=collection, name="second", strategy="depth", params={"depth": 5})
    for order, (qid, docno) in enumerate([("301", "d1"), ("301", "d9"), ("303", "d2")], start=1):
        PoolEntry.objects.create(pool=second, topic=topics[qid], docno=docno, judging_order=order, pool_rank=order)
    hidden = Pool.all_objects.create(collection=collection, name="building", strategy="depth", published=False)
    PoolEntry.objects.create(pool=hidden, topic=topics["303"], docno="d8", judging_order=1, pool_rank=1)
    first = _judge(collection, "301", "d1")
    Judgment.objects.create(collection=collection, topic=topics["301"], docno="d1", grade=0, assessor="alice",
                            source=WEB, previous=first)  # a revision: the document once
    _judge(collection, "301", "d1", assessor="bob")  # a second assessor: once still
    _judge(collection, "301", "d2", cannot=True)  # "cannot judge" is a look at it
    _judge(collection, "301", "d3", source=MACHINE, assessor="llm")  # a machine's is not
    _judge(collection, "302", "d5", source=IMPORT, assessor="qrels")
    _judge(collection, "303", "d7")  # judged, never pooled
    published = Pool.objects.filter(collection=collection)
    counts = pool_judged_counts(collection, published)
    assert counts == _reference(collection, published)
    assert counts["301"] == Counts(pooled=5, judged_in_pool=2, judged=2)  # d1 in both pools counts once
    assert counts["303"] == Counts(pooled=1, judged_in_pool=0, judged=1)  # d8 of the hidden pool is not pooled
    assert pool_judged_counts(collection, published, ["302", "303"]) == _reference(collection, published,
                                                                                   {"302", "303"})
    assert pool_judged_counts(collection, Pool.objects.none()) == {
        "301": Counts(0, 0, 2), "302": Counts(0, 0, 1), "303": Counts(0, 0, 1)}
    state = topic_completeness(collection)
    assert state.partial == {"301": (2, 5), "302": (1, 2)} and state.unjudged == ["303"] and not state.complete


def test_completeness_and_the_judged_figures_of_one_pool_count_once_a_version(pool):
    """The completeness and the main pool's judged figures are the same counts: the database is asked once per
    version (seconds at 1,000 runs); a judgment saved asks again, and a second pool changes neither (both are
    counted on the main pool)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from evaluation import cache, scoring, selectors

    collection = pool.collection

    def counted() -> tuple[int, object, object]:
        with CaptureQueriesContext(connection) as seen, cache.one_version():
            state, figures = scoring.completeness(collection), selectors.judged_figures(collection)
        return sum("SUM(p * j)" in q["sql"] for q in seen.captured_queries), state, figures

    _judge(collection, "301", pool.entries.filter(topic__qid="301").first().docno)
    groupings, state, figures = counted()
    assert groupings == 1
    assert figures.judged_in_pool == 1 and len(state.partial) + len(state.complete) >= 1
    _judge(collection, "302", pool.entries.filter(topic__qid="302").first().docno)
    groupings, before, figures = counted()
    assert groupings == 1 and figures.judged_in_pool == 2  # a new version: counted again, and right
    Pool.objects.create(collection=collection, name="second", strategy="depth", params={"depth": 5})
    groupings, after, figures = counted()
    assert groupings == 1 and figures.judged_in_pool == 2 and figures.pool == pool.name  # still the main pool's
    assert after == before  # the second pool's unjudged documents leave every topic as it was

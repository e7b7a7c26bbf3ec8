"""Pools from answers: cited segments as an ordinary pool, answers and citation pairs as answer pools."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from answers.imports import answers_import
from answers.models import AnswerPool, AnswerPoolItem, AnswerTask
from answers.pools import answer_pool_build, cited_pool_build
from pooling.models import PoolEntry
from tests.answers.generated import answer_line
from workbench.collections.services import collection_create
from workbench.models import Topic


@pytest.fixture
def track(db, tmp_path):
    collection = collection_create(slug="rag", name="RAG")
    for qid in ("1", "2"):
        Topic.objects.create(collection=collection, qid=qid, title=f"q{qid}")
    a = tmp_path / "a.jsonl"
    a.write_text(answer_line("a", "1", [("A1.", [0, 1]), ("A2.", [1])], ["s1", "s2"]) + "\n"
                 + answer_line("a", "2", [("A3.", [0])], ["s9"]) + "\n")
    b = tmp_path / "b.jsonl"
    b.write_text(answer_line("b", "1", [("B1.", [0]), ("B2.", [])], ["s3"]) + "\n")
    answers_import(collection=collection, sources=[a, b])
    return collection


def test_cited_segments_are_pooled_for_relevance_judging(track):
    summary = cited_pool_build(collection=track)
    assert summary.pool.name == "answers" and summary.total == 4
    assert sorted(PoolEntry.objects.filter(pool=summary.pool).values_list("topic__qid", "docno")) == [
        ("1", "s1"), ("1", "s2"), ("1", "s3"), ("2", "s9")]
    assert sorted(PoolEntry.objects.filter(pool=cited_pool_build(collection=track, name="top1", depth=1).pool)
                  .values_list("docno", flat=True)) == ["s1", "s3", "s9"]


def test_answer_and_support_pools_hold_answers_and_citation_pairs_and_extend_without_repeats(track, tmp_path):
    nugget = answer_pool_build(collection=track, kind="nugget")
    assert (nugget.added, nugget.total, nugget.topics) == (3, 3, 2)
    support = answer_pool_build(collection=track, kind="support")
    pairs = sorted(AnswerPoolItem.objects.filter(pool=support.pool).values_list("sentence__text", "docno"))
    assert pairs == [("A1.", "s1"), ("A1.", "s2"), ("A2.", "s2"), ("A3.", "s9"), ("B1.", "s3")]
    c = tmp_path / "c.jsonl"
    c.write_text(answer_line("c", "1", [("C1.", [0])], ["s4"]) + "\n")
    answers_import(collection=track, sources=[c])
    again = answer_pool_build(collection=track, kind="nugget")
    assert (again.added, again.total) == (1, 4)
    orders = list(AnswerPoolItem.objects.filter(pool=again.pool, topic__qid="1").values_list("judging_order", flat=True))
    assert sorted(orders) == [0, 1, 2]
    with pytest.raises(ValueError, match="holds nugget items, not support"):
        answer_pool_build(collection=track, kind="support", name="nugget")


def test_the_command_builds_every_pool_and_gives_topics_to_assessors(track):
    User.objects.create_user("ann")
    out = io.StringIO()
    call_command("build_answer_pools", "rag", "--assessor", "ann", stdout=out)
    text = out.getvalue()
    assert "pool 'answers' (cited segments): 4 added" in text
    assert "answer pool 'nugget' (nugget): 3 added, 3 items on 2 topics" in text
    assert AnswerTask.objects.filter(assessor__username="ann").count() == 4
    assert set(AnswerPool.objects.values_list("kind", flat=True)) == {"nugget", "support"}
    with pytest.raises(CommandError, match="no answer run 'zzz' in collection 'rag'"):
        call_command("build_answer_pools", "rag", "--run", "zzz", "--kind", "nugget")
    with pytest.raises(CommandError, match="no user 'bob'"):
        call_command("build_answer_pools", "rag", "--assessor", "bob")

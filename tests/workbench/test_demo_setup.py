"""`make demo`: the demo collection, its pool, pre-made judgments and users; re-running keeps data."""

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from judging.models import Assignment, Judgment
from pooling.models import PoolEntry
from workbench.models import Collection, Run


@pytest.mark.slow
def test_build_demo_builds_a_judgeable_collection_and_keeps_it_on_rerun(db, client):
    out = StringIO()
    call_command("build_demo", stdout=out)
    text = out.getvalue()
    assert "users: organizer, assessor, assessor2 (password: 'demo')" in text
    collection = Collection.objects.get(slug="demo")
    assert collection.topics.count() >= 25 and collection.documents.count() > 3000
    assert Run.objects.filter(collection=collection).count() >= 4
    assert list(Run.objects.filter(collection=collection, contributes=False).values_list("tag", flat=True)) == ["ql-dir"]
    assert PoolEntry.objects.filter(pool__collection=collection).count() > 400
    assert Judgment.objects.filter(collection=collection, assessor="organizer").count() > 400
    for name in ["organizer", "assessor", "assessor2"]:
        assert authenticate(username=name, password="demo") is not None
    shared = {a.topic.qid for a in Assignment.objects.filter(assessor__username="assessor")} & \
             {a.topic.qid for a in Assignment.objects.filter(assessor__username="assessor2")}
    assert shared == {"1", "2", "3"}, "a few topics are judged by both assessors"
    # the assessor sees what each grade means and the guidelines, as a real track would give them
    client.force_login(authenticate(username="assessor", password="demo"))
    page = client.get("/judge/next/", follow=True).content.decode()
    assert "What each grade means" in page and "near misses that only share the words" in page
    assert "Judging the demo" in page

    Judgment.objects.create(collection=collection, topic=collection.topics.get(qid="1"), docno="json", grade=1,
                            assessor="assessor")
    again = StringIO()
    call_command("build_demo", stdout=again)
    assert "exists: keeping its data" in again.getvalue()
    assert Judgment.objects.filter(assessor="assessor").count() == 1

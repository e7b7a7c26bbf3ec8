"""`make demo`: the demo collection, its pool, pre-made judgments and users; re-running keeps data."""

from io import StringIO

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from judging.models import Assignment, Judgment
from participation.models import Submission, Track
from pooling.models import PoolEntry
from workbench.models import Collection, Run


@pytest.mark.slow
def test_build_demo_builds_a_judgeable_collection_and_keeps_it_on_rerun(db, client):
    out = StringIO()
    call_command("build_demo", stdout=out)
    text = out.getvalue()
    assert "users: organizer, assessor, assessor2, participant, researcher (password: 'demo')" in text
    collection = Collection.objects.get(slug="demo")
    assert collection.topics.count() >= 25 and collection.documents.count() > 3000
    assert Run.objects.filter(collection=collection).count() >= 4
    assert list(Run.objects.filter(collection=collection, contributes=False).values_list("tag", flat=True)) == ["ql-dir"]
    assert PoolEntry.objects.filter(pool__collection=collection).count() > 400
    assert Judgment.objects.filter(collection=collection, assessor="organizer").count() > 400
    for name in ["organizer", "assessor", "assessor2", "participant", "researcher"]:
        assert authenticate(username=name, password="demo") is not None
    shared = {a.topic.qid for a in Assignment.objects.filter(assessor__username="assessor")} & \
             {a.topic.qid for a in Assignment.objects.filter(assessor__username="assessor2")}
    assert shared == {"1", "2", "3"}, "a few topics are judged by both assessors"
    # the assessor sees what each grade means and the guidelines, as a real track would give them
    client.force_login(authenticate(username="assessor", password="demo"))
    page = client.get("/judge/next/", follow=True).content.decode()
    assert "What each grade means" in page and "near misses that only share the words" in page
    assert "Judging the demo" in page

    # the demo is a shared task too: its teams submitted the runs, and the results are out
    track = Track.objects.get(collection=collection)
    assert track.results_released and track.topics_published and track.window()[0]
    assert sorted(Submission.objects.filter(team__track=track, status="accepted").values_list("team__name", "tag")) == \
        sorted(Run.objects.filter(collection=collection).values_list("team", "tag"))
    client.force_login(authenticate(username="participant", password="demo"))
    portal = client.get("/participate/demo/").content.decode()
    assert "bm25-rm3" in portal and "tfidf-title" not in portal  # the team's own runs only
    results = client.get("/participate/demo/results/").content.decode()
    assert "bm25-title" in results and "another team" in results  # the other teams' runs anonymous
    client.force_login(authenticate(username="researcher", password="demo"))
    assert "ql-dir" in client.get("/collections/demo/leaderboard/").content.decode()
    assert client.get("/console/demo/").status_code == 403

    Judgment.objects.create(collection=collection, topic=collection.topics.get(qid="1"), docno="json", grade=1,
                            assessor="assessor")
    again = StringIO()
    call_command("build_demo", stdout=again)
    assert "exists: keeping its data" in again.getvalue()
    assert Judgment.objects.filter(assessor="assessor").count() == 1


def test_build_demo_refuses_a_files_folder_that_is_a_file_in_one_line(db, tmp_path):
    from django.core.management.base import CommandError

    taken = tmp_path / "demo-files"
    taken.write_text("a file, not a folder")
    with pytest.raises(CommandError, match=r"demo-files: not a folder$"):
        call_command("build_demo", files=str(taken), stdout=StringIO())
    assert not Collection.objects.exists()

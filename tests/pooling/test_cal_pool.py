"""A cal pool in the workbench: built like the adaptive pools, fed by the assessors' judgments."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.assignments import assignments_create
from judging.models import AssignmentItem
from judging.services import judgment_record
from pooling.models import CollectionFeatures, Pool, PoolEntry
from tests import factories
from workbench.models import Document

TEXTS = {"c0": "organized crime mafia smuggling ring",
         **{f"m{i}": f"mafia smuggling ring arrested harbour {i}" for i in range(3)},
         **{f"n{i}": f"weather bulletin rainfall forecast {i}" for i in range(30)}}


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def collection(db):
    collection = factories.collection_with_topics()
    Document.objects.bulk_create(Document(collection=collection, docno=d, text=t) for d, t in TEXTS.items())
    return collection


def judge_next(assessor, grade: int, token: str) -> str | None:
    item = AssignmentItem.objects.filter(assignment__assessor=assessor, latest__isnull=True).first()
    if item is None:
        return None
    judgment_record(item_id=item.pk, user=assessor, grade=grade, client_token=token)
    return item.docno


def test_the_next_document_comes_from_the_model_retrained_on_the_judgments(collection, assessor):
    out = run("build_pool", "robust", "--strategy", "cal", "--budget", "4", "--seed", "3")
    assert "added 3 documents" in out  # one per topic to start with
    # what it used, not "from 0 runs of the 5 offered"
    assert "on 3 topics from the documents' text (cal: learned from the judgments, no run pooled)" in out
    pool = Pool.objects.get()
    assert pool.params["cal"]["budget"] == 4 and pool.params["runs"] == []
    assert CollectionFeatures.objects.get(collection=collection).documents == len(TEXTS)
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    first = judge_next(assessor, 1, "a")
    assert first == "c0"  # the only document that shares a word with the topic's text
    # c0 taught the classifier 'mafia', 'smuggling', 'ring': the next batch is the documents that say so
    following = [judge_next(assessor, 1, f"b{n}") for n in range(3)]
    assert sorted(following) == ["m0", "m1", "m2"]
    assert judge_next(assessor, 1, "end") is None  # budget of 4 spent
    assert PoolEntry.objects.filter(pool=pool, topic__qid="301").count() == 4


def test_cal_parameters_are_checked_once_with_one_clear_line(collection):
    with pytest.raises(CommandError, match="growth"):
        run("build_pool", "robust", "--strategy", "cal", "--budget", "4", "--cal", "growth=-1")
    with pytest.raises(CommandError, match="is not KEY=VALUE"):
        run("build_pool", "robust", "--strategy", "cal", "--budget", "4", "--cal", "speed=3")
    with pytest.raises(CommandError, match="unknown stopping rule"):
        run("build_pool", "robust", "--strategy", "cal", "--budget", "4", "--cal", "stop=elbow")
    with pytest.raises(CommandError, match="anchor must be one of bm25, none, not 'tfidf'"):
        run("build_pool", "robust", "--strategy", "cal", "--budget", "4", "--cal", "anchor=tfidf")
    with pytest.raises(CommandError, match="needs a budget"):
        run("build_pool", "robust", "--strategy", "cal")
    assert not Pool.objects.exists()


def test_cal_refuses_a_collection_without_documents(db):
    factories.collection_with_topics("bare")
    with pytest.raises(CommandError, match="import the collection's documents"):
        run("build_pool", "bare", "--strategy", "cal", "--budget", "4")


def test_the_pools_page_shows_each_topics_stopping_state_and_the_organizer_stops_one(collection, assessor,
                                                                                     organizer, client):
    run("build_pool", "robust", "--strategy", "cal", "--budget", "4", "--seed", "3",
        "--cal", "stop=target", "target_recall=0.5", "confidence=0.5")
    pool = Pool.objects.get()
    client.force_login(organizer)
    page = client.get("/console/robust/pools/").content.decode()
    assert "Stopping state of main" in page
    assert "target set incomplete: 0 of 1 relevant documents drawn" in page  # 1 target: 50% at 50%
    response = client.post(f"/console/robust/pools/{pool.pk}/stop-topic", {"qid": "302", "reason": "off topic"})
    assert response.status_code == 302
    page = client.get("/console/robust/pools/").content.decode()
    assert "stopped</strong> (hand) at 0: off topic" in page
    assignments_create(pool=Pool.objects.get(), assessors=[assessor], topics=["302"])
    # the document offered before the stop stays to judge; after it, nothing more comes for 302
    assert judge_next(assessor, 0, "x") is not None
    assert judge_next(assessor, 0, "y") is None


def test_only_organizers_stop_topics_and_unknown_topics_are_refused(collection, assessor, organizer, client):
    run("build_pool", "robust", "--strategy", "cal", "--budget", "4")
    pool = Pool.objects.get()
    client.force_login(assessor)
    assert client.post(f"/console/robust/pools/{pool.pk}/stop-topic", {"qid": "301"}).status_code in (302, 403)
    assert "stopped" not in Pool.objects.get().params
    client.force_login(organizer)
    response = client.post(f"/console/robust/pools/{pool.pk}/stop-topic", {"qid": "999"})
    assert response.status_code == 400 and b"no topic '999'" in response.content


def test_the_console_previews_a_cal_pool_and_builds_it_with_its_parameters_in_a_job(collection, organizer, client):
    from workbench.models import Job

    client.force_login(organizer)
    url = "/console/robust/pools/"
    form = {"name": "learned", "strategy": "cal", "budget": "5", "order": "pool", "seed": "2",
            "cal": "stop=qbcb sample_size=10 target_recall=0.7"}
    preview = client.post(url, {**form, "action": "preview"})
    assert preview.status_code == 200
    assert {r["qid"]: r["budget"] for r in preview.context["preview"].rows} == {"301": 5, "302": 5, "303": 5}
    response = client.post(url, {**form, "action": "build"})
    assert response.status_code == 302
    job = Job.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))
    assert job.status == "done", job.error
    pool = Pool.objects.get(name="learned")
    assert pool.params["cal"]["stop"] == "qbcb" and pool.params["cal"]["sample_size"] == 10
    bad = client.post(url, {**form, "cal": "stop=qbcb target_recall=7", "action": "preview"})
    assert bad.status_code == 400 and "target recall must be between 0 and 1" in bad.content.decode()


def test_the_pool_page_and_export_of_a_cal_pool_answer(collection, assessor, organizer, client):
    run("build_pool", "robust", "--strategy", "cal", "--budget", "4", "--seed", "3")
    assignments_create(pool=Pool.objects.get(), assessors=[assessor], topics=["301"])
    judge_next(assessor, 1, "a")
    client.force_login(organizer)
    page = client.get("/collections/robust/pool/")
    assert page.status_code == 200 and "Continuous active learning" in page.content.decode()
    exported = run("export_pool", "robust")
    assert "c0" in exported


def test_documents_imported_after_the_build_never_make_a_judgment_compute_features(
        collection, assessor, settings, django_capture_on_commit_callbacks):
    """Features take seconds at real size: a judgment that finds them stale goes on with the stored ones and
    queues the features job (once, when committed), which stores them anew."""
    from pooling import features, tasks
    from pooling.features import KIND
    from workbench.models import Job

    features._cache.clear()  # ids repeat between tests, and with them the documents' fingerprints
    run("build_pool", "robust", "--strategy", "cal", "--budget", "6", "--seed", "3")
    assignments_create(pool=Pool.objects.get(), assessors=[assessor], topics=["301"])
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    Document.objects.bulk_create(Document(collection=collection, docno=f"late{i}", text=f"mafia harbour {i}")
                                 for i in range(5))
    from pooling.advance import forget

    forget(Pool.objects.get())  # as in another web process, which has no model of the topic in memory
    with django_capture_on_commit_callbacks(execute=True):
        assert judge_next(assessor, 1, "a") == "c0" and judge_next(assessor, 1, "b") is not None
        assert not Job.objects.filter(kind=KIND).exists()  # asked for once the judgments are committed
    queued = Job.objects.get(kind=KIND, collection=collection)  # one job for both judgments
    assert queued.status == Job.Status.QUEUED
    assert CollectionFeatures.objects.get(collection=collection).documents == len(TEXTS)  # not computed in the request
    tasks.compute_features.call(queued.pk)
    queued.refresh_from_db()
    assert queued.status == Job.Status.DONE
    assert CollectionFeatures.objects.get(collection=collection).documents == len(TEXTS) + 5


def test_the_pools_page_reads_each_topics_state_as_the_last_judgment_left_it(collection, assessor, organizer,
                                                                            client, monkeypatch):
    """A fresh web process has no topic model in memory: the page reads the stored states instead of
    rebuilding a model per topic (seconds on a real pool), and a judgment updates its topic's state."""
    from pooling import advance
    from pooling.models import PoolTopicState

    run("build_pool", "robust", "--strategy", "cal", "--budget", "4", "--seed", "3")
    pool = Pool.objects.get()
    assert set(PoolTopicState.objects.filter(pool=pool).values_list("qid", flat=True)) == {"301", "302", "303"}
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    judge_next(assessor, 1, "a")
    judge_next(assessor, 1, "b")
    assert PoolTopicState.objects.get(pool=pool, qid="301").status["found"] == 2

    def rebuilt(*args, **kwargs):
        raise AssertionError("the page rebuilt a topic's model")

    advance.forget(pool)  # as in another web process
    monkeypatch.setattr(advance, "_topic_strategy", rebuilt)
    client.force_login(organizer)
    page = client.get("/console/robust/pools/").content.decode()
    assert "Stopping state of main" in page and ">301<" in page.replace(" ", "")


def test_features_stored_before_bm25_serve_judgments_until_the_job_stores_them_again(
        collection, assessor, settings, django_capture_on_commit_callbacks):
    """Features stored by an older version (no document lengths, so no BM25 anchor) are not an error: a
    judgment goes on with them, queues the features job once, and the job stores the current layout."""
    import io

    from pooling import features, tasks
    from pooling.advance import forget
    from pooling.features import KIND
    from pooling.strategies.features import VERSION, Features, load_features
    from workbench.models import Job

    features._cache.clear()
    run("build_pool", "robust", "--strategy", "cal", "--budget", "6", "--seed", "3")
    stored = CollectionFeatures.objects.get(collection=collection)
    current = load_features(io.BytesIO(bytes(stored.data)))
    old, buffer = Features(current.docnos, current.matrix, current.idf, current.stemmed), io.BytesIO()
    old.save(buffer)  # what version 1 wrote: matrix, idf, docnos
    stored.data = buffer.getvalue()
    stored.save()
    features._cache.clear()
    forget(Pool.objects.get())  # a web process after the upgrade
    assignments_create(pool=Pool.objects.get(), assessors=[assessor], topics=["301"])
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    with django_capture_on_commit_callbacks(execute=True):
        assert judge_next(assessor, 1, "a") == "c0" and judge_next(assessor, 1, "b") is not None
    queued = Job.objects.get(kind=KIND, collection=collection)  # one job for both judgments
    assert load_features(io.BytesIO(bytes(CollectionFeatures.objects.get().data))).version == 1  # not in the request
    tasks.compute_features.call(queued.pk)
    again = load_features(io.BytesIO(bytes(CollectionFeatures.objects.get(collection=collection).data)))
    assert again.version == VERSION and again.bm25("mafia").max() > 0
    assert judge_next(assessor, 1, "c") is not None

"""The board (evaluation.board): one evaluation per collection version, computed by a job, stored as Parquet,
read by the leaderboard page without ranking a run; equal to ``manage.py trec_eval`` for every run; the page
shows the previous board marked "updating" (or says the scores are being computed) while the job runs."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from evaluation import board, cache, scoring, snapshot, tasks
from evaluation.engine import ranking
from judging.models import Judgment
from tests.evaluation.tracks import QRELS, RANKINGS, build_track, write_qrels
from workbench.models import Job

pytestmark = pytest.mark.django_db

PAGE = "/collections/robust/leaderboard/"


@pytest.fixture
def track(tmp_path):
    return build_track(tmp_path)


def _trec_eval(tmp_path, tag: str, requests) -> dict[tuple[str, str], float]:
    out = StringIO()
    call_command("trec_eval", "-q", "-M", "1000", *[a for r in requests for a in ("-m", r)],
                 write_qrels(tmp_path / "board-qrels.txt", QRELS), str(tmp_path / f"{tag}.run"), stdout=out)
    values = {}
    for line in out.getvalue().splitlines():
        name, qid, value = line.split()
        if name not in ("runid", "relstring"):
            values[(name, qid)] = float(value)
    return values


def test_the_board_equals_trec_eval_for_every_run_topic_and_measure(tmp_path, track):
    path = board.build(track, "adjudicated")
    stored = board.read(path)
    requests = stored.requests
    assert set(stored.scores) == set(RANKINGS)
    compared = 0
    for tag, scores in stored.scores.items():
        theirs = _trec_eval(tmp_path, tag, requests)
        for (name, qid), value in theirs.items():
            mine = scores.aggregate[name] if qid == "all" else scores.column(name, [qid])[0]
            assert mine == pytest.approx(value, abs=5e-5), (tag, name, qid)
            compared += 1
    assert compared > 3 * 40


def test_the_leaderboard_page_reads_the_board_and_ranks_nothing(client, organizer, track, monkeypatch):
    tasks.request_board(track)  # what the service that changed the collection asks (the job runs at once)
    assert Job.objects.filter(collection=track, kind=board.KIND, status=Job.Status.DONE).count() == 1
    client.force_login(organizer)
    first = client.get(PAGE + "?_export=json").json()
    cache.clear_caches()                                 # a fresh web worker
    monkeypatch.setattr(ranking, "rank_runs", _refuse)
    monkeypatch.setattr(scoring, "rank_runs", _refuse)
    again = client.get(PAGE + "?_export=json").json()
    assert again == first
    assert {r["run"]: r["measures"]["map"] for r in again["runs"]}["alpha"] == pytest.approx(0.5)
    page = client.get(PAGE)
    assert page.status_code == 200 and "Updating" not in page.content.decode()
    assert Job.objects.filter(collection=track, kind=board.KIND).count() == 1  # a page asks for none


def _refuse(*args, **kwargs):
    raise AssertionError("a page ranked runs in the request")


def _queue_only(settings):
    """Jobs wait for a worker that never comes (the dummy backend)."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}


def test_while_the_job_runs_the_page_shows_the_previous_board_marked_updating(client, organizer, track,
                                                                             settings,
                                                                             django_capture_on_commit_callbacks):
    tasks.request_board(track)
    client.force_login(organizer)
    before = client.get(PAGE + "?_export=json").json()
    _queue_only(settings)
    settings.BOARD_ON_CHANGE = True
    topic = track.topics.get(qid="301")
    with django_capture_on_commit_callbacks(execute=True):  # the judgment asks for the board once committed
        Judgment.objects.create(collection=track, topic=topic, docno="c", grade=1, assessor="nist",
                                source=Judgment.Source.IMPORT)
    cache.clear_caches()
    page = client.get(PAGE).content.decode()
    assert "Updating" in page and 'id="board-updating"' in page
    assert client.get(PAGE + "?_export=json").json() == before   # the old scores, not computed in the request
    assert Job.objects.filter(collection=track, kind=board.KIND, status=Job.Status.QUEUED).count() == 1


def test_with_no_board_at_all_the_page_says_it_is_being_computed(client, organizer, track, settings):
    _queue_only(settings)
    tasks.request_board(track)
    client.force_login(organizer)
    for _ in range(2):
        response = client.get(PAGE)
        assert response.status_code == 200
        assert "being computed" in response.content.decode()
    assert Job.objects.filter(collection=track, kind=board.KIND, status=Job.Status.QUEUED).count() == 1
    download = client.get(PAGE + "?_export=json")
    assert download.status_code == 503 and download["Retry-After"] == "5"


def test_a_collection_without_judgments_is_refused_in_one_line_and_the_page_queues_no_job(client, organizer,
                                                                                         tmp_path):
    from tests import factories
    from tests.evaluation.tracks import run

    factories.collection_with_topics()
    path = tmp_path / "alpha.run"
    path.write_text(factories.run_lines("alpha", RANKINGS["alpha"]))
    run("import_runs", "robust", str(path))
    client.force_login(organizer)
    for _ in range(2):
        response = client.get(PAGE)
        assert response.status_code == 400 and "no judgments" in response.content.decode()
    assert not Job.objects.filter(kind=board.KIND).exists()


def test_the_stored_board_is_dictionary_encoded_parquet_and_read_back_whole(track):
    path = board.build(track, "adjudicated")
    import pyarrow.parquet as pq

    schema = pq.read_schema(path)
    assert str(schema.field("tag").type).startswith("dictionary")
    stored = board.read(path)
    live = scoring.evaluate(track)
    for tag, s in live.items():
        assert stored.scores[tag].qids == s.qids
        assert stored.scores[tag].aggregate == pytest.approx(s.aggregate)
    assert stored.meta["teams"] == snapshot.snapshot(track).teams


def test_someone_who_may_not_see_results_gets_no_board_and_queues_no_job(client, outsider, track, settings):
    _queue_only(settings)
    client.force_login(outsider)
    response = client.get(PAGE)
    assert response.status_code == 403 and "being computed" not in response.content.decode()
    assert not Job.objects.filter(kind=board.KIND).exists()


def test_the_board_leaderboard_equals_the_one_evaluated_in_the_request(track):
    from evaluation import board_leaderboard
    from evaluation import leaderboard as lb

    live = lb.leaderboard(track, measures=["map", "P.10", "ndcg_cut.10"]).as_dict(per_topic=True)
    stored = board.read(board.build(track, "adjudicated"))
    cache.clear_caches()
    read = board_leaderboard.from_board(stored, measures=["map", "P.10", "ndcg_cut.10"]).as_dict(per_topic=True)
    assert read == live
    assert board_leaderboard.board_covers(["map"], stored) and not board_leaderboard.board_covers(["err_cut.5"], stored)


def test_a_new_judgment_queues_the_board_job_once_committed(track, settings, django_capture_on_commit_callbacks):
    _queue_only(settings)
    settings.BOARD_ON_CHANGE = True
    topic = track.topics.get(qid="302")
    with django_capture_on_commit_callbacks(execute=True):
        for docno in ("h", "z"):
            Judgment.objects.create(collection=track, topic=topic, docno=docno, grade=0, assessor="nist",
                                    source=Judgment.Source.IMPORT)
    queued = Job.objects.filter(collection=track, kind=board.KIND, status=Job.Status.QUEUED)
    assert queued.count() == 1 and queued.get().params["policies"] == ["adjudicated"]


def test_a_qrels_import_queues_the_board_job_once_committed_and_a_page_queues_none(
        client, organizer, track, settings, tmp_path, django_capture_on_commit_callbacks):
    """A qrels import writes its judgments in bulk (no post_save): its service asks for the board itself."""
    from judging.services import qrels_import

    _queue_only(settings)
    settings.BOARD_ON_CHANGE = True
    client.force_login(organizer)
    assert client.get(PAGE).status_code == 200  # no board and no job: evaluated in the request
    assert not Job.objects.filter(kind=board.KIND).exists()
    with django_capture_on_commit_callbacks(execute=True):
        qrels_import(collection=track, source=write_qrels(tmp_path / "more.txt", {("302", "h"): 1}), assessor="nist")
    queued = Job.objects.filter(collection=track, kind=board.KIND, status=Job.Status.QUEUED)
    assert queued.count() == 1
    assert "being computed" in client.get(PAGE).content.decode()
    assert queued.count() == 1


def test_a_split_run_import_queues_the_board_job_once_its_join_commits(track, settings, tmp_path,
                                                                       django_capture_on_commit_callbacks):
    """The join of a split import moves the staged runs in with bulk_update (no post_save): it asks itself."""
    from tests import factories
    from workbench.collections.run_imports import RunSpec, runs_adopt, runs_check, runs_stage

    path = tmp_path / "extra.run"
    path.write_text(factories.run_lines("extra", RANKINGS["alpha"]))
    checked, problems = runs_check(track, [RunSpec(source=path, team="extra")])
    assert problems == []
    runs_stage("robust-part-1", checked)
    _queue_only(settings)
    settings.BOARD_ON_CHANGE = True
    with django_capture_on_commit_callbacks(execute=True):
        runs_adopt(track, ["robust-part-1"], checked)
    queued = Job.objects.filter(collection=track, kind=board.KIND, status=Job.Status.QUEUED)
    assert queued.count() == 1 and track.runs.filter(tag="extra").exists()

"""Boards in object storage (evaluation.board_store): with files in an S3 bucket (a real SeaweedFS on
127.0.0.1, tests/s3server.py), the board and the other results pages' figures a worker builds live in the
bucket, and a web process on a machine that did not build them (another ``VAR_DIR``, another ``BOARD_DIR``)
serves them without ranking a run; a rebuilt board (a new version) replaces the one a web process had read."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from evaluation import board, board_extras, board_store, cache, scoring, tasks
from evaluation.engine import ranking
from evaluation.tasks import build_board
from judging.models import Judgment
from tests.evaluation.tracks import build_track
from workbench.models import Job

pytestmark = pytest.mark.django_db

PAGE = "/collections/robust/leaderboard/"


@pytest.fixture
def machines(settings, s3, tmp_path):
    """The worker's and the web process's own disks (``VAR_DIR``, ``BOARD_DIR``), one database and one bucket
    (under a prefix of this test's own); jobs wait in the queue until the test runs them as the worker."""
    prefix = f"t-{uuid.uuid4().hex[:8]}"
    settings.STORAGES = s3.storages(prefix)
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}

    memories: dict[str, list] = {}
    current = ["none"]

    def be(machine: str, *, fresh: bool = True) -> Path:
        """Act as ``machine``'s process: a fresh one (nothing read yet), or the one that was left (what it had
        read still in its memory: each machine's in-process cache is kept aside while another acts)."""
        memories[current[0]] = list(cache.cache._data.items())
        cache.clear_caches()
        if not fresh:
            for key, value in memories.get(machine, []):
                cache.cache.put(key, value)
        current[0] = machine
        settings.VAR_DIR = tmp_path / machine
        settings.BOARD_DIR = tmp_path / machine / "boards"
        settings.WORK_DIR = tmp_path / machine / "work"
        return settings.BOARD_DIR

    be.keys = lambda sub="": [k.removeprefix(f"{prefix}/") for k in s3.keys(f"{prefix}/{sub}")]
    return be


def _run_queued_board_job(be, *, fresh: bool = True) -> None:
    be("worker", fresh=fresh)
    job = Job.objects.get(kind=board.KIND, status=Job.Status.QUEUED)
    build_board.call(job.pk)
    job.refresh_from_db()
    assert (job.status, job.error) == (Job.Status.DONE, ""), job.result


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*.parquet")) if folder.exists() else []


def _maps(response) -> dict[str, float]:
    return {r["run"]: r["measures"]["map"] for r in response.json()["runs"]}


def test_a_board_built_by_a_worker_is_served_by_a_web_process_that_shares_no_disk_with_it(
        client, organizer, tmp_path, machines, monkeypatch):
    web = machines("web")
    track = build_track(tmp_path)
    tasks.request_board(track)  # what the imports' services ask once committed
    client.force_login(organizer)
    assert "being computed" in client.get(PAGE).content.decode()  # no board yet: the job is queued
    _run_queued_board_job(machines)
    version = board.version_key(cache.version(track))
    stored = machines.keys(f"boards/{track.pk}/")
    assert f"boards/{track.pk}/{version}.adjudicated.parquet" in stored
    assert f"boards/{track.pk}/extras/{version}.adjudicated.curves.parquet" in stored
    expected = {tag: s.aggregate["map"] for tag, s in scoring.evaluate(track).items()}

    web = machines("web")
    assert _files(web) == []
    monkeypatch.setattr(ranking, "rank_runs", _refuse)
    monkeypatch.setattr(scoring, "rank_runs", _refuse)
    response = client.get(PAGE + "?_export=json")
    assert response.status_code == 200 and _maps(response) == pytest.approx(expected)
    assert _files(web) == [f"{track.pk}/{version}.adjudicated.parquet"]  # read once into the web's cache
    curves = client.get("/collections/robust/curves/")
    assert curves.status_code == 200 and "being computed" not in curves.content.decode()
    assert f"{track.pk}/extras/{version}.adjudicated.curves.parquet" in _files(web)
    assert _files(tmp_path / "web" / "work") == []


def test_a_rebuilt_board_replaces_the_one_a_web_process_had_read(client, organizer, tmp_path, machines):
    track = build_track(tmp_path)
    tasks.request_board(track)
    _run_queued_board_job(machines)
    web = machines("web")
    client.force_login(organizer)
    before = _maps(client.get(PAGE + "?_export=json"))
    old = board.version_key(cache.version(track))

    topic = track.topics.get(qid="301")
    for docno in ("a", "b", "c", "d"):  # what alpha retrieves first, now relevant
        Judgment.objects.create(collection=track, topic=topic, docno=docno, grade=2, assessor="nist",
                                source=Judgment.Source.IMPORT)
    tasks.request_board(track)  # what the judgments ask once committed
    page = client.get(PAGE).content.decode()
    assert 'id="board-updating"' in page  # the old board, marked, while the worker computes the new one
    assert _maps(client.get(PAGE + "?_export=json")) == before
    _run_queued_board_job(machines, fresh=False)
    new = board.version_key(cache.version(track))
    expected = {tag: s.aggregate["map"] for tag, s in scoring.evaluate(track).items()}
    assert new != old and expected != pytest.approx(before)

    machines("web", fresh=False)  # the web process goes on: the old board in its memory and on its disk
    assert any(key[1:] == ("board", "adjudicated") for key in cache.cache._data)
    page = client.get(PAGE).content.decode()
    assert 'id="board-updating"' not in page
    assert _maps(client.get(PAGE + "?_export=json")) == pytest.approx(expected)
    assert {f"{track.pk}/{old}.adjudicated.parquet", f"{track.pk}/{new}.adjudicated.parquet"} <= set(_files(web))


def test_a_web_process_keeps_the_files_of_its_newest_versions_only(tmp_path, machines):
    track = build_track(tmp_path)
    web = machines("web")
    topic = track.topics.get(qid="302")
    versions = []
    for docno in ("k1", "k2", "k3", "k4", "k5"):
        Judgment.objects.create(collection=track, topic=topic, docno=docno, grade=1, assessor="nist",
                                source=Judgment.Source.IMPORT)
        cache.clear_caches()
        machines("worker")
        board.build(track, "adjudicated")
        versions.append(board.version_key(cache.version(track)))
        machines("web")
        assert board.current(track, "adjudicated").version == versions[-1]
    kept = {name.split("/")[1].split(".")[0] for name in _files(web) if "/extras/" not in name}
    assert kept == set(versions[-board_store.CACHE_VERSIONS:])
    in_bucket = {k.rsplit("/", 1)[1].split(".")[0] for k in machines.keys(f"boards/{track.pk}/")
                 if "/extras/" not in k}
    # the store keeps the newest and KEEP older ones (which older: S3 times its objects to the second, and
    # these boards are built less than a second apart)
    assert len(in_bucket) == 1 + board.KEEP and versions[-1] in in_bucket
    assert board_extras.stored(track, "adjudicated", "topics") is not None


def _refuse(*args, **kwargs):
    raise AssertionError("a page ranked runs in the request")


def test_the_policies_of_the_stored_boards_are_known_to_every_process_once_their_job_is_done(tmp_path, machines):
    track = build_track(tmp_path)
    machines("web")
    assert board.known_policies(track) == ["adjudicated"]
    tasks.request_board(track, ["adjudicated", "majority"])
    assert board.known_policies(track) == ["adjudicated"]  # queued: nothing stored yet
    _run_queued_board_job(machines)
    machines("web", fresh=False)
    assert board.known_policies(track) == ["adjudicated", "majority"]

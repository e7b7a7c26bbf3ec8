"""The board job split by topic (``JOB_PARTS``; evaluation.board_topics): the boards and extras it stores are
those one worker stores, the job shows its parts' progress, the leaderboard page shows the same numbers, and a
part whose worker died is done again by another worker, once."""

from __future__ import annotations

import re
import uuid
from io import StringIO

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command

from evaluation import board, board_extras, cache, scoring
from evaluation.tasks import build_board  # imported before any test patches what it imports
from tests.evaluation.tracks import build_track, run, write_qrels
from tests.split_jobs import DB_TASKS, assert_each_part_done_once, kill_worker_of
from workbench.jobs import lifecycle as jobs
from workbench.models import Job

TEAMS = {"alpha": "red", "beta": "red", "late": "blue"}
POLICIES = ["adjudicated", "majority", "adjudicated/complete", "nobody"]
PAGE = "/collections/robust/leaderboard/"
EXTRAS = ["qrels", "topics", "recall", "run_recall", "curves", "loo.run.map", "loo.team.map"]


def _run_board(collection, settings, tmp_path, parts: int, name: str) -> Job:
    """A board job with ``parts`` (1: one worker) storing its files in a folder of its own."""
    settings.JOB_PARTS, settings.BOARD_DIR = parts, tmp_path / name
    cache.clear_caches()  # each layout computes all, as a fresh worker does
    return jobs.job_start(build_board, kind=board.KIND, collection=collection, params={"policies": POLICIES})


def _stored(folder) -> dict:
    """Every stored file of the folder: boards as read back (scores per topic and "all", meta), extras."""
    found = {}
    for path in sorted(folder.rglob("*.parquet")):
        name = str(path.relative_to(folder))
        if "/extras/" in name:
            frame, meta = board_extras.read_extra(path)
            found[name] = (frame, meta)
        else:
            stored = board.read(path)
            found[name] = ({t: (s.qids, s.values, s.aggregate, s.measures) for t, s in stored.scores.items()},
                           stored.meta, stored.version, stored.policy)
    return found


def _same(a, b) -> None:
    """Equal, arrays and frames element for element (NaN equal to NaN)."""
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    elif isinstance(a, dict):
        assert list(a) == list(b)
        for key in a:
            _same(a[key], b[key])
    elif isinstance(a, list | tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    else:
        assert a == b or (a != a and b != b), (a, b)


def _refuse(*args, **kwargs):
    raise AssertionError("every run ranked on every topic in one process")


def _done(job: Job) -> dict:
    job.refresh_from_db()
    assert (job.status, job.error) == (Job.Status.DONE, ""), job.error
    return job.result


@pytest.mark.django_db
@pytest.mark.parametrize(("parts", "gains"), [(2, False), (3, False), (2, True)])
def test_a_split_board_stores_the_boards_and_extras_of_one_worker(tmp_path, settings, monkeypatch, parts, gains):
    collection = build_track(tmp_path, teams=TEAMS)
    if gains:  # the measures rank against the gains, the curves against the grades: a curves part of its own
        collection.scale = [{**item, "gain": 0.25 + item["grade"] / 2} for item in collection.scale]
        collection.save()
    whole = _done(_run_board(collection, settings, tmp_path, 1, "one"))
    monkeypatch.setattr(scoring, "ranked", _refuse)  # no run ranked on every topic: the parts' values are used
    if not gains:  # nor ranked again for the curves: the topic parts' rows are joined
        monkeypatch.setattr(board_extras, "all_curves", _refuse)
    job = _run_board(collection, settings, tmp_path, parts, "split")
    assert _done(job) == whole
    assert list(whole["skipped"]) == ["nobody"] and len(whole["boards"]) == 3  # no such policy: said, not split
    one, split = _stored(tmp_path / "one"), _stored(tmp_path / "split")
    assert sorted(split) == sorted(one)
    assert sum("/extras/" not in n for n in one) == 3 and any(".loo.team.map." in n for n in one)
    curves = [one[name][0] for name in one if "/extras/" in name and ".curves." in name]
    assert len(curves) == 3 and all(len(frame) and frame["y"].max() > 0 for frame in curves)
    _same(split, one)
    # 2 judged topics (3 parts asked for: 2): each policy to evaluate split in 2, its extras in 2 parts (3 with
    # gains: the curves), and the figures' part
    total = 16 if gains else 13
    assert (job.done, job.total) == (total, total)
    topics = [p.get("topics") for p in job.parts.order_by("pk").values_list("params", flat=True)]
    assert topics == [["301"], ["302"]] * 3 + [None] * (total - 6)
    assert list(job.parts.values_list("status", flat=True)) == ["done"] * total


@pytest.mark.django_db
def test_the_leaderboard_page_shows_the_same_numbers_after_a_split_board_job(tmp_path, settings, client, organizer):
    collection = build_track(tmp_path, teams=TEAMS)
    client.force_login(organizer)
    pages = {}
    for parts in (1, 2):
        _done(_run_board(collection, settings, tmp_path, parts, f"parts{parts}"))
        cache.clear_caches()  # a fresh web worker reads the stored board
        pages[parts] = (client.get(PAGE + "?_export=json").json(),
                        re.sub(r'name="csrfmiddlewaretoken" value="\w+"', "",
                               client.get("/collections/robust/reusability/").content.decode()))
    assert pages[2] == pages[1]
    assert Job.objects.filter(kind=board.KIND).count() == 2  # the pages found their boards: no job asked for
    assert Job.objects.filter(parent__isnull=False).count() == 13


@pytest.mark.django_db
def test_a_split_board_in_a_bucket_is_read_by_a_web_process_as_the_one_worker_board(tmp_path, settings, s3,
                                                                                    monkeypatch):
    collection = build_track(tmp_path, teams=TEAMS)
    read = {}
    for parts in (1, 2):
        if parts == 2:
            monkeypatch.setattr(scoring, "ranked", _refuse)  # the parts' values are used
        settings.STORAGES = s3.storages(f"t-{uuid.uuid4().hex[:8]}")  # a bucket (prefix) of each layout's own
        _done(_run_board(collection, settings, tmp_path, parts, f"worker{parts}"))
        settings.BOARD_DIR, settings.VAR_DIR = tmp_path / f"web{parts}", tmp_path / f"web{parts}"  # another disk
        cache.clear_caches()
        boards = [board.current(collection, policy) for policy in POLICIES[:3]]
        read[parts] = ([(b.scores and {t: (s.qids, s.values, s.aggregate) for t, s in b.scores.items()}, b.meta)
                        for b in boards],
                       [board_extras.stored(collection, "adjudicated", name) for name in EXTRAS])
    assert all(found is not None for found in read[2][1])
    _same(read[2], read[1])
    assert Job.objects.filter(parent__isnull=False).count() == 13


@pytest.mark.django_db
def test_a_board_job_that_finds_its_boards_stored_is_not_split(tmp_path, settings):
    collection = build_track(tmp_path, teams=TEAMS)
    whole = _done(_run_board(collection, settings, tmp_path, 1, "one"))
    settings.JOB_PARTS = 2
    job = jobs.job_start(build_board, kind=board.KIND, collection=collection, params={"policies": POLICIES})
    assert _done(job) == whole
    assert job.parts.count() == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("killed", ["while running it", "right after claiming it"])
def test_a_board_part_whose_worker_died_is_done_by_another_worker_once(tmp_path, settings, client, organizer, killed):
    collection = build_track(tmp_path, teams=TEAMS)
    whole = _done(_run_board(collection, settings, tmp_path, 1, "one"))
    settings.TASKS = DB_TASKS
    job = _run_board(collection, settings, tmp_path, 2, "split")
    worker = ("db_worker", "--batch", "--no-startup-delay", "--no-reload")
    call_command(*worker, "--max-tasks", "1", stdout=StringIO(), stderr=StringIO())  # plans: 13 parts queued
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == (Job.Status.RUNNING, 0, 13)
    client.force_login(organizer)
    assert "0 of 13 parts done (waiting for workers)" in client.get(f"/jobs/{job.pk}/?fragment=1").content.decode()
    call_command(*worker, "--max-tasks", "1", stdout=StringIO(), stderr=StringIO())  # a worker does one part
    assert "1 of 13 parts done" in client.get(f"/jobs/{job.pk}/?fragment=1").content.decode()
    dead = job.parts.order_by("pk")[1]
    kill_worker_of(dead, began=killed == "while running it")
    call_command(*worker, stdout=StringIO(), stderr=StringIO())
    assert _done(job) == whole
    _same(_stored(tmp_path / "split"), _stored(tmp_path / "one"))
    dead.refresh_from_db()
    assert dead.status == Job.Status.DONE and dead.params["retried"]
    assert_each_part_done_once("evaluation.tasks.board_part", "evaluation.tasks.join_board", 13)


@pytest.mark.django_db
def test_parts_computed_before_a_judgment_was_saved_are_not_joined_into_a_board(tmp_path, settings):
    """A board is never made of two versions: the join builds it as one worker does, at the current one."""
    from evaluation import board_topics

    collection = build_track(tmp_path, teams=TEAMS)
    settings.BOARD_DIR = tmp_path / "split"
    sections = board_topics.board_sections(collection, ["adjudicated"], shares=2)
    outputs = [board_topics.board_part(collection, {**params, "part": i}) for i, params in enumerate(sections)]
    run("import_qrels", "robust", write_qrels(tmp_path / "more.txt", {("302", "h"): 1}), "--assessor", "nist")
    cache.clear_caches()
    figures = board_topics.joined_figures(outputs[-1], outputs[:-1])
    path = board_topics.build_joined(collection, "adjudicated", outputs[:-1], figures)
    assert board.read(path).version == board.version_key(cache.version(collection))
    settings.BOARD_DIR = tmp_path / "one"
    cache.clear_caches()
    board.build(collection, "adjudicated")
    _same(_stored(tmp_path / "split"), _stored(tmp_path / "one"))


@pytest.mark.django_db
def test_the_join_computes_no_extra_the_parts_computed(tmp_path, settings, monkeypatch):
    from evaluation import board_topics

    collection = build_track(tmp_path, teams=TEAMS)
    sections = board_topics.board_sections(collection, ["adjudicated"], shares=2)
    outputs = [board_topics.board_part(collection, {**params, "part": i}) for i, params in enumerate(sections)]
    extras = [data for data, params in zip(outputs, sections, strict=True) if "extras" in params]
    topics = [data for data, params in zip(outputs, sections, strict=True) if "topics" in params]
    assert sorted(board_topics.extra_tables(extras, board.version_key(cache.version(collection)))) == [
        "qrels", "recall", "topics"]  # the curves: from the topic parts' rows
    computed, compute = [], board_extras.computed_extra
    monkeypatch.setattr(board_extras, "computed_extra", lambda *a: computed.append(a[-1]) or compute(*a))
    monkeypatch.setattr(scoring, "ranked", _refuse)
    board_topics.build_joined(collection, "adjudicated", topics, board_topics.joined_figures(outputs[-1], topics),
                              extras=extras)
    assert computed == ["run_recall"]  # it reads the board just written


def test_a_part_leaves_the_curves_to_the_join_when_a_judged_document_repeats_below_the_cut(monkeypatch):
    """The measures rank the first -M documents, the curves every one: a repeat only the curves see is not
    joined from the parts (the join computes the curves as one worker does, and says what one worker says)."""
    from evaluation.engine.qrels import Qrels
    from evaluation.engine.ranking import rank_runs
    from evaluation.report_topics import _ranked

    monkeypatch.setattr(scoring, "MAX_DEPTH", 2)
    qrels = Qrels.from_frame(pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [1, 0]}))
    repeated = pd.DataFrame({"qid": ["1"] * 4, "docno": ["a", "c", "b", "b"], "score": [4.0, 3.0, 2.0, 1.0]})
    ranking, rows = _ranked(qrels, [repeated], curves=True, level=1)
    assert rows is None
    np.testing.assert_array_equal(ranking.e_pos, rank_runs(qrels, [repeated], max_depth=2).e_pos)
    once = repeated.iloc[:3]
    ranking, rows = _ranked(qrels, [once], curves=True, level=1)
    assert list(rows.hit_pos) == [0] and list(rows.lengths) == [3] and list(ranking.lengths) == [2]

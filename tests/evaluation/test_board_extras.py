"""What the board job stores for the other results pages (evaluation.board_extras): the topic page's depth
table, recall estimates, every run's curves and leave-one-out are the numbers the pages computed in the
request before, and once stored the pages rank no run; leave-one-out of another measure is a job whose
progress the reusability page shows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evaluation import board, board_extras, cache, scoring, selectors
from evaluation.curves import run_curves
from evaluation.engine import ranking
from tests import factories
from tests.evaluation.tracks import run
from workbench.models import Job

pytestmark = pytest.mark.django_db

SCALE = [{"grade": 0, "label": "Not relevant"}, {"grade": 1, "label": "Relevant"},
         {"grade": 2, "label": "Highly relevant"}]
TEAMS = {"r0": "a", "r1": "a", "r2": "b", "r3": "b", "r4": "c", "r5": "c", "r6": "d"}


@pytest.fixture
def track(tmp_path):
    """Seven runs of four teams (r6 not pooled) over three topics, tied scores, a depth-8 pool judged on
    grades 0-2 with some documents outside the pool judged and some pooled ones left unjudged."""
    rng = np.random.default_rng(5)
    collection = factories.collection_with_topics(grades=SCALE)
    docs = [f"d{i:02d}" for i in range(40)]
    for tag, team in TEAMS.items():
        lines = []
        for qid in ("301", "302", "303")[: 2 + (tag != "r5")]:
            for rank, docno in enumerate(rng.choice(docs, size=int(rng.integers(10, 30)), replace=False), 1):
                lines.append(f"{qid} Q0 {docno} {rank} {int(rng.integers(0, 6)) / 2:.1f} {tag}")
        path = tmp_path / f"{tag}.run"
        path.write_text("\n".join(lines) + "\n")
        run("import_runs", "robust", str(path), "--team", team, *(["--no-pool"] if tag == "r6" else []))
    run("build_pool", "robust", "--depth", "8")
    judged = [(q, d) for q in ("301", "302", "303") for d in rng.choice(docs, size=25, replace=False)]
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {int(rng.choice([0, 0, 1, 2]))}\n" for q, d in judged))
    run("import_qrels", "robust", str(tmp_path / "qrels.txt"), "--assessor", "nist")
    return collection


def _live(track) -> dict:
    """What the pages computed in the request, with no board stored."""
    tags = list(track.runs.order_by("tag").values_list("tag", flat=True))
    assert board.current(track, "adjudicated") is None
    return {"topics": {q: selectors.topic_report(track, q) for q in ("301", "302", "303")},
            "recall": selectors.recall_estimates(track), "run_recall": selectors.run_recall(track),
            "curves": {k: run_curves(track, tags, kind=k) for k in ("pr", "interpolated", "roc")},
            "loo": {by: selectors.leave_one_out(track, by=by) for by in ("run", "team")}}


def test_the_stored_figures_are_those_computed_in_the_request(track, monkeypatch):
    live = _live(track)
    monkeypatch.setattr(board_extras, "CURVE_BATCH", 3)  # the curves of 7 runs ranked 3 at a time
    board.build(track, "adjudicated")
    cache.clear_caches()
    for qid, report in live["topics"].items():
        stored = selectors.topic_report(track, qid)
        assert stored["relevant"] == report["relevant"]
        pd.testing.assert_frame_equal(stored["relevant_by_depth"], report["relevant_by_depth"])
        pd.testing.assert_frame_equal(stored["runs"], report["runs"])
    pd.testing.assert_frame_equal(selectors.recall_estimates(track), live["recall"])
    pd.testing.assert_frame_equal(selectors.run_recall(track), live["run_recall"])
    tags = list(track.runs.order_by("tag").values_list("tag", flat=True))
    for kind, frame in live["curves"].items():
        pd.testing.assert_frame_equal(run_curves(track, tags, kind=kind), frame, check_exact=True)
        some = run_curves(track, tags[2:4], kind=kind)
        assert set(some["tag"]) == set(tags[2:4]) and len(some) == frame["tag"].isin(tags[2:4]).sum()
    for by, loo in live["loo"].items():
        stored = selectors.leave_one_out(track, by=by)
        assert stored is not loo and len(stored.table) == len(loo.table) > 3
        pd.testing.assert_frame_equal(stored.table, loo.table)
        assert (stored.tau, stored.tau_ap, stored.max_drop, stored.source) == (loo.tau, loo.tau_ap, loo.max_drop,
                                                                             loo.source)


def _refuse(*args, **kwargs):
    raise AssertionError("a page ranked runs in the request")


@pytest.mark.parametrize("page", ["topics/302/", "curves/?all=1", "curves/?kind=roc&run=r1", "reusability/",
                                  "reusability/?by=team", "significance/"])
def test_once_stored_a_cold_page_ranks_no_run(client, organizer, track, monkeypatch, page):
    board.build(track, "adjudicated")
    cache.clear_caches()  # a fresh web worker
    monkeypatch.setattr(ranking, "rank_runs", _refuse)
    monkeypatch.setattr(scoring, "rank_runs", _refuse)
    client.force_login(organizer)
    response = client.get(f"/collections/robust/{page}")
    assert response.status_code == 200 and "being computed" not in response.content.decode()


def test_a_topics_curve_is_computed_from_that_topic_alone_without_the_runs_that_did_not_answer_it(track):
    from evaluation.engine.curves import curves_from_rankings, ranked_docnos
    from workbench.collections.selectors import run_frames

    qrels = scoring.qrels_frame(track)
    grades: dict[str, dict[str, int]] = {}
    for q, d, g in zip(qrels["qid"].astype(str), qrels["docno"], qrels["rel"], strict=True):
        grades.setdefault(q, {})[d] = int(g)
    board.build(track, "adjudicated")
    for kind in ("pr", "interpolated", "roc"):
        shown = run_curves(track, ["r0", "r5", "r6"], kind=kind, topic="303")
        assert set(shown["tag"]) == {"r0", "r6"}  # r5 returned nothing for 303 (the page answered 500 before)
        for tag in ("r0", "r6"):
            frame = run_frames(track, tags=[tag])[tag]
            rankings = ranked_docnos(frame["qid"].astype(str), np.asarray(frame["score"], dtype=np.float32),
                                     frame["docno"])
            whole = [p for p in curves_from_rankings(grades, rankings, kind=kind, per_topic=True)
                     if p["topic"] == "303"]  # the topic's curve among every topic's
            mine = shown[shown["tag"] == tag]
            assert list(mine["x"]) == [p["x"] for p in whole] and list(mine["y"]) == [p["y"] for p in whole]


def test_leave_one_out_of_another_measure_is_a_job_the_page_follows(client, organizer, track, settings):
    board.build(track, "adjudicated")
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
    client.force_login(organizer)
    for _ in range(2):
        page = client.get("/collections/robust/reusability/", {"measure": "P.5", "by": "team"})
        assert page.status_code == 200 and "being computed" in page.content.decode()
    queued = Job.objects.get(kind=board_extras.LOO_KIND, status=Job.Status.QUEUED)
    assert queued.params["measure"] == "P.5" and queued.params["by"] == "team"
    from evaluation.tasks import build_leave_one_out

    build_leave_one_out.call(queued.pk)
    cache.clear_caches()
    page = client.get("/collections/robust/reusability/", {"measure": "P.5", "by": "team"}).content.decode()
    assert "being computed" not in page and "Leave-one-team-out (P_5)" in page
    from evaluation.reusability import compute_leave_one_out

    expected = compute_leave_one_out(track, measure="P.5", by="team")
    pd.testing.assert_frame_equal(selectors.leave_one_out(track, measure="P.5", by="team").table, expected.table)


def test_a_measure_that_is_not_one_value_is_refused_in_one_line_without_a_job(client, organizer, track):
    board.build(track, "adjudicated")
    client.force_login(organizer)
    response = client.get("/collections/robust/reusability/", {"measure": "P.5,10"})
    assert response.status_code == 400 and "one measure value" in response.content.decode()
    assert not Job.objects.filter(kind=board_extras.LOO_KIND).exists()


def test_a_leave_one_out_that_fails_is_shown_once_not_retried_at_every_visit(client, organizer, tmp_path):
    factories.collection_with_topics()
    path = tmp_path / "alpha.run"
    path.write_text(factories.run_lines("alpha", {"301": ["a", "b"]}))
    run("import_runs", "robust", str(path))
    client.force_login(organizer)
    for _ in range(2):
        response = client.get("/collections/robust/reusability/")
        assert response.status_code == 400 and "no judgments" in response.content.decode()
    assert Job.objects.filter(kind__in=[board_extras.LOO_KIND, board.KIND]).count() == 1


def test_old_versions_extras_go_with_their_boards(track):
    from judging.models import Judgment

    first = board.build(track, "adjudicated")
    topic = track.topics.get(qid="301")
    for docno in ("x1", "x2"):
        Judgment.objects.create(collection=track, topic=topic, docno=docno, grade=1, assessor="nist",
                                source=Judgment.Source.IMPORT)
        cache.clear_caches()
        board.build(track, "adjudicated")
    folder = board_extras.extras_dir(track.pk)
    versions = {p.name.split(".")[0] for p in folder.glob("*.parquet")}
    assert len(versions) == 1 + board.KEEP and first.name.split(".")[0] not in versions


def test_while_a_job_computes_the_new_one_the_page_shows_the_previous_leave_one_out_marked_updating(
        client, organizer, track, settings):
    from judging.models import Judgment

    board.build(track, "adjudicated")
    client.force_login(organizer)
    before = client.get("/collections/robust/reusability/", {"_export": "csv", "_table": "l-"}).content
    assert before.startswith(b"Left out,") and before.count(b"\n") > 4
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}
    Judgment.objects.create(collection=track, topic=track.topics.get(qid="302"), docno="d00", grade=2,
                            assessor="nist", source=Judgment.Source.IMPORT)
    cache.clear_caches()
    page = client.get("/collections/robust/reusability/").content.decode()
    assert 'id="reusability-updating"' in page and "being computed" in page
    assert client.get("/collections/robust/reusability/", {"_export": "csv", "_table": "l-"}).content == before
    assert Job.objects.filter(kind=board_extras.LOO_KIND, status=Job.Status.QUEUED).count() == 1


def test_someone_who_may_not_see_results_gets_no_leave_one_out_and_queues_no_job(client, outsider, track):
    client.force_login(outsider)
    response = client.get("/collections/robust/reusability/", {"measure": "P.5"})
    assert response.status_code == 403 and "being computed" not in response.content.decode()
    assert not Job.objects.filter(kind=board_extras.LOO_KIND).exists()


@pytest.mark.parametrize("pool", ["none", "sampled"])
def test_without_a_pool_or_with_a_sampled_one_the_stored_pages_equal_the_computed_ones(client, organizer, tmp_path,
                                                                                      pool):
    from tests.evaluation.tracks import QRELS, build_track, write_qrels

    if pool == "none":
        collection = build_track(tmp_path, pool_depth=None)
    else:
        collection = factories.collection_with_topics()
        from tests.evaluation.tracks import RANKINGS

        for tag, ranking in RANKINGS.items():
            (tmp_path / f"{tag}.run").write_text(factories.run_lines(tag, ranking))
            run("import_runs", "robust", str(tmp_path / f"{tag}.run"))
        run("build_pool", "robust", "--strategy", "sampled", "--strata", "1-1:1", "2-4:0.5", "--seed", "3")
        run("import_qrels", "robust", write_qrels(tmp_path / "q.txt", QRELS))
    live = _live(collection)
    board.build(collection, "adjudicated")
    cache.clear_caches()
    pd.testing.assert_frame_equal(selectors.recall_estimates(collection), live["recall"])
    for by, loo in live["loo"].items():
        pd.testing.assert_frame_equal(selectors.leave_one_out(collection, by=by).table, loo.table)
    client.force_login(organizer)
    for page in ("topics/301/", "curves/", "reusability/", "significance/"):
        assert client.get(f"/collections/robust/{page}").status_code == 200, page

"""A new depth-k pool built by topic in parts (``JOB_PARTS``): each part pools a slice of the topics over every
run and writes their entries into the pool, hidden until the join publishes it; the pool (entries, judging
order, provenance, the runs it records) is the pool one worker builds, and nobody sees it half-written."""

from __future__ import annotations

import numpy as np
import pytest
from django.urls import reverse

from pooling import split
from pooling.models import Pool, PoolEntry
from pooling.selectors import pool_provenance
from pooling.services import PoolRefused, pool_build
from pooling.tasks import build_pool
from tests import factories
from tests.split_jobs import DB_TASKS, run_worker
from workbench.collections.services import RunSpec, runs_import
from workbench.jobs import lifecycle as jobs
from workbench.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def track(tmp_path):
    """Eight runs (seven offered to the pool) over three topics, with tied scores, by three teams."""
    collection = factories.collection_with_topics()
    rng = np.random.default_rng(7)
    specs = []
    for i in range(8):
        lines = []
        for qid in ("301", "302", "303"):
            docs = rng.choice(40, size=12, replace=False)
            scores = np.round(rng.random(12) * 3, 1)  # ties
            lines += [f"{qid} Q0 D{d} {r + 1} {s} run{i}\n" for r, (d, s) in enumerate(zip(docs, scores, strict=True))]
        path = tmp_path / f"run{i}.txt"
        path.write_text("".join(lines))
        specs.append(RunSpec(source=path, team=f"team{i % 3}", contributes=i != 7))
    runs_import(collection=collection, specs=specs)
    return collection


def _build(track, settings, parts: int, name: str, **arguments) -> Job:
    settings.JOB_PARTS = parts
    job = jobs.job_start(build_pool, kind="pool build", collection=track, params={"arguments": {
        "name": name, "strategy": "depth", "depth": 5, "seed": 11, "order": "shuffled", **arguments}})
    job.refresh_from_db()
    assert (job.status, job.error) == (Job.Status.DONE, ""), job.error
    return job


def _pool(name: str) -> tuple:
    pool = Pool.objects.get(name=name)
    entries = sorted(pool.entries.values_list("topic__qid", "docno", "judging_order", "pool_rank", "min_depth",
                                              "round"))
    return entries, pool_provenance(pool), {k: v for k, v in pool.params.items() if k != "history"}


def test_a_split_depth_build_is_the_pool_one_worker_builds(track, settings):
    _build(track, settings, 1, "one")
    job = _build(track, settings, 3, "three")
    assert (job.done, job.total, job.parts.count()) == (3, 3, 3)
    assert [p.params["topics"] for p in job.parts.order_by("pk")] == [["301"], ["302"], ["303"]]
    (one, one_provenance, one_params), (three, three_provenance, three_params) = _pool("one"), _pool("three")
    assert len(one) > 0 and three == one
    # the round's one provenance table, row for row in one worker's order (by run, topic, rank)
    assert len(one_provenance) > len(one) and three_provenance.equals(one_provenance)
    assert three_params == one_params
    assert "added" in job.result["lines"][0] and "from 7 runs" in job.result["lines"][0]


def test_two_parts_pool_the_topics_in_pieces_dealt_in_turn_and_their_provenance_reads_as_one_workers(
        track, settings):
    _build(track, settings, 1, "one")
    job = _build(track, settings, 2, "two")
    # pieces in natural order, dealt to the parts in turn (each writes its pieces after the piece before)
    assert [(p.params["topics"], p.params["pieces"]) for p in job.parts.order_by("pk")] == [
        (["301", "303"], [{"piece": 0, "topics": ["301"]}, {"piece": 2, "topics": ["303"]}]),
        (["302"], [{"piece": 1, "topics": ["302"]}])]
    pool = Pool.objects.get(name="two")
    assert list(pool.provenance_tables.values_list("part", flat=True)) == [0, 1, 2]
    assert _pool("two")[0] == _pool("one")[0] and _pool("two")[1].equals(_pool("one")[1])


def test_a_split_build_with_a_team_limit_and_named_runs_is_the_same_and_a_deeper_round_is_not_split(
        track, settings):
    for parts, name in ((1, "one"), (2, "two")):
        first = _build(track, settings, parts, name, runs_per_team=1, tags=[f"run{i}" for i in range(7, -1, -1)])
        deeper = _build(track, settings, parts, name, depth=9, runs_per_team=1, tags=[f"run{i}" for i in range(8)])
        assert (first.parts.count(), deeper.parts.count()) == ((0, 0) if parts == 1 else (2, 0))
    assert _pool("two")[0] == _pool("one")[0]
    assert _pool("two")[1].equals(_pool("one")[1])


def test_other_strategies_are_not_split(track, settings):
    job = _build(track, settings, 3, "fused", strategy="rrf", budget=4)
    assert job.parts.count() == 0 and Pool.objects.get(name="fused").entries.count() == 12


@pytest.mark.django_db(transaction=True)
def test_the_pool_is_hidden_until_the_join_publishes_it(track, settings, client, organizer):
    """One part has written its topic's entries, the other has not run: no page, count or build sees the pool;
    once the last part and the join have run it is there whole."""
    settings.TASKS = DB_TASKS
    settings.JOB_PARTS = 2
    job = jobs.job_start(build_pool, kind="pool build", collection=track, params={"arguments": {
        "name": "big", "strategy": "depth", "depth": 5, "seed": 11, "order": "shuffled"}})
    run_worker("--max-tasks", "2")  # planned, one part done
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == (Job.Status.RUNNING, 1, 2)
    hidden = Pool.all_objects.get(name="big")
    assert not hidden.published and PoolEntry.objects.filter(pool=hidden).count() > 0
    assert not Pool.objects.filter(name="big").exists() and track.pools.count() == 0
    client.force_login(organizer)
    page = client.get(reverse("pooling:pools", args=[track.slug])).content.decode()
    assert "big" not in page
    with pytest.raises(PoolRefused, match="being built by another job"):
        pool_build(collection=track, name="big", strategy="depth", depth=5)
    run_worker()  # the other part, then the join
    job.refresh_from_db()
    assert (job.status, job.error) == (Job.Status.DONE, "")
    assert Pool.objects.get(name="big").entries.count() == int(job.result["lines"][0].split("added ")[1].split()[0])
    assert "big" in client.get(reverse("pooling:pools", args=[track.slug])).content.decode()


def test_a_refused_or_failed_split_build_leaves_no_pool(track, settings, tmp_path, monkeypatch):
    """Runs naming a topic the collection lacks: the one line one worker gives, and no pool, hidden or not; a
    part that fails removes what the other parts wrote."""
    (tmp_path / "stray.txt").write_text("".join(f"999 Q0 D{i} {i} {9 - i} stray\n" for i in range(1, 4)))
    track.topics.create(qid="999", title="gone later")
    runs_import(collection=track, specs=[RunSpec(source=tmp_path / "stray.txt", team="team9")])
    track.topics.filter(qid="999").delete()  # the topic removed after its run was imported
    settings.JOB_PARTS = 1
    one = jobs.job_start(build_pool, kind="pool build", collection=track, params={"arguments": {
        "name": "one", "strategy": "depth", "depth": 5, "seed": 11}})
    settings.JOB_PARTS = 2
    two = jobs.job_start(build_pool, kind="pool build", collection=track, params={"arguments": {
        "name": "two", "strategy": "depth", "depth": 5, "seed": 11}})
    one.refresh_from_db(), two.refresh_from_db()
    assert one.status == two.status == Job.Status.FAILED and two.parts.count() == 2
    assert two.error == one.error == f"runs name topics that are not in collection {track.slug!r}: 999"
    assert not Pool.all_objects.exists() and not PoolEntry.objects.exists()

    track.runs.filter(tag="stray").delete()
    written = split.write_part

    def second_part_fails(part):
        if part.params["part"] == 1:
            raise OSError("disk full")
        return written(part)

    monkeypatch.setattr(split, "write_part", second_part_fails)
    job = jobs.job_start(build_pool, kind="pool build", collection=track, params={"arguments": {
        "name": "three", "strategy": "depth", "depth": 5, "seed": 11}})
    job.refresh_from_db()
    assert (job.status, job.error) == (Job.Status.FAILED, "part 2 of 2: disk full")
    assert not Pool.all_objects.exists() and not PoolEntry.objects.exists()
    monkeypatch.setattr(split, "write_part", written)
    assert _build(track, settings, 2, "three").parts.count() == 2  # the name is free again


def test_a_part_done_again_writes_its_topics_once(track, settings):
    """A part whose worker died after writing is done again by another: it removes what it wrote first."""
    job = _build(track, settings, 2, "twice")
    pool = Pool.objects.get(name="twice")
    before = sorted(pool.entries.values_list("topic__qid", "docno", "judging_order"))
    Pool.objects.filter(pk=pool.pk).update(published=False)
    split.write_part(job.parts.order_by("pk").first())
    assert sorted(Pool.all_objects.get(pk=pool.pk).entries.values_list("topic__qid", "docno", "judging_order")) == before


def test_each_piece_is_pooled_as_the_runs_cut_to_its_topics():
    """The runs are ranked once for a part's pieces: each piece's pool (entries, judging ranks, provenance,
    parameters) is the pool of the runs cut to the piece's topics, whatever order a run lists its topics in,
    with ties, a document listed twice, topics not categorical (an earlier version's table), a run with none
    of the piece's topics, a topic no run has, and teams keeping one run each."""
    import pandas as pd

    from pooling.strategies.depth import depth_pool, depth_pools

    def frame(rows, categorical=True):
        qids = [q for q, _, _ in rows]
        return pd.DataFrame({"qid": pd.Categorical(qids) if categorical else qids,
                             "docno": [d for _, d, _ in rows], "rank": range(1, len(rows) + 1),
                             "score": [s for _, _, s in rows]})

    frames = {"in order": frame([("301", "a", 3.0), ("301", "b", 2.0), ("301", "c", 2.0), ("302", "a", 1.0),
                                 ("303", "d", 5.0), ("303", "e", 4.0)]),
              "shuffled": frame([("303", "e", 1.0), ("301", "c", 9.0), ("301", "c", 8.0), ("301", "f", 8.5),
                                 ("302", "b", 0.5), ("303", "a", 2.0)]),
              "plain": frame([("302", "b", 1.0), ("301", "g", 1.0), ("302", "h", 3.0)], categorical=False),
              "none of them": frame([("304", "z", 1.0)])}
    selection = {"teams": {"in order": "t1", "shuffled": "t2", "plain": "t2", "none of them": "t3"},
                 "priorities": {"shuffled": 2, "plain": 1}, "runs_per_team": 1}
    for chosen in ({}, selection):
        pieces = [["301"], ["302", "303"], ["304"], ["305"], ["303", "301"]]
        for piece, got in zip(pieces, depth_pools(frames, 2, pieces, **chosen), strict=True):
            cut = {tag: whole[whole["qid"].astype(str).isin(piece)].reset_index(drop=True)
                   for tag, whole in frames.items()}
            expected = depth_pool(cut, 2, **chosen)
            assert got.params == expected.params, piece
            assert got.entries.equals(expected.entries), piece
            assert got.provenance.equals(expected.provenance), piece
    pooled = next(depth_pools(frames, 2, [["301"]]))
    assert sorted(pooled.entries["docno"]) == ["a", "b", "c", "f", "g"]

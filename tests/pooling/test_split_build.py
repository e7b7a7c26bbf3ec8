"""A depth-k build over many runs split into parts (``JOB_PARTS``): each part reads a slice of the runs, any
worker claims it, and the pool (entries, judging order, provenance, the runs it records) is the pool one
worker builds."""

from __future__ import annotations

import numpy as np
import pytest

from pooling.models import Pool
from pooling.selectors import pool_provenance
from pooling.tasks import build_pool
from tests import factories
from workbench import jobs
from workbench.models import Job
from workbench.services import RunSpec, runs_import

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
    provenance = pool_provenance(pool).sort_values(["qid", "docno", "tag"]).reset_index(drop=True)
    return entries, provenance, {k: v for k, v in pool.params.items() if k != "history"}


def test_a_split_depth_build_is_the_pool_one_worker_builds(track, settings):
    _build(track, settings, 1, "one")
    job = _build(track, settings, 3, "three")
    assert (job.done, job.total, job.parts.count()) == (3, 3, 3)
    assert [len(p.params["tags"]) for p in job.parts.order_by("pk")] == [2, 2, 3]  # 7 contributing runs
    (one, one_provenance, one_params), (three, three_provenance, three_params) = _pool("one"), _pool("three")
    assert len(one) > 0 and three == one
    assert three_provenance.equals(one_provenance) and three_params == one_params
    assert "added" in job.result["lines"][0] and "from 7 runs" in job.result["lines"][0]


def test_a_split_build_with_a_team_limit_and_named_runs_is_the_same_and_a_deeper_round_too(track, settings):
    for parts, name in ((1, "one"), (2, "two")):
        _build(track, settings, parts, name, runs_per_team=1, tags=[f"run{i}" for i in range(7, -1, -1)])
        _build(track, settings, parts, name, depth=9, runs_per_team=1, tags=[f"run{i}" for i in range(8)])
    assert _pool("two")[0] == _pool("one")[0]
    assert _pool("two")[1].equals(_pool("one")[1])


def test_other_strategies_are_not_split(track, settings):
    job = _build(track, settings, 3, "fused", strategy="rrf", budget=4)
    assert job.parts.count() == 0 and Pool.objects.get(name="fused").entries.count() == 12

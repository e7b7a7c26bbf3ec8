"""Each run's head (each topic's first ``runstore.HEAD_DEPTH`` rows, stored apart): what a depth-k pool with k up
to that reads instead of the whole table, giving the same pool."""

from __future__ import annotations

import pytest

from pooling.selectors import pool_entry_table, pool_provenance
from pooling.services import pool_build
from tests import factories
from tests.workbench.test_import_split import QIDS, _import, _track
from workbench.collections import runstore
from workbench.models import Run, RunData

pytestmark = pytest.mark.django_db


@pytest.fixture
def head_depth(monkeypatch):
    monkeypatch.setattr(runstore, "HEAD_DEPTH", 4)  # runs of a few rows a topic have heads
    return 4


def _runs(folder, count: int = 6) -> list:
    """Run i retrieves 2 + 2i documents a topic (runs 0 and 1 no deeper than the head), sharing some, with ties."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        text = factories.run_lines(f"r{i}", {q: [f"d{q}-{(k + 3 * i) % 20}" for k in range(2 + 2 * i)]
                                             for q in QIDS})
        paths.append(folder / f"r{i}.run")
        paths[-1].write_text(text.replace(" 97.0000 ", " 98.0000 "))  # ranks 2 and 3 tie on score
    return paths


@pytest.mark.parametrize("parts", [1, 2])
def test_runs_deeper_than_the_head_have_one_with_each_topics_first_rows(tmp_path, settings, head_depth, parts):
    job = _import(_track(f"t{parts}"), _runs(tmp_path / "runs"), settings, parts)
    assert job.status == "done", job.error
    for run in Run.objects.filter(collection=job.collection).select_related("data").order_by("tag"):
        whole = runstore.decode(run.data.table)
        if int(whole.groupby("qid", observed=True).size().max()) <= head_depth:
            assert run.data.head is None, run.tag  # the table is its own head
            continue
        head = runstore.decode(run.data.head)
        expected = whole.groupby("qid", observed=True, sort=False).head(head_depth).reset_index(drop=True)
        assert head.equals(expected), run.tag
        assert list(head["qid"].cat.categories) == list(whole["qid"].cat.categories)


@pytest.mark.parametrize("depth", [3, 4, 7])
def test_a_depth_pool_from_the_heads_is_the_pool_from_the_whole_tables(tmp_path, settings, head_depth, depth):
    job = _import(_track("track"), _runs(tmp_path / "runs"), settings, 1)
    collection = job.collection
    assert RunData.objects.filter(run__collection=collection, head__isnull=False).count() == 4
    runstore.frame_cache.clear()  # read from the database, not from a frame decoded earlier
    pool_build(collection=collection, name="heads", strategy="depth", depth=depth, seed=3)
    runstore.frame_cache.clear()
    RunData.objects.filter(run__collection=collection).update(head=None)  # as runs stored before heads were
    pool_build(collection=collection, name="tables", strategy="depth", depth=depth, seed=3)
    heads, tables = (collection.pools.get(name=n) for n in ("heads", "tables"))
    assert len(pool_entry_table(heads)) > 0
    assert pool_entry_table(heads).equals(pool_entry_table(tables))
    assert pool_provenance(heads).equals(pool_provenance(tables))
    assert heads.params["runs"] == tables.params["runs"]


def test_a_depth_pool_within_the_head_reads_no_whole_table(tmp_path, settings, head_depth, monkeypatch):
    from workbench.collections import selectors

    job = _import(_track("track"), _runs(tmp_path / "runs"), settings, 1)
    runstore.frame_cache.clear()
    fetched = []
    original = runstore.decode
    monkeypatch.setattr(runstore, "decode", lambda blob, *a, **k: (fetched.append(len(bytes(blob))), original(blob, *a, **k))[1])
    selectors.run_frames(job.collection, depth=head_depth)
    heads = dict(RunData.objects.filter(run__collection=job.collection).values_list("run_id", "head"))
    tables = dict(RunData.objects.filter(run__collection=job.collection).values_list("run_id", "table"))
    expected = sorted(len(heads[r] if heads[r] is not None else tables[r]) for r in heads)
    assert sorted(fetched) == expected and sum(expected) < sum(len(t) for t in tables.values())

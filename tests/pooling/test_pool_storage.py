"""How a built pool is stored: every entry written as the strategy decided it (also for pools too big
for one statement), provenance kept in columnar tables, and pools stored by earlier versions still read."""

from __future__ import annotations

from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from pooling import strategies as S
from pooling.models import Pool, PoolEntry, PoolProvenance
from pooling.selectors import pool_entries
from pooling.services import pool_build
from tests import factories
from workbench.collections.selectors import run_frames


@pytest.fixture
def big_track(db, tmp_path):
    """Topics 301-303, three runs of 400 documents each drawn from 600 per topic (they overlap)."""
    collection = factories.collection_with_topics()
    rng = np.random.default_rng(7)
    for tag in ("r1", "r2", "r3"):
        ranking = {qid: [f"{qid}-d{d}" for d in rng.choice(600, size=400, replace=False)]
                   for qid in factories.TOPICS}
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", "robust", str(path), stdout=StringIO(), stderr=StringIO())
    return collection


def stored(pool: Pool) -> dict[tuple[str, str], tuple[int, int, int]]:
    return {(q, d): (j, r, m) for q, d, j, r, m in PoolEntry.objects.filter(pool=pool).values_list(
        "topic__qid", "docno", "judging_order", "pool_rank", "min_depth")}


def test_a_pool_of_thousands_of_entries_is_stored_entry_for_entry(big_track):
    summary = pool_build(collection=big_track, depth=300, seed=4)
    expected = S.assign_judging_order(S.depth_pool(run_frames(big_track), 300).entries, seed=4)
    assert summary.added == summary.total == len(expected) > 1500, "more rows than one INSERT holds"
    assert stored(summary.pool) == {
        (q, d): (j, r, m) for q, d, j, r, m in expected[
            ["qid", "docno", "judging_order", "pool_rank", "min_depth"]].itertuples(index=False)}
    for qid in factories.TOPICS:
        orders = sorted(PoolEntry.objects.filter(pool=summary.pool, topic__qid=qid)
                        .values_list("judging_order", flat=True))
        assert orders == list(range(1, len(orders) + 1)), "each topic's queue is 1..n without gaps"
    assert set(PoolEntry.objects.values_list("inclusion_probability", "stratum", "round")) == {(1.0, None, 1)}


def test_the_provenance_of_a_big_pool_is_every_run_and_rank_within_the_depth(big_track):
    summary = pool_build(collection=big_track, depth=300, seed=4)
    _, provenance = pool_entries(summary.pool)
    expected = S.ranked_entries(run_frames(big_track), 300)
    key = ["qid", "docno", "tag", "rank"]
    assert sorted(provenance[key].itertuples(index=False)) == sorted(expected[key].itertuples(index=False))
    assert PoolProvenance.objects.get(pool=summary.pool).rows == len(expected)
    assert not PoolEntry.objects.filter(provenance__isnull=False).exists(), "nothing per entry any more"


def test_deepening_a_big_pool_queues_the_new_entries_after_the_old_ones(big_track):
    first = pool_build(collection=big_track, depth=50, seed=4)
    before = stored(first.pool)
    second = pool_build(collection=big_track, depth=300, seed=4)
    after = stored(second.pool)
    assert second.round == 2 and second.total == len(after) == len(before) + second.added
    assert all(after[k] == v for k, v in before.items()), "existing entries keep their place"
    for qid in factories.TOPICS:
        old = max(v[0] for k, v in before.items() if k[0] == qid)
        assert min(v[0] for k, v in after.items() if k[0] == qid and k not in before) == old + 1


@pytest.mark.django_db(transaction=True)
def test_pools_stored_with_provenance_on_each_entry_keep_it_when_the_database_is_migrated():
    executor = MigrationExecutor(connection)
    before, after = [("pooling", "0001_initial")], [("pooling", "0002_columnar_provenance")]
    executor.migrate(before)
    try:
        old = executor.loader.project_state(before).apps
        collection = old.get_model("workbench", "Collection").objects.create(slug="old", name="Old")
        topic = old.get_model("workbench", "Topic").objects.create(collection=collection, qid="7", title="t")
        pool = old.get_model("pooling", "Pool").objects.create(collection=collection, name="main")
        Entry = old.get_model("pooling", "PoolEntry")
        Entry.objects.create(pool=pool, topic=topic, docno="a", judging_order=1, pool_rank=1, min_depth=1,
                             provenance={"run1": 1, "run2": 4})
        Entry.objects.create(pool=pool, topic=topic, docno="b", judging_order=2, pool_rank=2, min_depth=2,
                             provenance={})
        executor = MigrationExecutor(connection)
        executor.migrate(after)
    finally:
        MigrationExecutor(connection).migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
    pool = Pool.objects.get(collection__slug="old")
    entries, provenance = pool_entries(pool)
    assert sorted(entries["docno"]) == ["a", "b"]
    assert S.provenance_dicts(provenance) == {("7", "a"): {"run1": 1, "run2": 4}}
    assert PoolEntry.objects.get(docno="b").provenance is None, "an empty {} became no provenance"


def test_document_ids_with_commas_quotes_and_accents_are_stored_as_they_are(db, tmp_path):
    collection = factories.collection_with_topics()
    docnos = ['doc,1', 'doc"2', "doc\\3", "dóc'4", "doc;5"]
    path = tmp_path / "odd.run"
    path.write_text(factories.run_lines("odd", {"301": docnos}))
    call_command("import_runs", "robust", str(path), stdout=StringIO(), stderr=StringIO())
    pool = pool_build(collection=collection, depth=10, seed=1).pool
    assert sorted(PoolEntry.objects.values_list("docno", flat=True)) == sorted(docnos)
    assert sorted(pool_entries(pool)[1]["docno"]) == sorted(docnos)


def test_the_admin_lists_each_builds_provenance_table_with_its_size(client, big_track):
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_superuser("root", password="pw"))
    pool_build(collection=big_track, depth=5, seed=1)
    pool_build(collection=big_track, depth=8, seed=1)
    rows = list(PoolProvenance.objects.order_by("round").values_list("round", "rows"))
    assert [r for r, _ in rows] == [1, 2] and rows[0][1] == 3 * 3 * 5 and rows[1][1] == 3 * 3 * 3
    body = client.get("/admin/pooling/poolprovenance/").content.decode()
    assert "robust/main" in body and ">45<" in body and ">27<" in body
    assert client.get("/admin/pooling/poolentry/").status_code == 200

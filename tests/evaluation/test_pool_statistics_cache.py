"""The pool statistics (pool page, a team's pool contributions) are computed once per version of the
collection: asked again unchanged, the same figures come back without being computed; a new judgment or a
pool extended shows at once."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from evaluation import selectors
from pooling.models import Pool
from pooling.services import pool_build
from tests import factories
from workbench.models import Run

RANKING = {"301": ["d1", "d2", "d3"], "302": ["e1", "e2"]}


@pytest.fixture
def pool(db, tmp_path):
    collection = factories.collection_with_topics()
    for i, tag in enumerate(("one", "two")):
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, {q: [f"{d}-{i}" for d in docs] for q, docs in RANKING.items()}))
        call_command("import_runs", "robust", str(path), stdout=StringIO())
    Run.objects.update(contributes=True)
    pool_build(collection=collection, name="main", depth=2, seed=1)
    return Pool.objects.get(collection=collection, name="main")


def judge(tmp_path, lines: str) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text(lines)
    call_command("import_qrels", "robust", str(path), "--assessor", "nist", stdout=StringIO())


def test_same_version_same_figures_new_judgment_new_figures(pool, tmp_path):
    judge(tmp_path, "301 0 d1-0 1\n")
    first = selectors.pool_statistics(pool)
    assert first["runs"]["one"]["relevant"] == 1 and first["runs"]["two"]["relevant"] == 0
    assert selectors.pool_statistics(pool)["runs"] is first["runs"]  # not computed again
    judge(tmp_path, "301 0 d1-1 1\n302 0 e1-1 1\n")
    again = selectors.pool_statistics(pool)
    assert again["runs"]["two"]["relevant"] == 2 and again["judged"] == 3


def test_a_pool_extended_is_counted_anew(pool):
    assert selectors.pool_statistics(pool)["size"] == 8
    pool_build(collection=pool.collection, name="main", depth=3, seed=1)
    pool.refresh_from_db()
    assert selectors.pool_statistics(pool)["size"] == 10  # 301: 3 + 3, 302: 2 + 2

"""The pool statistics (pool page, a team's pool contributions) are computed once per version of the
collection: asked again unchanged, the same figures come back without being computed; a new judgment or a
pool extended shows at once."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from evaluation import cache, selectors, tasks
from judging.qrels import qrels as judged_qrels
from pooling import selectors as pooling_selectors
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


# ------------------------------------------------------------------ stored by the board job, read by the page
PAGE = "/collections/robust/pool/"


def _queue_only(settings):
    """Jobs wait for a worker that never comes (the dummy backend)."""
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}


def _not_in_the_request(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the pool statistics were computed in the request")

    monkeypatch.setattr(pooling_selectors, "pool_statistics", refuse)


def test_the_board_job_stores_every_pools_statistics_and_the_page_only_reads_them(client, organizer, pool, tmp_path,
                                                                                   monkeypatch):
    judge(tmp_path, "301 0 d1-0 1\n302 0 e2-1 1\n")
    computed = pooling_selectors.pool_statistics(pool, judged_qrels(pool.collection))
    tasks.request_board(pool.collection)  # what a change asks for (the job runs at once here)
    cache.clear_caches()  # a fresh web worker
    assert selectors.stored_pool_statistics(pool) == computed  # the same figures, read back
    _not_in_the_request(monkeypatch)
    client.force_login(organizer)
    page = client.get(PAGE).content.decode()
    assert "<strong>8</strong> pooled documents" in page and "being computed" not in page
    assert selectors.pool_statistics(pool) == computed  # a team's pool contributions read them too


@pytest.mark.parametrize("judged", [True, False])  # not judged yet: no board, the pool's figures all the same
def test_with_nothing_stored_the_page_says_the_figures_are_being_computed_then_shows_them(client, organizer, pool,
                                                                                          settings, monkeypatch,
                                                                                          tmp_path, judged):
    if judged:
        judge(tmp_path, "301 0 d1-0 1\n")
    _queue_only(settings)
    job = tasks.request_board(pool.collection)
    client.force_login(organizer)
    with monkeypatch.context() as patched:
        _not_in_the_request(patched)
        waiting = client.get(PAGE)
        assert waiting.status_code == 200 and 'id="pool-computing"' in waiting.content.decode()
        assert "(waiting for a worker)" in waiting.content.decode()
    tasks.build_board.call(job.pk)  # the worker comes
    _not_in_the_request(monkeypatch)
    page = client.get(PAGE).content.decode()
    assert "<strong>8</strong> pooled documents" in page and "being computed" not in page


def test_while_the_job_computes_new_figures_the_page_shows_the_previous_ones_marked(client, organizer, pool, tmp_path,
                                                                                   settings, monkeypatch,
                                                                                   django_capture_on_commit_callbacks):
    tasks.request_board(pool.collection)
    _queue_only(settings)
    settings.BOARD_ON_CHANGE = True
    with django_capture_on_commit_callbacks(execute=True):  # the judgment asks for the board once committed
        judge(tmp_path, "301 0 d1-0 1\n")
    _not_in_the_request(monkeypatch)
    client.force_login(organizer)
    body = client.get(PAGE).content.decode()
    assert 'id="pool-updating"' in body and "<strong>8</strong> pooled documents" in body


def test_with_no_job_to_store_them_the_page_computes_them_as_before(client, organizer, pool):
    """No board job queued nor stored (a deployment without a worker's boards): the page is not left waiting."""
    client.force_login(organizer)
    page = client.get(PAGE).content.decode()
    assert "<strong>8</strong> pooled documents" in page and "being computed" not in page


def test_who_may_not_see_the_results_is_refused_while_the_figures_are_computed(client, outsider, pool, settings):
    _queue_only(settings)
    tasks.request_board(pool.collection)
    client.force_login(outsider)
    assert client.get(PAGE).status_code in (403, 404)


def test_the_page_shown_again_after_a_judgment_shows_the_new_figures(client, organizer, pool, tmp_path):
    """The page's tables are rendered once per version: a judgment makes a new one."""
    from tests.evaluation.test_matrix_pages import tables_of

    client.force_login(organizer)
    judge(tmp_path, "301 0 d1-0 1\n")

    def relevant() -> dict[str, str]:
        table = tables_of(client.get(PAGE))["Contributions per run"]
        return {row[0]["text"]: row[6]["text"] for row in table["rows"]}

    assert relevant() == relevant() == {"one": "1", "two": "0"}
    judge(tmp_path, "301 0 d1-1 1\n302 0 e1-1 1\n")
    assert relevant() == {"one": "1", "two": "2"}

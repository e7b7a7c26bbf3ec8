"""The significance page is light: its heatmap and how many pairs differ, drawn once per version of the
collection; the tables of numbers (megabytes at 143 runs) are a page of their own, one click away. The track is
test_matrix_pages' (good > twin > mid > bad on MAP, 3 topics)."""

from __future__ import annotations

import pandas as pd
import pytest

from evaluation import cache, heatmap, selectors, significance_pairs, significance_views
from tests.evaluation.test_matrix_pages import (
    RANK_OF_R,
    SIG,
    ranked,  # noqa: F401 - the fixture
    tables_of,
)
from tests.evaluation.tracks import run, write_qrels

MATRIX = "Adjusted p-values for every pair of runs"


def picture(response) -> str:
    body = response.content.decode()
    return body[body.index('<svg class="heatmap"'):body.index("</svg>", body.index('<svg class="heatmap"'))]


def test_the_page_shows_the_heatmap_and_links_to_the_numbers(client, ranked, organizer):  # noqa: F811
    client.force_login(organizer)
    body = client.get(SIG).content.decode()
    assert 'data-runs="4"' in body and "3 of 6 pairs differ significantly on map" in body
    assert MATRIX not in tables_of(client.get(SIG))  # the tables are not in the page
    link = "/collections/robust/significance/numbers/?measure=map&amp;test=t&amp;correction=none"
    assert f'href="{link}"' in body  # without JavaScript, a link; with it, loaded when opened
    numbers = tables_of(client.get(link.replace("&amp;", "&")))
    assert len(numbers[MATRIX]["rows"]) == 4 and len(numbers["Every pair of runs"]["rows"]) == 6


def test_sorting_the_tables_on_the_page_shows_them_there(client, ranked, organizer):  # noqa: F811
    """A sort or page link of the tables loaded into the page comes back to the page: the tables are in it, open."""
    client.force_login(organizer)
    response = client.get(SIG + "&m-sort=-run")
    assert [row[0]["text"] for row in tables_of(response)[MATRIX]["rows"]] == ["twin", "mid", "good", "bad"]
    assert '<details id="numbers" class="card" open>' in response.content.decode()


def test_a_visit_again_computes_nothing_until_a_judgment_changes_the_collection(client, ranked, organizer,  # noqa: F811
                                                                                 monkeypatch, tmp_path):
    drawn, tested = [], []

    def draw(*args, **kwargs):
        drawn.append(1)
        return heatmap.heatmap_svg(*args, **kwargs)

    def pairwise(*args, **kwargs):
        tested.append(1)
        return pairwise_t(*args, **kwargs)

    pairwise_t = significance_pairs.pairwise_t
    cache.clear_caches()  # another test's collection may have had this one's ids (rolled back)
    monkeypatch.setattr(significance_views, "heatmap_svg", draw)
    monkeypatch.setattr(significance_pairs, "pairwise_t", pairwise)
    client.force_login(organizer)
    first = picture(client.get(SIG))
    assert (len(drawn), len(tested)) == (1, 1)
    assert picture(client.get(SIG)) == first and client.get(SIG.replace("/?", "/numbers/?")).status_code == 200
    assert (len(drawn), len(tested)) == (1, 1)  # the pairs and the picture of this version, read again
    bad_docs = {("301", f"m{i}"): 1 for i in range(1, 5 - RANK_OF_R["bad"][0])}
    run("import_qrels", "robust", write_qrels(tmp_path / "more.txt", bad_docs), "--assessor", "nist")
    assert 'data-runs="4"' in picture(client.get(SIG))
    assert (len(drawn), len(tested)) == (2, 2)  # a new version: tested and drawn anew


@pytest.mark.parametrize("path", ["significance/", "significance/numbers/"])
def test_who_may_not_see_the_results_is_refused_the_numbers_too(client, ranked, outsider, path):  # noqa: F811
    client.force_login(outsider)
    refused = client.get("/collections/robust/significance/")
    assert refused.status_code in (403, 404)
    assert client.get(f"/collections/robust/{path}").status_code == refused.status_code


def test_after_the_board_job_a_fresh_worker_computes_neither_the_pairs_nor_the_picture(client, ranked, organizer,  # noqa: F811
                                                                                      monkeypatch):
    """The board job stores the page's first choice (MAP, paired t, Holm): the same pairs and picture."""
    from evaluation import tasks

    cache.clear_caches()
    computed = selectors.significance_matrix(ranked, measure="map", test="t", correction="holm")
    drawn = heatmap.heatmap_svg(computed, measure="map")
    tasks.request_board(ranked)  # what a change asks for (the job runs at once here)
    cache.clear_caches()  # a fresh web worker

    def refuse(*args, **kwargs):
        raise AssertionError("computed in the request")

    monkeypatch.setattr(significance_views, "heatmap_svg", refuse)
    monkeypatch.setattr(significance_pairs, "pairwise_t", refuse)
    stored = selectors.significance_matrix(ranked, measure="map", test="t", correction="holm")
    pd.testing.assert_frame_equal(stored, computed)
    client.force_login(organizer)
    page = "/collections/robust/significance/"
    assert picture(client.get(page)) == drawn[0][:drawn[0].index("</svg>")]
    assert "of 6 pairs differ significantly on map" in client.get(page).content.decode()
    assert len(tables_of(client.get(page + "numbers/"))[MATRIX]["rows"]) == 4
    with pytest.raises(AssertionError, match="computed in the request"):  # another choice is computed, as before
        client.get(page + "?correction=none")


@pytest.mark.parametrize("path", ["significance/", "significance/numbers/"])
def test_a_measure_that_is_not_one_is_refused_in_one_line_on_both_pages(client, ranked, organizer, path):  # noqa: F811
    client.force_login(organizer)
    response = client.get(f"/collections/robust/{path}?measure=nope")
    assert response.status_code == 400 and "nope" in response.content.decode()

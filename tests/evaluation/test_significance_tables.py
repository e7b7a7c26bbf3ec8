"""The significance page's tables built from the selector's columns (evaluation.significance_views) are the
tables built from a dict per pair (evaluation.tables.significance_table): same cells, same CSV, same page."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from django.test import RequestFactory
from django_tables2.data import TableListData

from evaluation import tables
from evaluation.significance_views import FrameRecords, significance_matrix_table


def _pairs(n_runs: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    tags = [f"run.{i}<{chr(97 + i)}>" for i in range(n_runs)]   # dots and markup in tags
    means = np.round(rng.random(n_runs), 1)                      # ties between means
    rows = []
    for i, j in itertools.combinations(range(n_runs), 2):
        p = float(rng.random()) if rng.random() > 0.1 else float("nan")
        rows.append({"run_a": tags[i], "run_b": tags[j], "mean_a": float(means[i]), "mean_b": float(means[j]),
                     "mean_diff": float(means[i] - means[j] + rng.normal(0, 1e-3)), "statistic": float(rng.normal()),
                     "p_value": p, "p_adjusted": min(1.0, p * 3), "significant": bool(p * 3 < 0.05),
                     "effect_size": float(rng.normal()), "ci_low": -1.0, "ci_high": 1.0})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("n_runs", "seed", "query"), [(2, 0, ""), (9, 1, ""), (14, 2, "m-sort=-c3&m-page=2"),
                                                       (14, 3, "m-sort=mean")])
def test_the_matrix_from_columns_is_the_matrix_from_dicts(n_runs, seed, query):
    pairs = _pairs(n_runs, seed)
    request = RequestFactory().get(f"/?{query}")
    options = {"measure": "map", "test": "t", "correction": "holm", "run_url": lambda tag: f"/runs/{tag}/",
               "request": request, "per_page": 5}
    old = tables.significance_table(pairs.to_dict("records"), **options)
    new = significance_matrix_table(pairs, **options)
    assert new.as_html(request) == old.as_html(request)
    assert list(new.as_values()) == list(old.as_values())


def test_no_pair_gives_the_same_empty_matrix():
    request = RequestFactory().get("/")
    empty = _pairs(3, 0).iloc[:0]
    old = tables.significance_table([], measure="map", test="t", correction="holm", request=request)
    assert significance_matrix_table(empty, measure="map", test="t", correction="holm",
                                     request=request).as_html(request) == old.as_html(request)


def test_frame_records_are_the_frames_records_made_on_demand():
    pairs = _pairs(8, 4)
    records = FrameRecords(pairs)
    expected = pairs.to_dict("records")
    same = lambda a, b: pd.testing.assert_frame_equal(pd.DataFrame(a), pd.DataFrame(b))  # noqa: E731 - NaN equal
    assert len(records) == len(expected)
    same([records[3], records[-1]], [expected[3], expected[-1]])
    same(records[5:9], expected[5:9])
    same(list(records), expected)
    with pytest.raises(IndexError):
        records[len(expected)]
    records.sort(key=lambda r: (r["mean_diff"], r["run_a"]), reverse=True)
    same(list(records), sorted(expected, key=lambda r: (r["mean_diff"], r["run_a"]), reverse=True))


def test_the_pairs_table_pages_sorts_and_exports_lazily_built_rows():
    pairs = _pairs(10, 5)
    records = FrameRecords(_pairs(20, 6))
    page = tables.pairs_table(TableListData(records), SimpleNamespace(slug="robust"), RequestFactory().get("/"))
    page.as_html(RequestFactory().get("/"))
    assert len(records) == 190 and len(page.page.object_list) == 100
    assert records._rows is None  # a page shown: 100 rows made, not the list of every pair
    for query in ("", "p-sort=-p_value&p-page=2"):
        request = RequestFactory().get(f"/?{query}")
        lazy = tables.pairs_table(TableListData(FrameRecords(pairs)), SimpleNamespace(slug="robust"), request)
        eager = tables.pairs_table(pairs.to_dict("records"), SimpleNamespace(slug="robust"), request)
        assert lazy.as_html(request) == eager.as_html(request)
        assert list(lazy.as_values()) == list(eager.as_values())

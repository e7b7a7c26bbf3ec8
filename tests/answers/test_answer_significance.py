"""The answer leaderboard tests each run against the best on the order's measure (paired, Holm-adjusted)."""

from __future__ import annotations

import pandas as pd
import pytest
from scipy import stats

from answers.significance import versus_best
from tests.answers.test_leaderboard import scored  # noqa: F401  (the fixture)


def _frame(scores: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([{"run": run, "qid": str(q), "all_score": v}
                         for run, values in scores.items() for q, v in enumerate(values)])


def test_a_clearly_worse_run_is_flagged_and_a_close_one_is_not():
    best = [0.9, 0.8, 0.85, 0.7, 0.95, 0.75]
    close = [0.85, 0.82, 0.8, 0.72, 0.9, 0.78]
    poor = [0.1, 0.2, 0.15, 0.05, 0.3, 0.2]
    found, topics = versus_best(_frame({"close": close, "best": best, "poor": poor}), "all_score")
    assert topics == 6 and found["best"] == {"best": True, "p": None, "worse": False}
    assert found["poor"]["worse"] and not found["close"]["worse"]
    raw = [stats.ttest_rel(r, best).pvalue for r in (close, poor)]
    # Holm with two tests: the smaller p doubled, the larger kept (at least the smaller adjusted)
    assert found["poor"]["p"] == pytest.approx(min(2 * raw[1], 1.0), rel=1e-9)
    assert found["close"]["p"] == pytest.approx(max(raw[0], 2 * raw[1]), rel=1e-9)


def test_one_run_or_one_shared_topic_gives_no_test():
    assert versus_best(_frame({"only": [0.5, 0.6]}), "all_score") == ({}, 0)
    frame = _frame({"a": [0.5, 0.6], "b": [0.4]})
    assert versus_best(frame, "all_score") == ({}, 1)


def test_the_leaderboard_shows_p_against_the_best(client, organizer, scored):  # noqa: F811
    client.force_login(organizer)
    page = client.get("/answers/rag/leaderboard/").content.decode()
    assert "vs best: p (Holm)" in page and ">best<" in page and "over the 3 topics every run was scored on" in page

"""The agreement page never prints "nan": a statistic without enough data reads "—" / "not enough data"."""

from __future__ import annotations

import math
import re

import pytest

from judging.agreement import ranking_correlation
from tests.evaluation.tracks import build_track, run, write_qrels


def test_a_ranking_that_ties_every_run_has_no_correlation():
    tau, tau_ap = ranking_correlation({"a": 0.0, "b": 0.0, "c": 0.0}, {"a": 0.1, "b": 0.2, "c": 0.3})
    assert math.isnan(tau) and math.isnan(tau_ap)
    tau, tau_ap = ranking_correlation({"a": 0.1, "b": 0.2, "c": 0.3}, {"a": 0.5, "b": 0.5, "c": 0.5})
    assert math.isnan(tau) and math.isnan(tau_ap)


@pytest.fixture
def two_assessors(db, tmp_path):
    collection = build_track(tmp_path)
    # the second assessor finds nothing relevant: every run scores MAP 0 under their qrels (no ranking),
    # and one shared document only per topic (kappa and alpha undefined)
    run("import_qrels", "robust", write_qrels(tmp_path / "second.txt", {("301", "a"): 0, ("302", "f"): 0}),
        "--assessor", "second")
    return collection


def test_the_agreement_page_says_not_enough_data_instead_of_nan(client, organizer, two_assessors):
    client.force_login(organizer)
    response = client.get("/judge/organize/robust/agreement/")
    assert response.status_code == 200
    text = response.content.decode()
    assert not re.search(r"\bnan\b", text, re.IGNORECASE)
    ranking = text[text.index("Effect on the ranking of the runs"):text.index("Disagreements")]
    assert "Kendall's τ" in ranking
    assert ranking.count("— <span class=\"muted\">not enough data</span>") == 2  # tau and tau_ap of the one pair

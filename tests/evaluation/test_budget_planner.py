"""The budget planner: judgments to τ ≥ 0.9 from subsampled pool depths, the command, the page and its refusals."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from evaluation.engine.budget import plan_budget
from tests import factories
from tests.evaluation.tracks import run, write_qrels
from workbench.models import Topic

TOPICS, RUNS, DOCS = 12, 8, 40


def synthetic(seed: int = 3):
    """Runs of decreasing quality over TOPICS topics; every document a run retrieved in its top 25 is judged."""
    rng = np.random.default_rng(seed)
    rankings, qrels = {}, {}
    relevant = {q: set(rng.choice(DOCS, 10, replace=False).tolist()) for q in range(TOPICS)}
    for r in range(RUNS):
        rankings[f"run{r}"] = {}
        for q in range(TOPICS):
            noise = rng.random(DOCS) + np.array([0.9 - 0.1 * r if d in relevant[q] else 0 for d in range(DOCS)])
            order = np.argsort(-noise)
            rankings[f"run{r}"][str(q + 1)] = [f"d{d}" for d in order]
            for d in order[:25].tolist():
                qrels[(str(q + 1), f"d{d}")] = int(d in relevant[q])
    return rankings, qrels


@pytest.fixture
def planned(db, tmp_path):
    collection = factories.collection_with_topics(slug="plan")
    Topic.objects.filter(collection=collection).delete()
    Topic.objects.bulk_create([Topic(collection=collection, qid=str(q + 1)) for q in range(TOPICS)])
    rankings, qrels = synthetic()
    for tag, ranking in rankings.items():
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        run("import_runs", "plan", str(path))
    run("import_qrels", "plan", write_qrels(tmp_path / "qrels.txt", qrels), "--assessor", "nist")
    return collection, len(qrels)


def test_plan_budget_prints_the_judgments_to_tau_09_with_an_interval(planned):
    collection, n = planned
    plan = json.loads(run("plan_budget", "plan", "--format", "json", "--planned", str(2 * n), "--bootstrap", "30"))
    assert plan["judgments"] == n and plan["planned"] == 2 * n
    assert 0 < plan["judgments_to_tau_0_9"] <= 2 * n and 0 < plan["tau_now"] <= 1
    lo, hi = plan["interval"]
    assert lo <= hi and plan["more_judgments"] == max(0, plan["judgments_to_tau_0_9"] - n)
    assert plan["curve"][-1]["judgments"] == n and plan["curve"][-1]["tau"] == 1.0
    assert [row["share"] for row in plan["sample_curve"]] == [0.1, 0.25, 0.5, 0.75, 1.0]
    assert plan["sample_curve"][-1]["tau"] == 1.0 and plan["sample_curve"][0]["tau"] < 1
    assert plan["topics_curve"] and all(row["topics"] < TOPICS for row in plan["topics_curve"])
    assert plan["cost"]["hours"] is None  # nobody judged in the browser: no judgments per hour measured
    with_rate = json.loads(run("plan_budget", "plan", "--format", "json", "--planned", str(2 * n), "--bootstrap",
                               "0", "--per-hour", "100", "--cost-per-hour", "20"))
    assert with_rate["cost"]["hours"] == round(with_rate["more_judgments"] / 100, 1)
    assert with_rate["cost"]["cost"] == pytest.approx(with_rate["cost"]["hours"] * 20, abs=0.5)


def test_a_plan_without_two_runs_says_it_cannot_plan():
    ranked = pd.DataFrame({"tag": ["a"], "qid": ["1"], "docno": ["x"], "rank": [1]})
    qrels = pd.DataFrame({"qid": ["1"], "docno": ["x"], "rel": [1], "depth": [1.0]})
    plan = plan_budget(ranked, qrels)
    assert plan.judgments_to_tau is None and plan.as_json()["interval"] is None


def test_the_organizer_computes_the_plan_as_a_job_and_sees_it(client, planned, organizer):
    client.force_login(organizer)
    assert "No plan yet" in client.get("/collections/plan/budget/").content.decode()
    started = client.post("/collections/plan/budget/", {"per_hour": "120"})
    assert started.status_code == 302 and started["Location"].startswith("/jobs/")
    page = client.get("/collections/plan/budget/").content.decode()
    assert "judgments for τ ≥ 0.9" in page and "assessor hours" in page and "<svg" in page
    assert "Fewer judgments per topic" in page and "Fewer topics" in page
    # the fitted path and the planned budget are drawn apart from the measured curves, labels anchored inside
    assert "the fitted path to the final ranking (dotted purple)" in page and 'stroke="#15803d"' in page
    assert page.count("<polyline") == 3 and 'text-anchor="end">' in page
    refused = client.post("/collections/plan/budget/", {"per_hour": "-3"})
    assert refused.status_code == 400 and "Judgments per hour per assessor" in refused.content.decode()


@pytest.mark.parametrize("who, status", [("assessor", 403), ("outsider", 403), (None, 302)])
def test_only_organizers_reach_the_budget_page(client, planned, request, who, status):
    if who:
        client.force_login(request.getfixturevalue(who))
    assert client.get("/collections/plan/budget/").status_code == status
    assert client.post("/collections/plan/budget/", {}).status_code == status


def _judged(collection, user, n: int, ms: int, source: str, start: int = 0) -> None:
    from judging.models import Judgment

    topic = collection.topics.first()
    Judgment.objects.bulk_create([Judgment(collection=collection, topic=topic, docno=f"x{start + k}", grade=1,
                                           assessor=user.username if user else "qrels", user=user, source=source,
                                           time_spent_ms=ms) for k in range(n)])


def test_the_judging_rate_counts_human_judging_only(planned, assessor):
    """Imported judgments carrying a time, machine ones and a script's posts a few ms apart (the demo's 62,970
    judgments per hour) are not in the rate; 25 judgments at 36 s each are 100 an hour."""
    collection, n = planned
    _judged(collection, None, 500, 50, "import")
    _judged(collection, assessor, 300, 40, "web", start=500)
    _judged(collection, None, 200, 10, "machine", start=800)
    few = run("plan_budget", "plan", "--planned", str(2 * n), "--bootstrap", "0")
    assert "not enough human judging yet to measure a rate: 0 judgments" in few and "assessor hours" not in few
    _judged(collection, assessor, 25, 36_000, "web", start=1000)
    plan = json.loads(run("plan_budget", "plan", "--format", "json", "--planned", str(2 * n), "--bootstrap", "0"))
    assert (plan["cost"]["per_hour"], plan["cost"]["rated_on"], plan["cost"]["assessors"]) == (100.0, 25, 1)
    text = run("plan_budget", "plan", "--planned", str(2 * n), "--bootstrap", "0")
    assert "at 100.0 judgments per hour (measured on 25 judgments by 1 assessors)" in text


def test_the_curve_ends_at_the_pools_depth():
    """Judged documents no contributing run retrieved are counted at the pool's depth, not one past it."""
    ranked = pd.DataFrame({"tag": ["a", "a", "b", "b"], "qid": ["1"] * 4, "docno": ["x", "y", "y", "x"],
                           "rank": [1, 2, 1, 2]})
    qrels = pd.DataFrame({"qid": ["1"] * 3, "docno": ["x", "y", "z"], "rel": [1, 0, 1],
                          "depth": [1.0, 1.0, np.inf]})
    assert plan_budget(ranked, qrels, bootstrap=0, max_depth=10).curve["depth"].max() == 1
    qrels.loc[1, "depth"] = 14.0  # ranked deeper than the pool by some run: counted at the pool's depth
    assert plan_budget(ranked, qrels, bootstrap=0, max_depth=10).curve["depth"].max() == 10

"""manage.py simulate_pool: replaying a strategy against known qrels, and what it says to bad input."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests import factories
from workbench.models import Document


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def track(db, tmp_path):
    """Topic 301 (crime): 6 relevant documents about crime among 40; one run ranks the relevant ones low."""
    collection = factories.collection_with_topics()
    texts = {f"c{i}": f"international organized crime syndicate report {i}" for i in range(6)}
    texts |= {f"n{i}": f"weather bulletin rainfall forecast number {i}" for i in range(34)}
    Document.objects.bulk_create(Document(collection=collection, docno=d, text=t) for d, t in texts.items())
    ranking = {"301": [f"n{i}" for i in range(20)] + [f"c{i}" for i in range(6)], "302": ["n1", "n2"]}
    (tmp_path / "slow.run").write_text(factories.run_lines("slow", ranking))
    run("import_runs", "robust", str(tmp_path / "slow.run"))
    qrels = tmp_path / "qrels"
    qrels.write_text("".join(f"301 0 c{i} 1\n" for i in range(6)) + "301 0 n0 0\n302 0 n1 0\n")
    return collection, qrels


def simulate(qrels, *args) -> dict:
    return json.loads(run("simulate_pool", "robust", "--qrels", str(qrels), "--format", "json", *args))


def test_cal_finds_every_relevant_document_within_its_budget(track):
    _, qrels = track
    result = simulate(qrels, "--strategy", "cal", "--budget", "10")
    topic = result["topics"]["301"]
    assert (topic["judgments"], topic["found"], topic["relevant"], topic["recall"]) == (10, 6, 6, 1.0)
    assert topic["recall_curve"][-1] == [10, 1.0]
    assert topic["stopped_at"] is None and topic["claimed_recall"] is None
    assert result["topics"]["302"]["recall"] is None  # no relevant document: not in the mean
    assert result["mean_recall"] == 1.0


def test_depth_judges_the_run_top_down_at_equal_judgments(track):
    _, qrels = track
    depth = simulate(qrels, "--strategy", "depth", "--budget", "10")["topics"]["301"]
    assert (depth["judgments"], depth["found"]) == (10, 0)  # the run puts the relevant ones at 21-26
    deeper = simulate(qrels, "--strategy", "depth", "--budget", "26")["topics"]["301"]
    assert deeper["found"] == 6 and deeper["recall_curve"][0] == [21, pytest.approx(1 / 6, abs=1e-6)]


@pytest.mark.parametrize("strategy", ["mtf", "maxmean"])
def test_adaptive_pools_replay_with_the_same_budget(track, strategy):
    _, qrels = track
    topic = simulate(qrels, "--strategy", strategy, "--budget", "26")["topics"]["301"]
    assert topic["judgments"] == 26 and topic["found"] == 6  # one run: they judge it top down too


def test_a_stopping_rule_reports_where_it_stopped_and_what_it_claims(track):
    _, qrels = track
    result = simulate(qrels, "--strategy", "cal", "--budget", "40", "--stop", "knee")
    assert result["stopping"]["rule"] == "knee"
    assert "stop_reason" in result["topics"]["301"]


def test_the_text_format_is_a_table_with_a_summary(track):
    _, qrels = track
    out = run("simulate_pool", "robust", "--strategy", "cal", "--qrels", str(qrels), "--budget", "10")
    assert "301" in out and "cal: mean recall 1.0000, 6 relevant found in" in out


@pytest.mark.parametrize(("args", "message"), [
    (["--strategy", "depth", "--stop", "knee"], "--stop applies to cal"),
    (["--strategy", "depth", "--runs", "nope"], "no run nope"),
    (["--strategy", "cal", "--budget", "0"], "must be at least 1"),
])
def test_bad_options_are_one_clear_line(track, args, message):
    _, qrels = track
    with pytest.raises(CommandError, match=message):
        run("simulate_pool", "robust", "--qrels", str(qrels), *args)


def test_a_missing_or_broken_qrels_file_is_named(track, tmp_path):
    with pytest.raises(CommandError, match="missing.txt"):
        run("simulate_pool", "robust", "--strategy", "cal", "--qrels", str(tmp_path / "missing.txt"))
    broken = tmp_path / "broken.txt"
    broken.write_text("301 0 c1 relevant\n")
    with pytest.raises(CommandError, match="broken.txt:1"):
        run("simulate_pool", "robust", "--strategy", "cal", "--qrels", str(broken))


def test_qrels_of_other_topics_and_collections_without_documents_are_refused(track, tmp_path):
    other = tmp_path / "other"
    other.write_text("999 0 x 1\n")
    with pytest.raises(CommandError, match="judge none of the topics"):
        run("simulate_pool", "robust", "--strategy", "cal", "--qrels", str(other))
    factories.collection_with_topics("empty")
    _, qrels = track
    with pytest.raises(CommandError, match="has no documents"):
        run("simulate_pool", "empty", "--strategy", "cal", "--qrels", str(qrels))
    with pytest.raises(CommandError, match="no collection 'nope'"):
        run("simulate_pool", "nope", "--strategy", "cal", "--qrels", str(qrels))


def test_cal_takes_its_parameters_as_build_pool_does(track):
    _, qrels = track
    result = simulate(qrels, "--strategy", "cal", "--budget", "10", "--cal", "growth=0", "presumed=5")
    assert result["topics"]["301"]["found"] == 6
    with pytest.raises(CommandError, match="is not KEY=VALUE"):
        simulate(qrels, "--strategy", "cal", "--cal", "speed=9")


def test_the_totals_count_the_side_sample_and_say_where_the_rule_was_not_met(track):
    """The target rule judges a random sample beside the review: the totals shown count it."""
    _, qrels = track
    result = simulate(qrels, "--strategy", "cal", "--budget", "40", "--stop", "target")
    topics = result["topics"].values()
    side = sum(t["side_judgments"] for t in topics)
    assert side > 0 and result["side_judgments"] == side
    assert result["judgments"] == sum(t["judgments"] for t in topics) + side == result["review_judgments"] + side
    out = run("simulate_pool", "robust", "--strategy", "cal", "--qrels", str(qrels), "--budget", "40",
              "--stop", "target")
    assert (f"in {result['judgments']} judgments ({result['review_judgments']} reviewed + {side} sampled on the "
            "side)") in out
    assert result["stopping"]["not_met"]["302"].startswith("target set incomplete: 0 of ")
    assert "topic 302: the rule could not be met (target set incomplete: 0 of " in out

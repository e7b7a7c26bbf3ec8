""""Judged" has two named meanings, computed once (evaluation.selectors.judged_figures):

- judged in the pool: pooled documents with a judgment / pooled documents;
- judgments (incl. outside the pool): every judged document of the topics, pooled or not.

Track (tracks.py): a depth-2 pool of alpha and beta holds 301: a b x, 302: e f g (6 documents). Its qrels
judge 301: a b x, 302: e f g (all 6); the extra qrels below add 2 judged documents outside the pool and leave
one pooled document unjudged by removing it from the track's qrels.
"""

from __future__ import annotations

import re

import pytest

from evaluation import selectors
from tests.evaluation.tracks import QRELS, build_track, run, write_qrels

# the track's qrels without 302 g (pooled, now unjudged), plus two documents no run pooled
JUDGED = {k: v for k, v in QRELS.items() if k != ("302", "g")} | {("301", "outside1"): 1, ("302", "outside2"): 0}


@pytest.fixture
def track(db, tmp_path):
    return build_track(tmp_path, qrels=JUDGED)


def test_the_selector_counts_the_pool_and_the_judgments_apart(track):
    figures = selectors.judged_figures(track)
    assert (figures.pool, figures.pooled, figures.judged_in_pool, figures.judgments) == ("main", 6, 5, 7)
    assert figures.percent_in_pool == 83
    assert figures.topics["302"] == {"pooled": 3, "judged_in_pool": 2, "judgments": 3}


def test_a_cannot_judge_counts_as_judged_as_it_does_for_complete_topics(track, tmp_path):
    from judging.models import Judgment
    from workbench.models import Topic

    Judgment.objects.create(collection=track, topic=Topic.objects.get(collection=track, qid="302"), docno="g",
                            assessor="nist", grade=None, cannot_judge=True)
    assert selectors.judged_figures(track).judged_in_pool == 6


def _figures(html: str) -> list[str]:
    return re.findall(r'class="judged-figure">(\d+)%<', html)


def test_overview_pool_page_and_leaderboard_show_the_same_in_pool_percentage(client, organizer, track):
    client.force_login(organizer)
    pages = {name: client.get(f"/collections/robust/{path}").content.decode()
             for name, path in [("overview", ""), ("pool", "pool/"), ("leaderboard", "leaderboard/?topics=all")]}
    for name, html in pages.items():
        assert _figures(html) == ["83"], name
        assert "Judged in the pool (main)" in html, name
        assert "(5 of 6 pooled documents)" in html, name
        assert "judgments (incl. outside the pool)" in html.lower(), name
    # the per-topic tables name the two figures apart and count them the same way
    for name in ("overview", "pool"):
        assert "Judged in the pool</" in pages[name] and "Judgments (incl. outside the pool)</" in pages[name], name
    assert "302: 2 of 3" in pages["leaderboard"]  # the partly judged topic, in the pool's terms


def test_the_topic_page_names_both_figures(client, organizer, track):
    client.force_login(organizer)
    html = client.get("/collections/robust/topics/302/").content.decode()
    assert re.search(r"judged in the pool: <strong>2</strong> · judgments \(incl. outside the pool\): "
                     r"<strong>3</strong>", html)


def test_judgments_added_later_move_every_page_at_once(client, organizer, track, tmp_path):
    client.force_login(organizer)
    run("import_qrels", "robust", write_qrels(tmp_path / "late.txt", {("302", "g"): 1}), "--assessor", "late")
    for path in ("", "pool/", "leaderboard/?topics=all"):
        assert _figures(client.get(f"/collections/robust/{path}").content.decode()) == ["100"], path


def test_show_collection_prints_the_same_two_figures(track):
    import json

    summary = json.loads(run("show_collection", "robust"))
    assert summary["judged_in_pool"] == {"pool": "main", "judged": 5, "pooled": 6, "percent": 83}
    assert summary["judged_documents"] == 7

"""Continuous active learning (cal): features, the review loop, stopping by hand, the side sample."""

from __future__ import annotations

import numpy as np
import pytest

from pooling.strategies.cal import CalParams, CalPool
from pooling.strategies.features import build_features, load_features
from pooling.strategies.simulate import OrderedPool, simulate
from pooling.strategies.stopping import Knee, Target

NOISE = [f"noise{i}" for i in range(200)]


def corpus(seed: int = 0):
    """40 documents about crime (the topic's word) that also say 'mafia' (d000-d039); 20 that only say
    'mafia' (d580-d599: the classifier must learn that word from the judgments); 540 of noise."""
    rng = np.random.default_rng(seed)
    docs = []
    for i in range(600):
        words = list(rng.choice(NOISE, size=12))
        if i < 40:
            words += ["crime", "mafia", "smuggling"]
        elif i >= 580:
            words += ["mafia", "smuggling"]
        docs.append((f"d{i:03d}", " ".join(words)))
    relevant = {d for d, _ in docs[:40] + docs[580:]}
    return docs, relevant


@pytest.fixture(scope="module")
def features():
    docs, _ = corpus()
    return build_features([d for d, _ in docs], [t for _, t in docs], n_features=2 ** 14)


def test_features_round_trip_through_a_file(tmp_path, features):
    features.save(tmp_path / "f.npz")
    again = load_features(tmp_path / "f.npz")
    assert list(again.docnos) == list(features.docnos)
    assert (again.matrix != features.matrix).nnz == 0
    assert (again.query("organised crime") != features.query("organised crime")).nnz == 0
    assert again.version == 2 and (again.bm25("organised crime") == features.bm25("organised crime")).all()


def test_bm25_of_a_topic_text_is_the_textbook_formula(features):
    """Features keep each document's length and norm, so the counts of a topic's words come back from the
    tf-idf vectors: BM25 (k1 = 1.2, b = 0.75, idf log(1 + (N - df + 0.5) / (df + 0.5))) computed here from the
    words themselves gives the same scores."""
    docs, _ = corpus()
    words = [text.split() for _, text in docs]
    n, average = len(words), sum(map(len, words)) / len(words)
    expected = np.zeros(n)
    for term in ("mafia", "crime"):
        df = sum(term in w for w in words)
        idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
        for i, w in enumerate(words):
            tf = w.count(term)
            expected[i] += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * len(w) / average))
    assert np.allclose(features.bm25("mafia crime"), expected, rtol=1e-5)
    assert features.bm25("zeppelin").max() == 0


def test_features_stored_before_bm25_still_drive_a_review_without_the_anchor(tmp_path, features):
    """Version 1 stored no document lengths: such features load, give no BM25, and cal ranks as it did then
    (its classifier alone, the choices of anchor=none) until they are computed again."""
    from pooling.strategies.features import Features

    Features(features.docnos, features.matrix, features.idf, features.stemmed).save(tmp_path / "v1.npz")
    old = load_features(tmp_path / "v1.npz")
    assert old.version == 1 and old.bm25("organised crime") is None
    _, relevant = corpus()
    offered = {}
    for name, feats, anchor in (("v1", old, "bm25"), ("none", features, "none"), ("bm25", features, "bm25")):
        pool = CalPool(feats, {"1": "organised crime"}, CalParams(budget=50, anchor=anchor))
        offered[name] = list(simulate(pool, {"1": relevant}) and pool.judged("1")["docno"])
    assert offered["v1"] == offered["none"]
    assert offered["bm25"] != offered["none"]  # the anchor changes the ranking


def test_cal_learns_words_the_topic_text_does_not_have(features):
    _, relevant = corpus()
    pool = CalPool(features, {"1": "organised crime"}, CalParams(budget=70))
    result = simulate(pool, {"1": relevant})
    # the topic text reaches the 40 'crime' documents; the 20 'mafia'-only ones share no word with it and
    # are found only because the judged documents taught the classifier 'mafia' and 'smuggling'
    assert result["topics"]["1"]["found"] == 60
    assert result["topics"]["1"]["judgments"] == 70


def test_cal_finds_more_than_a_ranking_by_the_topic_text_alone(features):
    _, relevant = corpus()
    scores = (features.matrix @ features.query("organised crime").T).toarray().ravel()
    ranking = [str(features.docnos[i]) for i in np.argsort(-scores, kind="stable")]
    static = simulate(OrderedPool({"1": ranking}, 60), {"1": relevant})
    learned = simulate(CalPool(features, {"1": "organised crime"}, CalParams(budget=60)), {"1": relevant})
    assert learned["topics"]["1"]["found"] > static["topics"]["1"]["found"]


def test_batches_grow_so_retraining_is_rare(features):
    _, relevant = corpus()
    pool = CalPool(features, {"1": "organised crime"}, CalParams(budget=300, growth=0.1))
    simulate(pool, {"1": relevant})
    rounds = pool.status("1")["rounds"]
    assert rounds < 40  # batches 1, 2, ..., 10, 11, 13, 15, ...: about 36 rounds reach 300, not 300
    fixed = CalPool(features, {"1": "organised crime"}, CalParams(budget=30, growth=0))
    simulate(fixed, {"1": relevant})
    assert fixed.status("1")["rounds"] == 30


def test_the_next_document_stays_the_same_until_it_is_judged(features):
    pool = CalPool(features, {"1": "organised crime"})
    first = pool.next_document("1")
    assert pool.next_document("1") == first
    assert pool.record("1", first, True)
    assert not pool.record("1", first, False)  # judged already
    assert not pool.record("1", "no-such-document", True)
    assert pool.next_document("1") != first
    assert pool.next_document("unknown topic") is None


def test_the_organizer_can_stop_a_topic_by_hand(features):
    pool = CalPool(features, {"1": "organised crime", "2": "smuggling"})
    pool.record("1", pool.next_document("1"), True)
    pool.stop("1", "enough for this topic")
    assert pool.next_document("1") is None
    assert pool.remaining("1") == 0
    decision = pool.status("1")["decision"]
    assert decision["stopped"] and decision["rule"] == "hand" and decision["at"] == 1
    assert decision["reason"] == "enough for this topic"
    assert pool.next_document("2") is not None  # the other topic goes on


def test_budget_bounds_the_review(features):
    _, relevant = corpus()
    result = simulate(CalPool(features, {"1": "crime"}, CalParams(budget=5)), {"1": relevant})
    assert result["topics"]["1"]["judgments"] == 5


def test_runs_top_documents_are_judged_first(features):
    seeds = {"1": ["d300", "d301"]}
    pool = CalPool(features, {"1": "organised crime"}, CalParams(seed_depth=2), seed_docs=seeds)
    offered = []
    for _ in range(3):
        docno = pool.next_document("1")
        offered.append(docno)
        pool.record("1", docno, False)
    assert offered[:2] == ["d300", "d301"]


def test_the_target_rule_judges_its_side_sample_first_and_stops_once_the_review_found_it(features):
    _, relevant = corpus()
    rule = Target(0.8, 0.95)
    pool = CalPool(features, {"1": "organised crime"}, CalParams(budget=None), stop_rule=rule)
    result = simulate(pool, {"1": relevant})["topics"]["1"]
    status = pool.status("1")
    assert status["side_relevant"] == rule.target_size
    assert result["side_judgments"] >= rule.target_size
    assert result["stopped_at"] is not None and result["claimed_recall"] == 0.8
    # the side sample is not counted as review, and the review went on until all 14 were reached
    assert result["judgments"] == result["stopped_at"] <= 600
    assert status["recall_estimate"]["estimate"] == 1.0
    assert result["recall"] >= 0.8


def test_sampled_documents_the_review_reaches_are_not_judged_twice(features):
    _, relevant = corpus()
    pool = CalPool(features, {"1": "organised crime"}, CalParams(budget=None), stop_rule=Target(0.8, 0.95))
    asked = []
    while (docno := pool.next_document("1")) is not None:
        asked.append(docno)
        pool.record("1", docno, docno in relevant)
    assert len(asked) == len(set(asked))


def test_the_knee_rule_stops_a_review_that_has_run_dry(features):
    _, relevant = corpus()
    pool = CalPool(features, {"1": "organised crime"}, CalParams(budget=None), stop_rule=Knee())
    result = simulate(pool, {"1": relevant})["topics"]["1"]
    # 60 relevant found early, then nothing: the knee is at 60, slope ratio (60/60) / (1/(s-60)) = s - 60 must
    # reach 156 - 60 = 96 -> stops at s = 156
    assert result["stopped_at"] == 156
    assert result["found"] == 60
    assert result["claimed_recall"] is None  # the knee method states no recall


def test_a_pool_recorded_before_the_anchor_goes_on_without_it():
    assert CalParams.stored(CalParams().as_dict()) == CalParams()  # anchor bm25, the default now
    before = {k: v for k, v in CalParams(budget=40).as_dict().items() if k != "anchor"}
    assert CalParams.stored(before) == CalParams(budget=40, anchor="none")

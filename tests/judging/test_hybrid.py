"""Hybrid judging: machine labels calibrated per topic on the human grades (the collection's other topics as a
prior), the ``hybrid`` qrels policy, its judge card, and ``manage.py simulate_hybrid``, which replays the
router with a file of human qrels as the assessor. The machine labels are made by a noisy generator (a judge
whose probabilities are shifted per topic) and imported as a judge's LARA-style probability CSV."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from scipy.special import expit
from sklearn.metrics import cohen_kappa_score

from evaluation.judge_card import judge_card
from evaluation.qrels_comparison import side_qrels
from evaluation.selectors import offered_policies
from judging.machine.hybrid import fit_topics
from judging.policies import HUMAN, HYBRID, MACHINE
from judging.qrels import qrels
from workbench.access.tokens import token_create
from workbench.collections.services import collection_create
from workbench.models import Topic

GRADES = [{"grade": 0, "label": "no"}, {"grade": 1, "label": "some"}, {"grade": 2, "label": "high"}]
TOPICS = [str(q) for q in range(1, 9)]


def _collection(slug="hyb"):
    collection = collection_create(slug=slug, name="Hybrid", scale=GRADES)
    Topic.objects.bulk_create(Topic(collection=collection, qid=q, title=f"topic {q}") for q in TOPICS)
    return collection


def _generated(seed=0, per_topic=60):
    """Human grades and a noisy judge's graded probabilities: per topic, the judge's log-odds are shifted
    (it over-calls some topics and under-calls others)."""
    rng = np.random.default_rng(seed)
    rows = []
    for qid in TOPICS:
        shift = rng.normal(0, 1.5)
        for i in range(per_topic):
            relevant = rng.random() < 0.3
            human = int(rng.choice([1, 2])) if relevant else 0
            p = float(expit((2.5 if relevant else -2.5) + shift + rng.normal(0, 1.5)))
            rows.append((qid, f"d{qid}-{i}", human, p))
    return pd.DataFrame(rows, columns=["qid", "docno", "human", "p"])


def _write_machine(frame, path):
    """prob_0..prob_2: the judge's probability of relevance split 1:1 between grades 1 and 2."""
    lines = ["topic_id,doc_id,prob_0,prob_1,prob_2"]
    lines += [f"{q},{d},{1 - p:.6f},{p / 2:.6f},{p / 2:.6f}" for q, d, p in frame[["qid", "docno", "p"]].itertuples(
        index=False)]
    path.write_text("\n".join(lines) + "\n")


def _write_human(frame, path):
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in frame[["qid", "docno", "human"]].itertuples(index=False)))


@pytest.fixture
def generated(db, tmp_path):
    collection = _collection()
    frame = _generated()
    _write_machine(frame, tmp_path / "judge.csv")
    _write_human(frame, tmp_path / "human.qrels")
    call_command("import_machine_judgments", "hyb", str(tmp_path / "judge.csv"), "--judge", "noisy", stdout=StringIO())
    return collection, frame, tmp_path


def _simulate(*args):
    out = StringIO()
    call_command("simulate_hybrid", *args, "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def test_a_topic_without_human_grades_takes_the_collection_s_curve_and_one_with_many_its_own():
    rng = np.random.default_rng(1)
    margin = rng.normal(0, 2, 400)
    qids = np.where(np.arange(400) < 200, "1", "2")
    relevant = np.where(qids == "1", margin > 0, margin > 2)  # on topic 2 the machine over-calls
    cal = fit_topics(qids=qids, margin=margin, relevant=relevant)
    p1, p2, p_new = cal.probability(["1", "2", "3"], [1.0, 1.0, 1.0])
    assert p1 > 0.8 and p2 < 0.2  # each judged topic its own cut
    assert p_new == pytest.approx(cal.probability(["9"], [1.0])[0]) and p2 < p_new < p1  # unjudged: the prior


def test_simulate_hybrid_kappas_equal_scikit_learn_on_the_written_file(generated):
    collection, frame, folder = generated
    out = folder / "hybrid.qrels"
    result = _simulate("hyb", "--judge", "noisy", "--human", str(folder / "human.qrels"), "--budget", "0.2",
                       "--seed", "3", "--output", str(out))
    assert result["pairs"] == len(frame) and result["asked"] == round(0.2 * len(frame)) and result["budget"] == 0.2
    written = pd.read_csv(out, sep=" ", header=None, names=["qid", "it", "docno", "rel"], dtype={"qid": str})
    both = written.merge(frame, on=["qid", "docno"])
    assert len(both) == len(frame) == len(written)
    assert result["hybrid"]["kappa_binary"] == pytest.approx(cohen_kappa_score(both["human"] >= 1, both["rel"] >= 1))
    assert result["hybrid"]["kappa_graded"] == pytest.approx(
        cohen_kappa_score(both["human"], both["rel"], weights="linear"))
    machine = qrels(collection, policy=MACHINE).merge(frame, on=["qid", "docno"])
    assert result["machine"]["kappa_binary"] == pytest.approx(cohen_kappa_score(machine["human"] >= 1,
                                                                                machine["rel"] >= 1))
    # the per-topic calibration undoes the judge's per-topic shifts: better than its raw labels
    assert result["hybrid"]["kappa_binary"] > result["machine"]["kappa_binary"] + 0.1
    again = _simulate("hyb", "--judge", "noisy", "--human", str(folder / "human.qrels"), "--budget", "0.2",
                      "--seed", "3", "--output", str(folder / "again.qrels"))
    assert again["hybrid"] == result["hybrid"] and (folder / "again.qrels").read_text() == out.read_text()


def test_routing_beats_random_routing_where_the_machine_errs_only_near_its_cut(db, tmp_path):
    """Easy pairs are labelled right with a wide margin; the hard third sits at the cut with coin-flip labels:
    routing spends the budget on exactly those, random routing on a third of them."""
    _collection()
    rng = np.random.default_rng(7)
    rows = []
    for qid in TOPICS:
        for i in range(45):
            human = int(rng.random() < 0.4)
            hard = i % 3 == 0
            p = float(rng.uniform(0.45, 0.55)) if hard else (0.97 if human else 0.03)
            rows.append((qid, f"d{qid}-{i}", human, p))
    frame = pd.DataFrame(rows, columns=["qid", "docno", "human", "p"])
    _write_machine(frame, tmp_path / "judge.csv")
    _write_human(frame, tmp_path / "human.qrels")
    call_command("import_machine_judgments", "hyb", str(tmp_path / "judge.csv"), "--judge", "edgy", stdout=StringIO())
    result = _simulate("hyb", "--judge", "edgy", "--human", str(tmp_path / "human.qrels"), "--budget", "0.4",
                       "--output", str(tmp_path / "out.qrels"))
    assert result["hybrid"]["kappa_binary"] > 0.95
    assert result["random"]["kappa_binary"] < result["hybrid"]["kappa_binary"] - 0.1


def test_the_hybrid_policy_keeps_human_grades_and_calibrates_the_rest(generated, client, organizer):
    collection, frame, folder = generated
    judged = frame.groupby("qid").head(30)  # half of each topic judged by humans
    _write_human(judged, folder / "some.qrels")
    call_command("import_qrels", "hyb", str(folder / "some.qrels"), "--assessor", "nist", stdout=StringIO())
    hybrid, machine = qrels(collection, policy=HYBRID), qrels(collection, policy=MACHINE)
    assert len(hybrid) == len(frame)
    human = qrels(collection, policy=HUMAN)
    kept = hybrid.merge(human, on=["qid", "docno"], suffixes=("", "_human"))
    assert len(kept) == len(judged) and (kept["rel"] == kept["rel_human"]).all()
    rest = frame.drop(judged.index).merge(hybrid, on=["qid", "docno"]).merge(
        machine, on=["qid", "docno"], suffixes=("", "_machine"))
    # on the other half, each topic's calibration undoes the judge's shift on it
    assert cohen_kappa_score(rest["human"] >= 1, rest["rel"] >= 1) > cohen_kappa_score(
        rest["human"] >= 1, rest["rel_machine"] >= 1) + 0.03
    card = judge_card(collection, policy=HYBRID)["hybrid"]
    assert card["calibration_set"] == len(judged) and card["machine_labelled"] == len(frame)
    assert card["budget_spent"] == pytest.approx(0.5) and card["audit_share"] == 0.1
    assert card["calibration"]["trained_on"] == len(judged)
    assert "hybrid" not in judge_card(collection, policy="human-over-machine")
    client.force_login(organizer)
    answer = client.get("/collections/hyb/downloads/qrels.txt", {"policy": "hybrid"})
    assert answer.status_code == 200 and len(answer.content.decode().splitlines()) == len(frame)


@pytest.mark.parametrize("change, message", [
    ({"--judge": "nobody"}, "no machine judge 'nobody' in collection 'hyb' (its judges: noisy)"),
    ({"--budget": "1.5"}, "--budget: '1.5': give the share of pairs a human grades, between 0 and 1"),
    ({"--human": "missing.qrels"}, "missing.qrels"),
    ({"--output": "nowhere/out.qrels"}, "--output"),
])
def test_bad_input_is_one_line_and_writes_nothing(generated, change, message):
    _, _, folder = generated
    options = {"--judge": "noisy", "--human": str(folder / "human.qrels"), "--budget": "0.2",
               "--output": str(folder / "out.qrels")}
    for key, value in change.items():
        options[key] = value if key in ("--judge", "--budget") else str(folder / value)
    with pytest.raises(CommandError) as failed:
        call_command("simulate_hybrid", "hyb", *[x for pair in options.items() for x in pair], stdout=StringIO())
    assert message in str(failed.value) and "\n" not in str(failed.value)
    assert not (folder / "out.qrels").exists()


def test_the_hybrid_policy_is_offered_wherever_policies_are(generated, organizer, client):
    collection, frame, folder = generated
    _write_human(frame.groupby("qid").head(10), folder / "some.qrels")
    call_command("import_qrels", "hyb", str(folder / "some.qrels"), "--assessor", "nist", stdout=StringIO())
    assert HYBRID in [p.name for p in offered_policies(collection)]
    side = side_qrels(collection, "hybrid")
    pd.testing.assert_frame_equal(side.qrels, qrels(collection, policy=HYBRID))
    token = token_create(user=organizer)[1]
    api = client.get("/api/v1/collections/hyb/qrels", {"policy": "hybrid"}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert api.status_code == 200 and len(api.json()["qrels"]) == len(frame) and api.json()["policy"] == "hybrid"

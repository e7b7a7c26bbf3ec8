"""hybrid_intervals: each run's MAP under the hybrid qrels, with an interval over qrels drawn from the
calibrated probabilities of the machine-labelled pairs; no width once humans graded every pair."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from tests import factories
from tests.judging.test_hybrid import _collection, _generated, _write_human, _write_machine


@pytest.fixture
def track(db, tmp_path):
    collection = _collection()
    frame = _generated()
    _write_machine(frame, tmp_path / "judge.csv")
    call_command("import_machine_judgments", "hyb", str(tmp_path / "judge.csv"), "--judge", "noisy", stdout=StringIO())
    order = frame.sort_values(["qid", "human"], ascending=[True, False])
    good = {q: list(g["docno"]) for q, g in order.groupby("qid")}
    rankings = {"good": good, "bad": {q: d[::-1] for q, d in good.items()}}
    for tag, ranking in rankings.items():
        (tmp_path / tag).write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", "hyb", str(tmp_path / tag), "--no-pool", stdout=StringIO())
    return collection, frame, tmp_path


def _intervals(*args):
    out = StringIO()
    call_command("hybrid_intervals", "hyb", "--samples", "20", *args, "--format", "json", stdout=out)
    return json.loads(out.getvalue())


def test_machine_labelled_pairs_widen_each_run_s_interval_and_human_ones_close_it(track):
    collection, frame, folder = track
    _write_human(frame.groupby("qid").head(20), folder / "some.qrels")
    call_command("import_qrels", "hyb", str(folder / "some.qrels"), "--assessor", "nist", stdout=StringIO())
    some = _intervals()
    assert [r["run"] for r in some["runs"]] == ["good", "bad"]
    assert some["machine_pairs"] == len(frame) - 160 and some["human_pairs"] == 160
    assert all(r["high"] - r["low"] > 0.005 for r in some["runs"])
    _write_human(frame, folder / "all.qrels")
    call_command("import_qrels", "hyb", str(folder / "all.qrels"), "--assessor", "nist2", stdout=StringIO())
    every = _intervals()
    assert every["machine_pairs"] == 0
    assert all(r["low"] == r["high"] == r["value"] for r in every["runs"])


def test_without_machine_labels_it_says_so_in_one_line(db):
    _collection()
    with pytest.raises(CommandError, match="has no machine labels"):
        call_command("hybrid_intervals", "hyb", stdout=StringIO())


def test_the_leaderboard_ranks_the_runs_under_the_hybrid_policy(track, client, organizer):
    collection, frame, folder = track
    _write_human(frame.groupby("qid").head(20), folder / "some.qrels")
    call_command("import_qrels", "hyb", str(folder / "some.qrels"), "--assessor", "nist", stdout=StringIO())
    client.force_login(organizer)
    board = client.get(reverse("evaluation:leaderboard", args=["hyb"]), {"qrels": "hybrid"})
    text = board.content.decode()
    assert board.status_code == 200 and "Qrels policy: hybrid." in text
    assert text.index(">good<") < text.index(">bad<")  # ranked by MAP under the hybrid qrels

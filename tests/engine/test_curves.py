"""manage.py curves: the 11-point curve equals trec_eval's iprec_at_recall; the area under each topic's ROC
points equals roc_auc; the non-interpolated curve ends at the run's recall and precision."""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.engine.conftest import evaluate
from tests.engine.test_textbook import _random_case


def _files(tmp_path, seed):
    qrels, run = _random_case(seed)
    (tmp_path / "q").write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels))
    (tmp_path / "r").write_text("".join(f"{q} Q0 {d} {i} {s} r\n" for i, (q, d, s) in enumerate(run, 1)))
    return qrels, run


def _curves(tmp_path, *args):
    out = StringIO()
    call_command("curves", str(tmp_path / "q"), str(tmp_path / "r"), "--format", "json", *args, stdout=out)
    return json.loads(out.getvalue())


@pytest.mark.parametrize("seed", range(3))
def test_the_eleven_point_curve_is_trec_evals_iprec_at_recall(tmp_path, seed):
    qrels, run = _files(tmp_path, seed)
    points = [p for p in _curves(tmp_path, "--kind", "interpolated") if p["topic"] == "all"]
    ours = evaluate(qrels, run, ["iprec_at_recall"]).aggregate
    assert [p["precision"] for p in points] == pytest.approx(
        [ours[f"iprec_at_recall_{r:3.2f}"] for r in np.linspace(0, 1, 11)], abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_the_area_under_each_topics_roc_points_is_roc_auc(tmp_path, seed):
    qrels, run = _files(tmp_path, seed)
    points = _curves(tmp_path, "--kind", "roc", "--per-topic")
    auc = evaluate(qrels, run, ["roc_auc"]).per_topic["roc_auc"]
    for topic in auc.index:
        mine = [(p["fpr"], p["tpr"]) for p in points if p["topic"] == topic]
        x, y = zip(*mine, strict=True)
        assert np.trapezoid(y, x) == pytest.approx(auc[topic], abs=1e-9)


def test_the_non_interpolated_curve_ends_at_the_runs_recall_and_precision(tmp_path):
    qrels, run = _files(tmp_path, 0)
    points = _curves(tmp_path, "--kind", "pr", "--per-topic")
    values = evaluate(qrels, run, ["recall.30", "P.30"]).per_topic
    for topic in values.index:
        last = [p for p in points if p["topic"] == topic][-1]
        assert (last["recall"], last["precision"]) == pytest.approx(
            (values.loc[topic, "recall_30"], values.loc[topic, "P_30"]), abs=1e-9)


def test_bad_input_is_one_line(tmp_path):
    _files(tmp_path, 0)
    with pytest.raises(CommandError, match="cannot read"):
        call_command("curves", str(tmp_path / "q"), str(tmp_path / "missing"), stdout=StringIO())
    (tmp_path / "other").write_text("999 Q0 x 1 1.0 r\n")
    with pytest.raises(CommandError, match="no topic is in both"):
        call_command("curves", str(tmp_path / "q"), str(tmp_path / "other"), stdout=StringIO())

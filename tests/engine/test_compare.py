"""manage.py compare: a table of means with the runs each is significantly better than, in four formats;
Benjamini-Hochberg and Tukey's HSD checked by hand; bad input in one line."""

from __future__ import annotations

import json
import random
from io import StringIO

import numpy as np
import pandas as pd
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.engine.compare import tukey_hsd
from evaluation.engine.corrections import adjust_p_values


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("compare")
    rng = random.Random(4)
    with open(folder / "qrels", "w") as q:
        for t in range(1, 26):
            q.write("".join(f"{t} 0 D{t}-{d} {int(d < 10)}\n" for d in range(40)))
    for name, skill in (("good", 0.9), ("mid", 0.5), ("bad", 0.1)):
        with open(folder / f"{name}.run", "w") as f:
            for t in range(1, 26):
                docs = sorted(range(40), key=lambda d, s=skill: -(rng.random() + (s if d < 10 else 0)))
                f.write("".join(f"{t} Q0 D{t}-{d} {r} {100 - r} {name}\n" for r, d in enumerate(docs, 1)))
    return folder


def _compare(files, *args):
    out = StringIO()
    call_command("compare", str(files / "qrels"), *(str(files / f"{n}.run") for n in ("good", "mid", "bad")),
                 *args, stdout=out)
    return out.getvalue()


def test_the_text_table_marks_the_runs_each_beats(files):
    text = _compare(files, "-m", "map", "-m", "P.10")
    rows = {line.split()[1]: line for line in text.splitlines()[1:4]}
    assert rows["good"].split()[2:] == [rows["good"].split()[2], "bc", rows["good"].split()[4], "bc"]
    assert rows["mid"].endswith("c") and len(rows["bad"].split()) == 4  # bad beats nobody
    assert "paired t test, holm correction, alpha 0.05, 25 topics" in text


@pytest.mark.parametrize("test", ["wilcoxon", "sign", "randomization", "tukey"])
def test_every_test_and_the_json_form(files, test):
    data = json.loads(_compare(files, "-m", "map", "--test", test, "--format", "json"))
    runs = {row["run"]: row for row in data["runs"]}
    assert data["test"] == test and data["topics"] == 25
    assert runs["good"]["map"]["better_than"] == "bc" and runs["bad"]["map"]["better_than"] == ""
    assert runs["good"]["map"]["mean"] > runs["mid"]["map"]["mean"] > runs["bad"]["map"]["mean"]


def test_csv_and_latex(files):
    csv = pd.read_csv(StringIO(_compare(files, "-m", "map", "--format", "csv")))
    assert list(csv["run"]) == ["good", "mid", "bad"] and csv.loc[0, "map better than"] == "bc"
    latex = _compare(files, "-m", "ndcg_cut.10", "--format", "latex")
    assert "ndcg\\_cut\\_10" in latex and "\\textbf{" in latex and "$^{bc}$" in latex


def test_benjamini_hochberg_by_hand():
    # sorted p: 0.005 0.01 0.03 0.04 (m = 4): 4*0.005/1 = 0.02, 4*0.01/2 = 0.02, 4*0.03/3 = 0.04, 4*0.04/4 = 0.04
    assert adjust_p_values([0.01, 0.04, 0.03, 0.005], "bh").tolist() == pytest.approx([0.02, 0.04, 0.04, 0.02])


def test_tukey_hsd_agrees_with_the_printed_critical_value():
    # 3 runs x 3 topics, MSE by hand; q(0.05; k = 3, df = 4) = 5.04 in the studentized range tables
    scores = pd.DataFrame({"a": [0.9, 0.7, 0.8], "b": [0.5, 0.4, 0.6], "c": [0.45, 0.35, 0.50]})
    values = scores.to_numpy()
    resid = values - values.mean(0) - values.mean(1, keepdims=True) + values.mean()
    mse = (resid ** 2).sum() / 4
    p = tukey_hsd(scores)
    for (x, y), p_value in p.items():
        q = abs(scores[x].mean() - scores[y].mean()) / np.sqrt(mse / 3)
        assert (p_value < 0.05) == (q > 5.04), (x, y, q, p_value)
    assert tukey_hsd(pd.DataFrame({"a": [0.1, 0.2], "b": [0.1, 0.2]}))[("a", "b")] == 1.0


@pytest.mark.parametrize(("args", "message"), [
    (["-m", "nonsense"], "illegal measure"),
    (["--alpha", "2"], "between 0 and 1"),
])
def test_bad_input_is_one_line(files, args, message):
    with pytest.raises(CommandError, match=message):
        _compare(files, *args)
    with pytest.raises(CommandError, match="at least two run files"):
        call_command("compare", str(files / "qrels"), str(files / "good.run"), stdout=StringIO())
    with pytest.raises(CommandError, match="cannot read|No such file"):
        call_command("compare", str(files / "qrels"), str(files / "good.run"), str(files / "nope.run"),
                     stdout=StringIO())


def test_runs_on_one_topic_are_refused_in_one_line(tmp_path):
    (tmp_path / "qrels").write_text("1 0 d1 1\n")
    (tmp_path / "one.run").write_text("1 Q0 d1 1 1.0 one\n")
    with pytest.raises(CommandError, match="a paired test needs at least 2 topics, got 1"):
        call_command("compare", str(tmp_path / "qrels"), str(tmp_path / "one.run"), str(tmp_path / "one.run"),
                     stdout=StringIO())

"""``build_pool`` and ``evaluate`` say how far they are as every command that runs a job's work does
(workbench.management.progress): on a pipe a line when the work starts and when it is done, then one closing line;
on a terminal a bar on standard error. ``evaluate``'s standard output is its scores, so its progress and closing
line go to standard error."""

from __future__ import annotations

import json
import re
from io import StringIO

from django.core.management import call_command

from tests.evaluation.tracks import MAP, build_track
from tests.workbench.test_command_progress import Terminal


def test_build_pool_on_a_pipe_says_where_it_starts_and_ends_then_one_closing_line(db, tmp_path):
    build_track(tmp_path, pool_depth=None)
    out = StringIO()
    call_command("build_pool", "robust", "--depth", "3", "--seed", "1", stdout=out, stderr=StringIO())
    lines = out.getvalue().splitlines()
    assert lines[0] == "0% pool main: reading the runs, pooling with depth and writing the entries"
    assert lines[1] == "100% pool main: 7 documents added"
    assert len(lines) == 3 and re.fullmatch(r"pool robust/main \(depth, seed 1, shuffled order\): added 7 documents in "
                                            r"round 1; 7 documents on 2 topics from 2 runs; \d+\.\d s", lines[2])


def test_build_pool_on_a_terminal_keeps_only_its_closing_line(db, tmp_path):
    build_track(tmp_path, pool_depth=None)
    out = Terminal()
    call_command("build_pool", "robust", "--depth", "3", stdout=out, stderr=StringIO())
    assert len(out.getvalue().splitlines()) == 1 and "added 7 documents" in out.getvalue()


def test_evaluate_keeps_its_output_the_scores_and_says_how_far_it_is_on_standard_error(db, tmp_path):
    build_track(tmp_path)
    out, err = StringIO(), StringIO()
    call_command("evaluate", "robust", "-m", "map", stdout=out, stderr=err)
    scores = json.loads(out.getvalue())  # nothing but the scores on standard output
    assert {r["run"]: r["measures"]["map"] for r in scores["runs"]} == MAP
    lines = err.getvalue().splitlines()
    assert lines[0] == "0% evaluating robust: reading the runs and the qrels, scoring every run"
    assert lines[1] == "100% evaluating robust: 3 runs scored"
    assert re.fullmatch(r"evaluated 3 runs of 'robust' on 2 topics \(map; qrels current\); \d+\.\d s", lines[2])

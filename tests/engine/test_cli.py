"""The trec_eval command line: trec_eval's output format, options and exit codes, without a database."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from evaluation.engine.cli import main

QRELS = "1 0 d1 1\n1 0 d2 0\n1 0 d3 1\n1 0 d4 1\n1 0 d5 -1\n2 0 a 2\n"
RUN = ("1 Q0 d2 1 5.0 mine\n1 Q0 d1 2 4.0 mine\n1 Q0 x 3 3.0 mine\n1 Q0 d3 4 2.0 mine\n"
       "1 Q0 d5 5 1.0 mine\n")


@pytest.fixture
def files(tmp_path):
    def make(qrels: str = QRELS, run: str = RUN):
        q, r = tmp_path / "qrels.txt", tmp_path / "run.txt"
        q.write_text(qrels)
        r.write_text(run)
        return str(q), str(r)
    return make


def run_cli(*args):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(args), out, err)
    return code, out.getvalue(), err.getvalue()


def test_default_output_is_trec_evals_official_summary(files):
    q, r = files()
    code, out, err = run_cli(q, r)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0] == "runid                 \tall\tmine"
    assert lines[1] == "num_q                 \tall\t1"
    assert "map                   \tall\t0.3333" in lines
    assert "P_5                   \tall\t0.4000" in lines
    assert [line.split("\t")[0].strip() for line in lines][-1] == "P_1000"


def test_per_topic_lines_come_first_and_measure_params_name_the_values(files):
    q, r = files()
    code, out, _ = run_cli("-q", "-m", "P.2", "-mrelstring.4", "-m", "num_ret", q, r)
    assert code == 0
    assert out.splitlines() == [
        "num_ret               \t1\t5",
        "P_2                   \t1\t0.5000",
        "relstring_4           \t1\t'01-1'",
        "num_ret               \tall\t5",
        "P_2                   \tall\t0.5000",
    ]


def test_nosummary_level_depth_and_complete_flags(files):
    q, r = files()
    assert run_cli("-q", "-n", "-m", "map", q, r)[1] == "map                   \t1\t0.3333\n"
    assert run_cli("-l2", "-m", "num_rel", q, r)[1] == "num_rel               \tall\t0\n"
    assert run_cli("-M", "1", "-m", "num_ret", q, r)[1] == "num_ret               \tall\t1\n"
    complete = run_cli("-c", "-m", "num_q", "-m", "map", q, r)[1].splitlines()
    assert complete == ["num_q                 \tall\t2", "map                   \tall\t0.1667"]


def test_judged_only_flag_drops_unjudged_documents(files):
    q, r = files()
    assert run_cli("-J", "-m", "num_ret", q, r)[1] == "num_ret               \tall\t3\n"


def test_fields_after_the_run_tag_are_ignored_like_trec_eval(files):
    q, r = files(run=RUN.replace("mine\n", "mine trailing words\n"))
    code, out, _ = run_cli("-m", "map", q, r)
    assert (code, out) == (0, "map                   \tall\t0.3333\n")


@pytest.mark.parametrize(("qrels", "run", "where"), [
    (QRELS, RUN + "1 Q0 d1 6 0.5 mine\n", "run.txt:6:"),          # docno twice in a topic
    (QRELS, "1 Q0 d1 1\n", "run.txt:1:"),                          # malformed line
    (QRELS, "", "run.txt:1:"),                                     # empty run
    ("1 0 d1 yes\n", RUN, "qrels.txt:1:"),                         # grade that is not an integer
])
def test_bad_input_is_one_line_naming_file_and_line_with_exit_2(files, qrels, run, where):
    q, r = files(qrels, run)
    code, out, err = run_cli(q, r)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and where in err and "Traceback" not in err


def test_unknown_measure_and_usage_errors_exit_1(files):
    q, r = files()
    code, _, err = run_cli("-m", "nonsense", q, r)
    assert code == 1 and "illegal measure 'nonsense'" in err
    assert run_cli(q)[0] == 1
    assert run_cli("-x", q, r)[0] == 1


def test_bad_cutoffs_exit_2(files):
    q, r = files()
    code, _, err = run_cli("-m", "P.5,5", q, r)
    assert code == 2 and "duplicate cutoffs" in err


def test_no_topic_in_common_exits_7(files):
    q, r = files(run="9 Q0 d1 1 1.0 mine\n")
    assert run_cli(q, r)[0] == 7


def test_management_command_runs_without_the_database(files, capsys):
    q, r = files()
    call_command("trec_eval", "-m", "map", q, r)   # pytest-django blocks DB access outside db tests
    assert capsys.readouterr().out == "map                   \tall\t0.3333\n"
    with pytest.raises(CommandError):
        call_command("trec_eval", "-m", "nonsense", q, r)

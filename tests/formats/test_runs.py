"""Reading TREC runs: shapes found in real submissions, and every rule of the submission checker."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd
import pytest

from workbench.formats import FormatError, RunFile, read_run

CLEAN = "301 Q0 FBIS3-10082 1 12.5 mine\n301 Q0 FBIS3-10169 2 11.25 mine\n302 Q0 LA010189-0001 1 9 mine\n"


def write(tmp_path, text: str, name: str = "run.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def problems_of(tmp_path, text: str, **options) -> list[str]:
    path = write(tmp_path, text)
    with pytest.raises(FormatError) as caught:
        read_run(path, **options)
    return caught.value.problems


def test_single_space_run_gives_typed_frame_in_file_order(tmp_path):
    run = read_run(write(tmp_path, CLEAN))
    assert isinstance(run, RunFile)
    assert run.tag == "mine" and run.warnings == ()
    assert run.frame["qid"].astype(str).tolist() == ["301", "301", "302"]
    assert run.frame["docno"].tolist() == ["FBIS3-10082", "FBIS3-10169", "LA010189-0001"]
    assert run.frame["rank"].tolist() == [1, 2, 1]
    assert run.frame["score"].tolist() == [12.5, 11.25, 9.0]
    assert run.frame["rank"].dtype == np.int64 and run.frame["score"].dtype == np.float64
    assert isinstance(run.frame.index, pd.RangeIndex)
    assert run.name == str(tmp_path / "run.txt")


def test_tabs_and_runs_of_spaces_read_like_single_spaces(tmp_path):
    messy = "301\tQ0\tFBIS3-10082\t1\t12.5\tmine\n  301   Q0 FBIS3-10169\t 2  11.25 mine  \n\n302 Q0 LA010189-0001 1 9 mine"
    run = read_run(write(tmp_path, messy))
    clean = read_run(write(tmp_path, CLEAN, "clean.txt"))
    pd.testing.assert_frame_equal(run.frame, clean.frame)


def test_tab_separated_file_like_trec_covid_submissions(tmp_path):
    text = "1\tQ0\tzqf351sv\t1\t4.8530397\tir_covid19_cle_IB\n1\tQ0\t08efpohc\t2\t4.1\tir_covid19_cle_IB\n"
    run = read_run(write(tmp_path, text))
    assert run.tag == "ir_covid19_cle_IB"
    assert run.frame["docno"].tolist() == ["zqf351sv", "08efpohc"]


def test_windows_line_ends_are_accepted(tmp_path):
    run = read_run(write(tmp_path, CLEAN.replace("\n", "\r\n")))
    assert run.frame["docno"].tolist()[-1] == "LA010189-0001"


@pytest.mark.parametrize("lines_per_topic", [1, 5])
def test_qid_is_categorical_sorted_like_strcmp_so_sorting_sorts_the_strings(tmp_path, lines_per_topic):
    text = "".join(f"{qid} Q0 D{i} {i + 1} {9 - i} t\n" for qid in ("10", "9", "100") for i in range(lines_per_topic))
    frame = read_run(write(tmp_path, text)).frame
    assert isinstance(frame["qid"].dtype, pd.CategoricalDtype)
    assert list(frame["qid"].cat.categories) == ["10", "100", "9"]
    assert frame["qid"].astype(str).tolist() == [q for q in ("10", "9", "100") for _ in range(lines_per_topic)]
    assert frame.sort_values("qid", kind="stable")["qid"].astype(str).tolist()[::lines_per_topic] == ["10", "100", "9"]
    assert frame.groupby("qid", observed=True).size().to_dict() == {"10": lines_per_topic, "100": lines_per_topic,
                                                                    "9": lines_per_topic}


def test_gzip_path_and_file_objects_read_the_same(tmp_path):
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(CLEAN.encode()))
    expected = read_run(write(tmp_path, CLEAN)).frame
    for source in (gz, io.BytesIO(CLEAN.encode()), io.StringIO(CLEAN), io.BytesIO(gzip.compress(CLEAN.encode()))):
        pd.testing.assert_frame_equal(read_run(source).frame, expected)


def test_name_overrides_the_display_name_in_messages(tmp_path):
    with pytest.raises(FormatError) as caught:
        read_run(io.StringIO("301 Q0 D1 1 x mine\n"), name="upload.txt")
    assert caught.value.problems == ["upload.txt:1: score 'x' is not a number"]


def test_wrong_column_count_is_reported_with_its_line(tmp_path):
    problems = problems_of(tmp_path, "301 Q0 D1 1 2.0 mine\n301 Q0 D2 2 1.0\n")
    assert problems == [f"{tmp_path / 'run.txt'}:2: expected 6 columns (qid q0 docno rank score tag), found 5"]


def test_non_numeric_and_non_finite_scores_are_errors(tmp_path):
    text = "301 Q0 D1 1 high mine\n301 Q0 D2 2 nan mine\n301 Q0 D3 3 inf mine\n301 Q0 D4 4 1.0 mine\n"
    problems = problems_of(tmp_path, text)
    assert [p.split(":", 1)[1] for p in problems] == [
        "1: score 'high' is not a number",
        "2: score nan is not a finite number",
        "3: score inf is not a finite number",
    ]


def test_non_finite_score_in_a_clean_file_is_found_on_the_fast_path(tmp_path):
    problems = problems_of(tmp_path, "301 Q0 D1 1 1.0 mine\n301 Q0 D2 2 -inf mine\n")
    assert problems == [f"{tmp_path / 'run.txt'}:2: score -inf is not a finite number"]


def test_rank_that_is_not_an_integer_is_an_error(tmp_path):
    problems = problems_of(tmp_path, "301 Q0 D1 first 2.0 mine\n")
    assert problems[0].endswith(":1: rank 'first' is not an integer")


def test_duplicate_docno_within_a_topic_names_both_lines(tmp_path):
    text = "301 Q0 D1 1 3 mine\n302 Q0 D1 1 3 mine\n\n301 Q0 D2 2 2 mine\n301 Q0 D1 3 1 mine\n"
    problems = problems_of(tmp_path, text)
    assert problems == [f"{tmp_path / 'run.txt'}:5: document 'D1' appears more than once in topic '301' "
                        "(first at line 1)"]


def test_topic_not_in_the_collection_is_reported_once_at_its_first_line(tmp_path):
    text = "301 Q0 D1 1 3 mine\n999 Q0 D1 1 3 mine\n999 Q0 D2 2 2 mine\n"
    problems = problems_of(tmp_path, text, known_qids={"301", "302"})
    assert problems == [f"{tmp_path / 'run.txt'}:2: topic '999' is not a topic of the collection"]


def test_more_lines_than_max_depth_points_at_the_first_line_too_many(tmp_path):
    text = "".join(f"301 Q0 D{i} {i} {10 - i} mine\n" for i in range(1, 5)) + "302 Q0 D1 1 1 mine\n"
    problems = problems_of(tmp_path, text, max_depth=3)
    assert problems == [f"{tmp_path / 'run.txt'}:4: topic '301' has 4 lines, more than the maximum depth 3"]
    assert len(read_run(write(tmp_path, text), max_depth=None).frame) == 5


def test_second_run_tag_is_an_error(tmp_path):
    problems = problems_of(tmp_path, "301 Q0 D1 1 3 mine\n301 Q0 D2 2 2 yours\n")
    assert problems == [f"{tmp_path / 'run.txt'}:2: run tag 'yours' differs from 'mine' (line 1): "
                        "a file holds exactly one run"]


@pytest.mark.parametrize("text", ["", "\n\n  \n"])
def test_empty_file_is_an_error(tmp_path, text):
    assert problems_of(tmp_path, text) == [f"{tmp_path / 'run.txt'}:1: the file is empty: no run lines"]


def test_all_problems_are_reported_in_line_order_not_just_the_first(tmp_path):
    text = ("301 Q0 D1 1 3 mine\n"
            "301 Q0 D1 2 2 mine\n"        # duplicate
            "301 Q0 D3 3 x mine\n"        # bad score
            "777 Q0 D1 1 1 mine\n"        # unknown topic
            "301 Q0 D4 4\n")              # column count
    with pytest.raises(FormatError) as caught:
        read_run(write(tmp_path, text), known_qids={"301"})
    lines = [int(p.split(":")[1]) for p in caught.value.problems]
    assert lines == [2, 3, 4, 5]
    assert str(caught.value).endswith(" (and 3 more problems)")


def test_problems_are_capped_but_counted(tmp_path):
    text = "".join(f"301 Q0 D{i} {i} bad mine\n" for i in range(50))
    with pytest.raises(FormatError) as caught:
        read_run(write(tmp_path, text), max_problems=5)
    assert len(caught.value.problems) == 5 and caught.value.total == 50
    assert str(caught.value).endswith("(and 49 more problems)")


def test_duplicates_in_a_large_clean_file_are_found_with_lines(tmp_path):
    rows = [f"{q} Q0 doc{q}-{d} {d + 1} {1000 - d} big\n" for q in range(20) for d in range(500)]
    rows[7005] = "14 Q0 doc14-0 6 995 big\n"  # the docno of line 7001, again in topic 14
    problems = problems_of(tmp_path, "".join(rows), max_depth=None)
    assert problems == [f"{tmp_path / 'run.txt'}:7006: document 'doc14-0' appears more than once in topic "
                        "'14' (first at line 7001)"]


def test_rank_column_disagreeing_with_scores_is_a_warning(tmp_path):
    text = "301 Q0 D1 1 1.0 mine\n301 Q0 D2 2 5.0 mine\n302 Q0 D3 1 1.0 mine\n"
    run = read_run(write(tmp_path, text))
    assert len(run.warnings) == 1
    assert run.warnings[0].startswith(f"{tmp_path / 'run.txt'}:2: the rank column disagrees with the score "
                                      "order in 1 of 2 topics")


def test_ties_ranked_against_trec_eval_tie_break_are_a_warning(tmp_path):
    text = "301 Q0 A 1 2.0 mine\n301 Q0 B 2 2.0 mine\n"  # trec_eval puts B (docno descending) first
    run = read_run(write(tmp_path, text))
    assert [w.split(": ", 1)[1][:36] for w in run.warnings] == ["tied scores are ranked in another or"]
    assert read_run(write(tmp_path, "301 Q0 B 1 2.0 mine\n301 Q0 A 2 2.0 mine\n")).warnings == ()


def test_scores_equal_only_in_32_bit_floats_are_a_warning(tmp_path):
    text = "301 Q0 B 1 0.8064923382590882 mine\n301 Q0 A 2 0.8064923323325293 mine\n"
    run = read_run(write(tmp_path, text))
    assert len(run.warnings) == 1
    assert "1 pairs of scores in 1 topics differ as 64-bit floats but are equal as 32-bit" in run.warnings[0]
    assert run.warnings[0].startswith(f"{tmp_path / 'run.txt'}:2:")


def test_warnings_can_be_skipped(tmp_path):
    text = "301 Q0 D1 1 1.0 mine\n301 Q0 D2 2 5.0 mine\n"
    assert read_run(write(tmp_path, text), check_warnings=False).warnings == ()


def test_warning_lines_count_blank_lines(tmp_path):
    text = "\n\n301 Q0 D1 1 1.0 mine\n\n301 Q0 D2 2 5.0 mine\n"
    (warning,) = read_run(write(tmp_path, text)).warnings
    assert warning.split(":")[1] == "5"


def test_docno_with_quotes_and_hashes_is_kept_verbatim(tmp_path):
    run = read_run(write(tmp_path, '301 Q0 "doc#1" 1 1 mine\n301 Q0 it\'s 2 0.5 mine\n'))
    assert run.frame["docno"].tolist() == ['"doc#1"', "it's"]


def test_line_missing_a_field_hidden_by_a_double_separator_is_an_error(tmp_path):
    problems = problems_of(tmp_path, "301 Q0 D1 1 2.0 mine\n301\t\tD2\t2\t1.0\tmine\n")
    assert problems[0].endswith(":2: expected 6 columns (qid q0 docno rank score tag), found 5")


def test_trec_eval_rules_ignore_fields_after_the_tag_like_results_trunc(tmp_path):
    text = "301\tQ0\tFBIS3-27619\t99\t  2.138276\tSTANDARD more junk at\n303\tQ0\tFT941-17652\t99\t  1.857372\tSTANDARD\n"
    path = write(tmp_path, text)
    with pytest.raises(FormatError, match=r":1: expected 6 columns \(qid q0 docno rank score tag\), found 9"):
        read_run(path)
    run = read_run(path, trec_eval_rules=True)
    assert run.frame["docno"].tolist() == ["FBIS3-27619", "FT941-17652"]
    assert run.frame["score"].tolist() == [2.138276, 1.857372]


def test_trec_eval_rules_take_the_last_tag_and_still_refuse_short_lines_and_duplicates(tmp_path):
    assert read_run(write(tmp_path, "1 Q0 a 1 2 first\n1 Q0 b 2 1 last\n"), trec_eval_rules=True).tag == "last"
    with pytest.raises(FormatError) as caught:
        read_run(write(tmp_path, "1 Q0 a 1 2 t\n1 Q0 b 2\n1 Q0 a 3 0 t x\n"), trec_eval_rules=True)
    assert [p.split(":", 1)[1] for p in caught.value.problems] == [
        "2: expected at least 6 columns (qid q0 docno rank score tag), found 4",
        "3: document 'a' appears more than once in topic '1' (first at line 1)",
    ]


def test_line_numbers_stay_right_in_crlf_files_with_blank_lines(tmp_path):
    text = "301 Q0 D1 1 1 t\r\n\r\n  \r\n301 Q0 D1 2 0 t\r\n"
    problems = problems_of(tmp_path, text)
    assert problems == [f"{tmp_path / 'run.txt'}:4: document 'D1' appears more than once in topic '301' "
                        "(first at line 1)"]


def test_byte_order_mark_is_not_part_of_the_first_qid(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf301 Q0 D1 1 1 t\n")
    assert read_run(path).frame["qid"].astype(str).tolist() == ["301"]


def test_duplicate_found_when_topics_differ_in_size(tmp_path):
    text = "301 Q0 a 1 3 t\n301 Q0 b 2 2 t\n301 Q0 c 3 1 t\n302 Q0 a 1 2 t\n302 Q0 a 2 1 t\n303 Q0 c 1 1 t\n"
    assert problems_of(tmp_path, text) == [f"{tmp_path / 'run.txt'}:5: document 'a' appears more than once in "
                                           "topic '302' (first at line 4)"]


def test_a_qrels_file_given_as_a_run_and_a_run_given_as_qrels_say_which_line_shape_they_have(tmp_path):
    from workbench.formats.qrels import read_qrels

    with pytest.raises(FormatError) as caught:
        read_run(write(tmp_path, "301 0 FBIS3-1 1\n301 0 FBIS3-2 0\n"))
    assert caught.value.problems[0].endswith(
        ":1: expected 6 columns (qid q0 docno rank score tag), found 4 (a qrels line has 4: qid iter docno rel)")
    (tmp_path / "q.txt").write_text("301 Q0 FBIS3-1 1 2.5 bm25\n")
    with pytest.raises(FormatError) as caught:
        read_qrels(tmp_path / "q.txt")
    assert caught.value.problems[0].endswith(
        ":1: expected 4 columns (qid iter docno rel), found 6 (a run line has 6: qid Q0 docno rank score tag)")

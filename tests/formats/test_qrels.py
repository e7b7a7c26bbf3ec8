"""Reading and writing qrels: the iter column real files carry, graded and negative judgments, bad lines."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd
import pytest

from workbench.formats import FormatError, read_qrels, write_qrels


def write(tmp_path, text: str, name: str = "qrels.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


@pytest.mark.parametrize("iteration", ["0", "Q0", "1.5", "0.5"])
def test_iter_column_is_ignored_whatever_it_holds(tmp_path, iteration):
    frame = read_qrels(write(tmp_path, f"1 {iteration}  08efpohc 2\n1 {iteration}  0cvoeiy0 0\n"))
    assert frame.to_dict("list") == {"qid": ["1", "1"], "docno": ["08efpohc", "0cvoeiy0"], "rel": [2, 0]}


def test_dl_shaped_graded_qrels_with_tabs_keep_file_order(tmp_path):
    text = "19335\tQ0\t1017759\t0\n19335\tQ0\t1082489\t3\n1037798\tQ0\t1017759\t2\n"
    frame = read_qrels(write(tmp_path, text))
    assert frame["qid"].astype(str).tolist() == ["19335", "19335", "1037798"]
    assert frame["rel"].tolist() == [0, 3, 2]
    assert frame["rel"].dtype == np.int64 and isinstance(frame.index, pd.RangeIndex)


def test_negative_grades_are_kept(tmp_path):
    assert read_qrels(write(tmp_path, "301 0 D1 -1\n301 0 D2 1\n"))["rel"].tolist() == [-1, 1]


def test_non_integer_grade_is_an_error_with_its_line(tmp_path):
    with pytest.raises(FormatError) as caught:
        read_qrels(write(tmp_path, "301 0 D1 1\n301 0 D2 0.5\n301 0 D3 yes\n"))
    assert caught.value.problems == [f"{tmp_path / 'qrels.txt'}:2: grade '0.5' is not an integer",
                                     f"{tmp_path / 'qrels.txt'}:3: grade 'yes' is not an integer"]


def test_wrong_column_count_is_an_error(tmp_path):
    with pytest.raises(FormatError) as caught:
        read_qrels(write(tmp_path, "301 0 D1 1\n\n301 D2 1\n"))
    assert caught.value.problems == [f"{tmp_path / 'qrels.txt'}:3: expected 4 columns (qid iter docno rel), "
                                     "found 3"]


def test_document_judged_twice_for_a_topic_is_an_error_like_trec_eval(tmp_path):
    text = "301 0 D1 1\n302 0 D1 0\n301 1 D1 0\n"
    with pytest.raises(FormatError) as caught:
        read_qrels(write(tmp_path, text))
    assert caught.value.problems == [f"{tmp_path / 'qrels.txt'}:3: document 'D1' is judged more than once for "
                                     "topic '301' (first at line 1)"]


def test_empty_qrels_is_an_error(tmp_path):
    with pytest.raises(FormatError, match=r"qrels.txt:1: the file is empty"):
        read_qrels(write(tmp_path, ""))


def test_gzip_and_file_objects(tmp_path):
    text = "301 0 D1 1\n301 0 D2 0\n"
    gz = tmp_path / "q.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    expected = read_qrels(write(tmp_path, text))
    for source in (gz, io.StringIO(text), io.BytesIO(text.encode())):
        pd.testing.assert_frame_equal(read_qrels(source), expected)


def test_write_qrels_sorts_by_qid_then_docno_as_strings(tmp_path):
    frame = pd.DataFrame({"qid": ["9", "10", "10"], "docno": ["b", "c", "a"], "rel": [1, 0, 2]})
    out = io.StringIO()
    write_qrels(frame, out)
    assert out.getvalue() == "10 0 a 2\n10 0 c 0\n9 0 b 1\n"


def test_write_qrels_to_gz_path_reads_back(tmp_path):
    frame = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [1, -1]})
    write_qrels(frame, tmp_path / "out.qrels.gz")
    assert gzip.decompress((tmp_path / "out.qrels.gz").read_bytes()) == b"1 0 a 1\n1 0 b -1\n"
    assert read_qrels(tmp_path / "out.qrels.gz").to_dict("list") == frame.to_dict("list")


def test_write_qrels_refuses_docno_with_whitespace(tmp_path):
    frame = pd.DataFrame({"qid": ["1"], "docno": ["two words"], "rel": [1]})
    with pytest.raises(ValueError, match="docno"):
        write_qrels(frame, tmp_path / "out.txt")
    assert not (tmp_path / "out.txt").exists()

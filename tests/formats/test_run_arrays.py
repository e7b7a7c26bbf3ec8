"""The engine's run reader: the same lines, checks and messages as read_run under trec_eval's rules."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pyarrow as pa
import pytest

from workbench.formats import FormatError, read_qrels, read_qrels_table, read_run, read_run_arrays
from workbench.formats.arrays import from_numpy, from_strings, to_numpy
from workbench.formats.checks import duplicate_rows, string_hashes

CLEAN = ("302 Q0 LA010189-0001 1 9 mine\n302 Q0 FBIS3-10169 2 11.25 mine\n"
         "301 Q0 FBIS3-10082 1 12.5 mine\n")


def write(tmp_path, text: str, name: str = "run.txt"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def problems(source, reader=read_run_arrays) -> list[str]:
    with pytest.raises(FormatError) as caught:
        reader(source)
    return caught.value.problems


def assert_same_as_read_run(source_of):
    """read_run_arrays(source) holds what read_run(..., trec_eval_rules=True) reads, as arrays."""
    arrays = read_run_arrays(source_of())
    run = read_run(source_of(), max_depth=None, check_warnings=False, trec_eval_rules=True)
    frame = run.frame
    assert arrays.tag == run.tag
    assert [arrays.topics[c] for c in arrays.topic] == frame["qid"].astype(str).tolist()
    assert arrays.topics == sorted(set(arrays.topics))
    assert arrays.docno.to_pylist() == frame["docno"].tolist()
    assert arrays.score.tolist() == frame["score"].astype(np.float32).tolist()
    assert np.array_equal(arrays.docno_hash, string_hashes(arrays.docno))


def test_a_clean_file_gives_the_lines_in_file_order_with_topics_sorted_like_strcmp(tmp_path):
    run = read_run_arrays(write(tmp_path, CLEAN))
    assert run.topics == ["301", "302"]
    assert run.topic.tolist() == [1, 1, 0]
    assert run.docno.to_pylist() == ["LA010189-0001", "FBIS3-10169", "FBIS3-10082"]
    assert run.score.dtype == np.float32 and run.score.tolist() == [9.0, 11.25, 12.5]
    assert run.tag == "mine" and run.name == str(tmp_path / "run.txt")


@pytest.mark.parametrize("text", [
    CLEAN,
    CLEAN.replace(" ", "\t"),                                        # tab separated
    "  301   Q0 D1\t 1  2.5 a\r\n\n301 Q0 D2 2 1.5 b extra fields\n",  # the normalising path
    "\ufeff" + CLEAN,                                                # byte order mark
    "".join(f"{q} Q0 D{d} {d} {1 / (d + 1)!r} t\n" for q in ("9", "10", "100") for d in range(3000)),
])
def test_every_shape_of_file_reads_like_read_run_with_trec_eval_rules(tmp_path, text):
    path = write(tmp_path, text)
    assert_same_as_read_run(lambda: path)


def test_gzip_files_and_streams_read_like_paths(tmp_path):
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(CLEAN.encode()))
    for source in (lambda: gz, lambda: io.BytesIO(CLEAN.encode()), lambda: io.StringIO(CLEAN)):
        assert_same_as_read_run(source)


def test_a_many_block_file_keeps_its_last_tag_and_every_line(tmp_path):
    lines = [f"{q} Q0 doc-{q}-{d} {d + 1} {100 - d / 7!r} run{q}\n" for q in range(300) for d in range(700)]
    run = read_run_arrays(write(tmp_path, "".join(lines)))  # about 7 MB: several parsed blocks
    assert len(run.docno) == 210_000 and run.tag == "run299"
    assert run.docno[123_456].as_py() == lines[123_456].split()[2]


@pytest.mark.parametrize(("text", "message"), [
    ("1 Q0 a 1 2 t\n1 Q0 b 2 1 t\n1 Q0 a 3 0 t\n", ":3: document 'a' appears more than once in topic '1' "
                                                    "(first at line 1)"),
    ("1 Q0 a 1 2 t\n1 Q0 b 2 nan t\n", ":2: score nan is not a finite number"),
    ("1 Q0 a 1 2 t\n1 Q0 b x 1 t\n", ":2: rank 'x' is not an integer"),
    ("1 Q0 a 1 2 t\n1  b 2 1 t\n", ":2: expected at least 6 columns (qid q0 docno rank score tag), found 5"),
    ("1 Q0 a 1 2 t\n1 Q0 b 2 1 \n", ":2: expected at least 6 columns (qid q0 docno rank score tag), found 5"),
    ("", ":1: the file is empty: no run lines"),
])
def test_bad_lines_of_a_clean_looking_file_are_reported_like_read_run(tmp_path, text, message):
    path = write(tmp_path, text)
    found = problems(path)
    assert found[0] == f"{path}{message}"
    assert found == problems(path, lambda p: read_run(p, max_depth=None, trec_eval_rules=True))


def test_a_score_beyond_float_range_is_infinite_as_trec_eval_stores_it(tmp_path):
    run = read_run_arrays(write(tmp_path, "1 Q0 a 1 1e300 t\n1 Q0 b 2 -1e300 t\n"))
    assert run.score.tolist() == [np.inf, -np.inf]


def test_qrels_table_holds_the_checked_judgments_without_pandas(tmp_path):
    path = write(tmp_path, "301 0 D1 2\n301\tQ0\tD2\t-1\n", "qrels.txt")
    expected = {"qid": ["301", "301"], "docno": ["D1", "D2"], "rel": [2, -1]}
    assert read_qrels_table(path).to_pydict() == expected
    assert problems(write(tmp_path, "301 0 D1 x\n", "bad.txt"), read_qrels_table) == \
        problems(tmp_path / "bad.txt", read_qrels)


def test_docno_hashes_depend_on_the_bytes_only_not_on_chunks_or_neighbours():
    words = ["", "a", "D1", "doc#1", "exactly8", "nine char", "clueweb09-en0000-00-00000", "é€", "a\x00b"]
    alone = np.concatenate([string_hashes(pa.array([w])) for w in words])
    chunked = string_hashes(pa.chunked_array([words[:4], words[4:]]))
    large = string_hashes(pa.array(words, pa.large_string()))
    assert np.array_equal(alone, chunked) and np.array_equal(alone, large)
    assert len(set(alone.tolist())) == len(words)


def test_arrow_numpy_helpers_round_trip_and_fill_nulls():
    values = np.array([3, 1, 2], dtype=np.int64)
    assert to_numpy(from_numpy(values)).tolist() == [3, 1, 2]
    assert to_numpy(pa.chunked_array([[1.5, None], [2.5]]), -1).tolist() == [1.5, -1.0, 2.5]
    assert to_numpy(pa.array([True, False, True]).slice(1)).tolist() == [False, True]
    assert from_strings(["b", "", "ü"]).to_pylist() == ["b", "", "ü"]
    with pytest.raises(ValueError):
        to_numpy(pa.array([1, None]))


@pytest.mark.parametrize("hashes", [None, np.zeros(8, dtype=np.uint64)])  # real hashes, or all colliding
def test_duplicates_are_confirmed_on_the_strings_whatever_the_hashes(hashes):
    codes = np.array([0, 0, 0, 1, 1, 2, 0, 1], dtype=np.int32)
    docnos = pa.chunked_array([["a", "b", "a", "a", "c", "z"], ["b", "a"]])
    later, first = duplicate_rows(codes, 3, docnos, hashes)
    assert later.tolist() == [2, 6, 7] and first.tolist() == [0, 1, 3]
    interleaved = duplicate_rows(np.array([0, 0, 1, 1, 1, 0]), 2, pa.array(["x", "y", "x", "x", "y", "y"]))
    assert [a.tolist() for a in interleaved] == [[3, 5], [2, 1]]


@pytest.mark.parametrize("chunk_size", [64, 1000, 1 << 20])
@pytest.mark.parametrize("separator", [" ", "\t"])
def test_chunks_parsed_side_by_side_keep_every_line_in_order(tmp_path, monkeypatch, chunk_size, separator):
    """Chunks of whole lines, two at a time: a long line wider than a chunk, no final newline, blank lines."""
    import workbench.formats.chunks as chunks

    monkeypatch.setattr(chunks, "CHUNK_SIZE", chunk_size)
    rng = np.random.default_rng(chunk_size)
    lines = [f"{q}{separator}Q0{separator}d{q}-{d}{'x' * int(rng.integers(0, 90))}{separator}{d + 1}{separator}"
             f"{rng.random()!r}{separator}tag{q}" for q in range(7) for d in range(40)]
    text = "\n".join(lines[:100]) + "\n\n" + "\n".join(lines[100:])  # a blank line, no newline at the end
    path = write(tmp_path, text)
    assert_same_as_read_run(lambda: path)
    assert_same_as_read_run(lambda: io.BytesIO(text.encode()))
    run = read_run_arrays(path)
    assert run.tag == "tag6" and run.docno.to_pylist() == [line.split(separator)[2] for line in lines]


def test_a_tab_in_a_later_chunk_of_a_space_separated_file_takes_the_checked_path(tmp_path, monkeypatch):
    import workbench.formats.chunks as chunks

    monkeypatch.setattr(chunks, "CHUNK_SIZE", 64)
    text = "".join(f"1 Q0 d{i} {i + 1} {100 - i} t\n" for i in range(30)) + "1\tQ0\tlast\t31\t1\tt\n"
    path = write(tmp_path, text)
    assert_same_as_read_run(lambda: path)
    assert read_run_arrays(path).docno[-1].as_py() == "last"

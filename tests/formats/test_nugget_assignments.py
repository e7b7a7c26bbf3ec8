"""nuggetizer's assignments read two ways: a clean file by pyarrow's JSON reader, column by column; any other line
by line. Both must agree on every file: the same answers from a file either takes, the same problems (file and
line) from a file either refuses. Each case below is read by ``read_assignments`` and by the line reader alone."""

from __future__ import annotations

import gzip
import io
import json
import random

import pytest

from workbench.formats import FormatError
from workbench.formats import nuggets as reader
from workbench.formats.nuggets import AssignedAnswer, read_assignments

KNOWN = {"1", "2", "3"}


def _line(qid="1", run="r1", nuggets=None, **extra) -> str:
    nuggets = [{"text": "The sky is blue", "importance": "vital", "assignment": "support"},
               {"text": "Water is wet", "importance": "okay", "assignment": "not_support"}] if nuggets is None else nuggets
    return json.dumps({"qid": qid, "run_id": run, "nuggets": nuggets, **extra})


GOOD = [_line("1", "r1"), _line("2", "r1"), _line("1", "r2", query="q", answer_text="x")]


def _by_lines(path, known=KNOWN) -> list[AssignedAnswer] | list[str]:
    try:
        found = reader._read(path, None, known, 20, ("text", "importance", "assignment"))
    except FormatError as exc:
        return list(exc.problems)
    return [AssignedAnswer(r["qid"], r["run_id"], nuggets, number) for number, r, nuggets in found]


def _both(tmp_path, text: str, known=KNOWN):
    path = tmp_path / "assign.jsonl"
    path.write_text(text)
    try:
        fast = read_assignments(path, known_qids=known)
    except FormatError as exc:
        fast = list(exc.problems)
    return fast, _by_lines(path, known)


@pytest.mark.parametrize("text", [
    "\n".join(GOOD) + "\n",
    "\n".join(GOOD),  # no newline at the end
    "\n".join(GOOD[:2]) + "\n\n" + GOOD[2] + "\n",  # a blank line: the line numbers after it
    _line(1) + "\n",  # a topic id as a number
    _line("1", "run one") + "\n",  # a run id with a space
    GOOD[0] + "\n" + '{"qid": "2", "run_id": "r1", "nuggets": [], "qid": "3"}' + "\n",  # a key twice: the last
    _line(nuggets=[]) + "\n",  # an answer no nugget is assigned to
    "\n".join(GOOD) + "\n   \n",  # a last line of blanks
    _line(nuggets=[{"text": "a", "importance": "vital", "assignment": "partial_support", "reason": "x"}]) + "\n",
])
def test_a_file_both_readers_take_gives_the_same_answers(tmp_path, text):
    fast, lines = _both(tmp_path, text)
    assert fast == lines
    assert fast and isinstance(fast[0], AssignedAnswer)


@pytest.mark.parametrize("text", [
    "",
    "\ufeff" + "\n".join(GOOD) + "\n",  # a byte order mark
    "not json\n",
    "[1, 2]\n",
    _line() + "\n" + _line() + "\n",  # the same answer twice
    _line("9") + "\n",  # a topic the collection has not
    _line(7.5) + "\n",
    _line(True) + "\n",
    _line("1", "") + "\n",
    _line("1", "r" * 201) + "\n",
    _line("1", "r\tun") + "\n",
    _line("1\u0000") + "\n",
    _line("x" * 70) + "\n",
    json.dumps({"qid": "1", "run_id": "r"}) + "\n",  # no nuggets
    json.dumps({"run_id": "r", "nuggets": []}) + "\n",  # no qid
    _line(nuggets={"text": "a"}) + "\n",
    _line(nuggets=[None]) + "\n",
    _line(nuggets=["a nugget"]) + "\n",
    _line(nuggets=[{"text": 5, "importance": "vital", "assignment": "support"}]) + "\n",
    _line(nuggets=[{"text": "", "importance": "vital", "assignment": "support"}]) + "\n",
    _line(nuggets=[{"text": "   ", "importance": "vital", "assignment": "support"}]) + "\n",
    _line(nuggets=[{"text": "a\u0000b", "importance": "vital", "assignment": "support"}]) + "\n",
    _line(nuggets=[{"text": "a", "importance": "essential", "assignment": "support"}]) + "\n",
    _line(nuggets=[{"text": "a", "importance": "vital", "assignment": "yes"}]) + "\n",
    _line(nuggets=[{"text": "a", "importance": "vital"}]) + "\n",
])
def test_a_file_either_reader_refuses_gives_the_same_problems(tmp_path, text):
    fast, lines = _both(tmp_path, text)
    assert fast == lines
    assert fast and isinstance(fast[0], str), fast


def test_a_track_sized_file_reads_the_same_both_ways(tmp_path):
    rng = random.Random(3)
    bank = [(f"nugget {k} of the topic", rng.choice(["vital", "okay"])) for k in range(20)]
    lines = [json.dumps({"qid": str(q), "run_id": f"run{r:03d}", "answer_text": "…", "nuggets": [
        {"text": t, "importance": i, "assignment": rng.choice(["support", "partial_support", "not_support"])}
        for t, i in rng.sample(bank, rng.randint(0, 20))]}, ensure_ascii=False)
        for r in range(60) for q in range(1, 31)]
    path = tmp_path / "assign.jsonl"
    path.write_text("\n".join(lines) + "\n")
    known = {str(q) for q in range(1, 31)}
    fast = read_assignments(path, known_qids=known)
    assert fast == _by_lines(path, known)
    assert len(fast) == 1800 and fast[-1].line == 1800
    # the same file as an uploaded stream and gzip-compressed
    assert read_assignments(io.BytesIO(path.read_bytes()), name="up.jsonl", known_qids=known) == fast
    (tmp_path / "assign.jsonl.gz").write_bytes(gzip.compress(path.read_bytes()))
    assert read_assignments(tmp_path / "assign.jsonl.gz", known_qids=known) == fast


def test_a_refused_stream_names_its_file_and_line(tmp_path):
    stream = io.BytesIO((GOOD[0] + "\n" + _line("2", nuggets=[{"text": "a", "importance": "vital",
                                                               "assignment": "maybe"}]) + "\n").encode())
    with pytest.raises(FormatError) as refused:
        read_assignments(stream, name="upload.jsonl", known_qids=KNOWN)
    assert refused.value.problems == ["upload.jsonl:2: nuggets[0].assignment must be one of support, partial_support, "
                                      "not_support, not 'maybe'"]

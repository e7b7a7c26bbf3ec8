"""An ir_metadata header at the top of a run file is read and kept; line numbers still count it; '#' as
a topic id stays a run line (trec_eval accepts it)."""

import io

import pytest

from workbench.formats import FormatError, read_run

HEADER = ("# ir_metadata.start\n# schema-version: 0.1\n# tag: mine\n# method:\n#   automatic: true\n"
          "#   retrieval:\n#   - name: bm25\n#     k1: 0.9\n# ir_metadata.end\n")


def test_the_header_is_read_and_the_run_lines_after_it_keep_their_numbers():
    run = read_run(io.BytesIO((HEADER + "301 Q0 D1 1 2.5 mine\n301 Q0 D2 2 1.5 mine\n").encode()), name="m.run")
    assert run.metadata == {"ir_metadata": {"schema-version": 0.1, "tag": "mine", "method": {
        "automatic": True, "retrieval": [{"name": "bm25", "k1": 0.9}]}}}
    assert run.frame["docno"].tolist() == ["D1", "D2"]
    with pytest.raises(FormatError) as refused:
        read_run(io.BytesIO((HEADER + "301 Q0 D1 1 2.5 mine\n301 Q0 D2 two 1.5 mine\n").encode()), name="m.run")
    assert refused.value.problems == ["m.run:11: rank 'two' is not an integer"]


def test_a_broken_header_is_named_by_its_line():
    broken = HEADER.replace("#   automatic: true", "#   automatic: [true")
    with pytest.raises(FormatError) as refused:
        read_run(io.BytesIO((broken + "301 Q0 D1 1 2.5 mine\n").encode()), name="m.run")
    assert refused.value.problems[0].startswith("m.run:") and "not valid YAML" in refused.value.problems[0]


def test_a_hash_topic_id_is_a_run_line_not_a_header():
    run = read_run(io.BytesIO(b"# Q0 D1 1 2.5 t\n"), name="h.run")
    assert run.frame["qid"].tolist() == ["#"] and run.metadata is None

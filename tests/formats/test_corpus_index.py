"""The offset index of a corpus used by reference: every document the import reader reads is found again by
its docno, in every documents format, plain or gzip; bad files are refused in one line naming the line."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from workbench.formats import FormatError, iter_documents
from workbench.formats.corpus_index import CorpusIndex, build_index

TREC = """<DOC>
<DOCNO> FT-1 </DOCNO>
<HEADLINE>Rays &amp; waves</HEADLINE>
<TEXT>
Gamma rays are
short.
</TEXT>
</DOC>
junk between documents
<DOC><DOCNO>FT-2</DOCNO><TEXT>two on</TEXT></DOC><DOC><DOCNO>FT-3</DOCNO><TEXT>one line</TEXT></DOC>
<DOC>
<DOCNO>FT-4</DOCNO>
Ünïcödé text, « quoted »
</DOC>
"""

JSONL = "".join(json.dumps({"id": f"p{i}", "title": f"T{i}", "text": f"passage number {i} é"}) + "\n"
                for i in range(50)) + "\n" + json.dumps({"_id": "last", "contents": "no newline at the end"})

TSV2 = "docno\ttext\n" + "".join(f"m{i}\tmarco passage {i}\n" for i in range(20))
TSV3 = "".join(f"m{i}\tTitle {i}\tbody {i}\n" for i in range(20))


def _index(tmp_path, name: str, content: str, *, compress: bool = False):
    path = tmp_path / name
    if compress:
        path.write_bytes(gzip.compress(content.encode()))
    else:
        path.write_text(content, encoding="utf-8")
    build_index(path, tmp_path / f"{name}.idx")
    return path, CorpusIndex(path, tmp_path / f"{name}.idx")


@pytest.mark.parametrize(("name", "content"), [("d.trec", TREC), ("d.jsonl", JSONL), ("d.tsv", TSV2), ("d3.tsv", TSV3)])
@pytest.mark.parametrize("compress", [False, True])
def test_every_document_is_found_by_its_docno_as_the_import_reads_it(tmp_path, name, content, compress):
    name = name + (".gz" if compress else "")
    path, index = _index(tmp_path, name, content, compress=compress)
    expected = {d.docno: d for d in iter_documents(path)}
    assert len(index) == len(expected)
    assert index.get_many(list(expected)) == expected


def test_a_docno_the_corpus_does_not_hold_is_left_out(tmp_path):
    _path, index = _index(tmp_path, "d.jsonl", JSONL)
    found = index.get_many(["p3", "nope", "p49"])
    assert sorted(found) == ["p3", "p49"]
    assert found["p3"].text == "passage number 3 é" and found["p3"].title == "T3"


def test_the_index_is_small_beside_the_corpus(tmp_path):
    content = "".join(json.dumps({"id": f"doc-{i}", "text": "word " * 80}) + "\n" for i in range(2000))
    path, _ = _index(tmp_path, "big.jsonl", content)
    assert os.path.getsize(tmp_path / "big.jsonl.idx") < 0.1 * os.path.getsize(path)


def test_a_docno_seen_twice_is_refused_naming_both_lines(tmp_path):
    content = '{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n{"id": "a", "text": "z"}\n'
    (tmp_path / "dup.jsonl").write_text(content)
    with pytest.raises(FormatError) as refused:
        build_index(tmp_path / "dup.jsonl", tmp_path / "dup.idx", name="dup.jsonl")
    assert refused.value.problems == ["dup.jsonl:3: document 'a' appears more than once (first at line 1)"]
    assert not (tmp_path / "dup.idx").exists()


def test_a_bad_line_is_refused_with_its_line_as_an_import_would(tmp_path):
    (tmp_path / "bad.jsonl").write_text('{"id": "a", "text": "x"}\n{"id": "b", "text": \n')
    with pytest.raises(FormatError) as refused:
        build_index(tmp_path / "bad.jsonl", tmp_path / "bad.idx", name="bad.jsonl")
    assert refused.value.problems[0].startswith("bad.jsonl:2: not valid JSON")


def test_a_file_without_documents_or_missing_is_one_line(tmp_path):
    (tmp_path / "empty.jsonl").write_text("\n\n")
    with pytest.raises(FormatError) as refused:
        build_index(tmp_path / "empty.jsonl", tmp_path / "e.idx", name="empty.jsonl")
    assert refused.value.problems == ["empty.jsonl:1: no documents found (read as trec)"]
    with pytest.raises(FormatError) as missing:
        build_index(tmp_path / "missing.jsonl", tmp_path / "m.idx")
    assert missing.value.problems == [f"{tmp_path / 'missing.jsonl'}: cannot read: no such file"]


def test_a_file_changed_since_it_was_indexed_is_refused_not_misread(tmp_path):
    path, _index_ = _index(tmp_path, "d.jsonl", JSONL)
    with open(path, "a") as handle:
        handle.write('{"id": "new", "text": "added later"}\n')
    with pytest.raises(FormatError) as refused:
        CorpusIndex(path, tmp_path / "d.jsonl.idx", name="d.jsonl")
    assert refused.value.problems == ["d.jsonl: the file changed since it was indexed; index the corpus again"]


def _parquet(tmp_path, rows: list[dict], name: str = "d.parquet"):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows), tmp_path / name, row_group_size=7)
    return tmp_path / name


def test_a_parquet_corpus_gives_the_documents_its_rows_would_give_as_jsonl_lines(tmp_path):
    rows = [{"docno": f"pq-{i}", "title": f"T {i}", "text": f"parquet  text {i} ü", "year": 2000 + i}
            for i in range(30)]
    path = _parquet(tmp_path, rows)
    (tmp_path / "same.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    expected = {d.docno: d for d in iter_documents(tmp_path / "same.jsonl")}
    assert build_index(path, tmp_path / "p.idx").format == "parquet"
    index = CorpusIndex(path, tmp_path / "p.idx")
    assert index.get_many(["pq-3", "pq-29", "pq-8", "none"]) == {k: expected[k] for k in ("pq-3", "pq-29", "pq-8")}
    assert index.get_many(list(expected)) == expected


def test_a_parquet_corpus_with_a_docno_twice_or_no_docno_column_is_refused_in_one_line(tmp_path):
    rows = [{"id": f"x{i}", "text": "t"} for i in range(10)] + [{"id": "x2", "text": "again"}]
    with pytest.raises(FormatError) as refused:
        build_index(_parquet(tmp_path, rows), tmp_path / "p.idx", name="d.parquet")
    assert refused.value.problems == ["d.parquet:11: document 'x2' appears more than once (first at row 3)"]
    with pytest.raises(FormatError) as refused:
        build_index(_parquet(tmp_path, [{"key": "a", "text": "t"}], "k.parquet"), tmp_path / "k.idx", name="k.parquet")
    assert refused.value.problems == ["k.parquet: no docno column (one of docno, id, _id)"]


def test_a_stream_that_gives_its_bytes_one_at_a_time_is_read_whole_with_the_right_offsets():
    """Compressed or remote streams may stop inside a character: no document is lost and offsets stay right."""
    import io

    from workbench.formats.corpus_index import _LineStarts
    from workbench.formats.documents import iter_numbered_documents

    class Trickle(io.RawIOBase):
        def __init__(self, data: bytes) -> None:
            self.data, self.at = data, 0

        def readable(self) -> bool:
            return True

        def read(self, size=-1) -> bytes:
            self.at += 1
            return self.data[self.at - 1: self.at]

    data = '{"id": "é1", "text": "ü"}\n\n{"id": "b2", "text": "ß"}\n'.encode()
    stream = _LineStarts(Trickle(data))
    found = [(record.docno, stream.offset_of(line)) for line, record in
             iter_numbered_documents(stream, name="t", format="jsonl", check_duplicates=False)]
    assert found == [("é1", 0), ("b2", data.index(b'{"id": "b2"'))]

"""Documents as TSV: ``docno<TAB>text`` (MS MARCO's collection.tsv) or ``docno<TAB>title<TAB>text``."""

from __future__ import annotations

import gzip
import io

import pytest

from workbench.formats import FormatError, iter_documents
from workbench.formats.catalog import DOCUMENT_FORMATS
from workbench.formats.documents import detect_format


def _read(text: str, **kwargs):
    return [(d.docno, d.title, d.text) for d in iter_documents(io.StringIO(text), name="docs.tsv", **kwargs)]


def test_two_columns_are_docno_and_text():
    assert _read("7\tThe sail is pushed by light.\n8\tMasts\n") == [
        ("7", "", "The sail is pushed by light."), ("8", "", "Masts")]


def test_three_columns_are_docno_title_and_text_and_a_header_line_is_skipped():
    text = "docno\ttitle\ttext\r\nd1\tSolar  sails\tLight pushes.\r\nd2\t\tNo title here\r\n"
    assert _read(text) == [("d1", "Solar sails", "Light pushes."), ("d2", "", "No title here")]


def test_a_line_with_another_number_of_columns_is_refused_naming_file_and_line():
    with pytest.raises(FormatError) as error:
        _read("d1\ttext\nd2\ttitle\ttext\n")
    assert str(error.value) == ("docs.tsv:2: expected 2 tab-separated columns (docno<TAB>text or "
                                "docno<TAB>title<TAB>text), found 3")


def test_four_columns_are_refused_and_an_empty_docno_too():
    with pytest.raises(FormatError, match=r"docs.tsv:1: expected 2 or 3 tab-separated columns .* found 4"):
        _read("d1\turl\ttitle\ttext\n")
    with pytest.raises(FormatError, match=r"docs.tsv:2: document has no docno"):
        _read("d1\ttext\n \tother\n")


def test_a_docno_seen_twice_is_refused_as_in_the_other_formats():
    with pytest.raises(FormatError, match=r"docs.tsv:3: document 'd1' appears more than once \(first at line 1\)"):
        _read("d1\ta\nd2\tb\nd1\tc\n")


def test_detection_tells_tsv_from_trec_sgml_and_jsonl():
    assert detect_format("d1\ttext\n") == "tsv"
    assert detect_format("<DOC>\n<DOCNO>d1</DOCNO>\tcolumns\tin\ttext\n</DOC>\n") == "trec"
    assert detect_format('{"docno": "d1", "text": "a\\tb"}\n') == "jsonl"
    assert detect_format("no tab on the first line\n<DOC>") == "trec"
    assert set(DOCUMENT_FORMATS.names) == {"trec", "jsonl", "tsv"}


def test_a_gzipped_tsv_with_a_byte_order_mark_reads(tmp_path):
    path = tmp_path / "collection.tsv.gz"
    path.write_bytes(gzip.compress("\ufeffd1\tFirst passage\nd2\tSecond passage\n".encode()))
    assert [(d.docno, d.text) for d in iter_documents(path)] == [("d1", "First passage"), ("d2", "Second passage")]


def test_a_large_tsv_is_read_across_blocks(tmp_path):
    path = tmp_path / "big.tsv"
    path.write_text("".join(f"p{i}\t{'word ' * 60}{i}\n" for i in range(8000)))  # ~2.5 MB: several 1 MB blocks
    documents = list(iter_documents(path))
    assert len(documents) == 8000 and documents[-1].docno == "p7999" and documents[-1].text.endswith(" 7999")

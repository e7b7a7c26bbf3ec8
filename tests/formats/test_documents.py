"""Reading documents: TREC SGML in its real shapes, JSONL, streaming, and broken files."""

from __future__ import annotations

import gzip
import io

import pytest

from workbench.formats import DocumentRecord, FormatError, iter_documents
from workbench.formats import documents as documents_module

VASWANI_SHAPE = """<DOC>
<DOCNO>1</DOCNO>
compact memories have flexible capacities  a digital data storage
system with capacity up to bits and random and or sequential access
is described
</DOC>
<DOC>
<DOCNO>2</DOCNO>
an electronic analogue computer for solving systems of linear equations
</DOC>
"""

NEWSWIRE_SHAPE = """<DOC>
<DOCNO> LA010189-0001 </DOCNO>
<DOCID> 1 </DOCID>
<DATE><P>January 1, 1989, Sunday, Home Edition </P></DATE>
<HEADLINE>
<P>HOW TO HEAD OFF A HEADACHE &amp; MORE</P>
</HEADLINE>
<TEXT>
<P>The first paragraph.</P>
<P>The  second
paragraph.</P>
</TEXT>
</DOC>
"""


def test_vaswani_documents_without_inner_tags():
    docs = list(iter_documents(io.StringIO(VASWANI_SHAPE)))
    assert [d.docno for d in docs] == ["1", "2"]
    assert docs[0] == DocumentRecord(docno="1", title="", text=(
        "compact memories have flexible capacities a digital data storage\n"
        "system with capacity up to bits and random and or sequential access\nis described"))


def test_newswire_headline_becomes_title_and_other_tags_join_the_text():
    (doc,) = iter_documents(io.StringIO(NEWSWIRE_SHAPE))
    assert doc.docno == "LA010189-0001"
    assert doc.title == "HOW TO HEAD OFF A HEADACHE & MORE"
    assert doc.text == "1\nJanuary 1, 1989, Sunday, Home Edition\nThe first paragraph.\nThe second\nparagraph."


@pytest.mark.parametrize("tag", ["TITLE", "HEAD", "HL"])
def test_other_title_tags(tag):
    text = f"<DOC><DOCNO>d1</DOCNO><{tag}>The Title</{tag}><TEXT>Body</TEXT></DOC>"
    (doc,) = iter_documents(io.StringIO(text))
    assert (doc.docno, doc.title, doc.text) == ("d1", "The Title", "Body")


def test_documents_stream_across_read_blocks(monkeypatch):
    monkeypatch.setattr(documents_module, "_BLOCK", 64)
    text = "header junk\n" + "".join(f"<DOC>\n<DOCNO>d{i}</DOCNO>\n<TEXT>\nword {i}\n</TEXT>\n</DOC>\n"
                                     for i in range(200))
    docs = iter_documents(io.StringIO(text))
    first = next(docs)
    assert (first.docno, first.text) == ("d0", "word 0")
    assert [d.docno for d in docs] == [f"d{i}" for i in range(1, 200)]


def test_document_without_docno_names_the_line_where_it_starts(monkeypatch):
    monkeypatch.setattr(documents_module, "_BLOCK", 16)
    text = VASWANI_SHAPE + "\n<DOC>\n<TEXT>no number</TEXT>\n</DOC>\n"
    with pytest.raises(FormatError) as caught:
        list(iter_documents(io.StringIO(text), name="docs.trec"))
    assert caught.value.problems == ["docs.trec:12: document has no <DOCNO>"]


def test_unterminated_doc_is_an_error():
    with pytest.raises(FormatError, match=r"^docs.trec:11: <DOC> without </DOC>"):
        list(iter_documents(io.StringIO(VASWANI_SHAPE + "<DOC>\n<DOCNO>3</DOCNO>\n"), name="docs.trec"))


def test_missing_close_before_the_next_doc_is_an_error():
    text = "<DOC>\n<DOCNO>1</DOCNO>\ntext\n<DOC>\n<DOCNO>2</DOCNO>\n</DOC>\n"
    with pytest.raises(FormatError, match=r"^d.trec:1: <DOC> without </DOC> before the next <DOC> \(line 4\)"):
        list(iter_documents(io.StringIO(text), name="d.trec"))


def test_repeated_docno_is_an_error():
    with pytest.raises(FormatError, match=r"^d.trec:11: document '1' appears more than once \(first at line 1\)"):
        list(iter_documents(io.StringIO(VASWANI_SHAPE + "<DOC>\n<DOCNO>1</DOCNO>\n</DOC>\n"), name="d.trec"))


def test_file_without_documents_is_an_error():
    with pytest.raises(FormatError, match="no documents found"):
        list(iter_documents(io.StringIO("nothing here\n"), name="d.trec"))


def test_jsonl_documents_with_each_id_and_text_key():
    text = ('{"docno": "a", "title": "T", "text": "x", "url": "u"}\n\n{"id": 2, "contents": "y"}\n'
            '{"_id": "c", "title": "", "body": "z"}')
    docs = list(iter_documents(io.StringIO(text)))
    assert [(d.docno, d.title, d.text) for d in docs] == [("a", "T", "x"), ("2", "", "y"), ("c", "", "z")]
    assert docs[0].extra == {"url": "u"}


def test_jsonl_document_errors_name_the_line():
    with pytest.raises(FormatError, match=r"^d.jsonl:2: document has no id"):
        list(iter_documents(io.StringIO('{"id": "a", "text": "x"}\n{"text": "y"}\n'), name="d.jsonl"))
    with pytest.raises(FormatError, match=r"^d.jsonl:1: not valid JSON"):
        list(iter_documents(io.StringIO('{"id": "a", "text": \n'), name="d.jsonl"))


def test_gzip_path_and_binary_gzip_stream(tmp_path):
    path = tmp_path / "docs.trec.gz"
    path.write_bytes(gzip.compress(VASWANI_SHAPE.encode()))
    assert [d.docno for d in iter_documents(path)] == ["1", "2"]
    stream = io.BytesIO(gzip.compress(VASWANI_SHAPE.encode()))
    assert [d.docno for d in iter_documents(stream)] == ["1", "2"]
    assert not stream.closed


def test_latin1_bytes_do_not_stop_the_import(tmp_path):
    path = tmp_path / "docs.trec"
    path.write_bytes(b"<DOC><DOCNO>1</DOCNO>caf\xe9</DOC>")
    (doc,) = iter_documents(path)
    assert doc.text == "caf\ufffd"

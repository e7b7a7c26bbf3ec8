"""The file-format registries: which format the content selects, and how an unknown format is refused."""

import io

import pytest

from workbench.formats import FormatError, iter_documents, read_topics
from workbench.formats.topics import detect_format


@pytest.mark.parametrize(("start", "expected"), [
    ('<topics>\n<topic number="1">', "xml"),
    ("<?xml version='1.0'?>", "xml"),
    ("  <TOPIC number='1'>", "xml"),
    ("<top>\n<num> Number: 301", "trec"),
    ("<topicx>", "trec"),
    ('{"qid": "1"}', "jsonl"),
    ("1\tcovid origin", "tsv"),
    ("", "tsv"),
])
def test_topic_format_is_detected_from_the_start_of_the_file(start, expected):
    assert detect_format(start) == expected


def test_an_unknown_topic_format_is_refused_listing_the_formats_in_their_documented_order():
    with pytest.raises(FormatError) as error:
        read_topics(io.StringIO("1\tx\n"), name="t.tsv", format="csv")
    assert str(error.value) == "t.tsv:1: unknown topics format 'csv' (one of trec, xml, tsv, jsonl)"


def test_an_unknown_document_format_is_refused_listing_the_formats():
    with pytest.raises(FormatError) as error:
        list(iter_documents(io.StringIO("<DOC>\n"), name="d.txt", format="warc"))
    assert str(error.value) == "d.txt:1: unknown documents format 'warc' (one of trec, jsonl, tsv)"

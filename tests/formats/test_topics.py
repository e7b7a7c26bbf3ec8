"""Reading topics in the four formats found in real test collections."""

from __future__ import annotations

import gzip
import io

import pytest

from workbench.formats import FormatError, TopicRecord, read_topics

ROBUST04_SHAPE = """<top>

<num> Number: 301·
<title> International Organized Crime·

<desc> Description:·
Identify organizations that participate in international criminal
activity, the activity, and, if possible, collaborating organizations
and the countries involved.

<narr> Narrative:·
A relevant document must as a minimum identify the organization and the
type of illegal activity (e.g., Columbian cartel exporting cocaine).

</top>


<top>

<num> Number: 302
<title> Poliomyelitis and Post-Polio·

<desc> Description:·
Is the disease of Poliomyelitis (polio) under control in the
world?
·
<narr> Narrative:·
Relevant documents should contain data or outbreaks of the·
polio disease.
·
</top>
""".replace("·", " ")  # the real file has trailing blanks

VASWANI_SHAPE = """<top>
<num>1</num><title>
MEASUREMENT OF DIELECTRIC CONSTANT OF LIQUIDS BY THE USE OF MICROWAVE TECHNIQUES
</title>
</top>
<top>
<num>2</num><title>
MATHEMATICAL ANALYSIS AND DESIGN DETAILS OF WAVEGUIDE FED MICROWAVE RADIATIONS
</title>
</top>
"""

COVID_SHAPE = """<topics task="COVIDSearch 2020" batch="2">
  <topic number="1">
    <query>coronavirus origin</query>
    <question>what is the origin of COVID-19</question>
    <narrative>seeking range of information about the SARS-CoV-2 virus's origin</narrative>
  </topic>
  <topic number="2">
    <query>coronavirus response to weather changes</query>
    <question>how does the coronavirus respond to changes in the weather</question>
    <narrative>seeking range of information about the SARS-CoV-2 virus viability</narrative>
    <subtopic>humidity</subtopic>
  </topic>
</topics>
"""


def test_classic_trec_topics_with_unclosed_tags_and_labels():
    topics = read_topics(io.StringIO(ROBUST04_SHAPE))
    assert [t.qid for t in topics] == ["301", "302"]
    first = topics[0]
    assert first.title == "International Organized Crime"
    assert first.description.startswith("Identify organizations that participate in international criminal "
                                         "activity,")
    assert first.narrative.endswith("(e.g., Columbian cartel exporting cocaine).")
    assert topics[1].description == "Is the disease of Poliomyelitis (polio) under control in the world?"


def test_vaswani_topics_with_closed_tags():
    topics = read_topics(io.StringIO(VASWANI_SHAPE))
    assert topics[1] == TopicRecord(qid="2", title="MATHEMATICAL ANALYSIS AND DESIGN DETAILS OF WAVEGUIDE FED "
                                    "MICROWAVE RADIATIONS")


def test_old_trec_topics_keep_unknown_fields_in_extra():
    text = ("<top>\n<head> Tipster Topic Description\n<num> Number: 051\n<dom> Domain: International\n"
            "<title> Topic: Airbus Subsidies\n<desc> Description:\nDocument will discuss subsidies.\n</top>\n")
    (topic,) = read_topics(io.StringIO(text))
    assert (topic.qid, topic.title, topic.description) == ("051", "Airbus Subsidies",
                                                           "Document will discuss subsidies.")
    assert topic.extra == {"head": "Tipster Topic Description", "dom": "Domain: International"}


def test_trec_covid_xml_maps_query_and_question():
    topics = read_topics(io.StringIO(COVID_SHAPE))
    assert [t.qid for t in topics] == ["1", "2"]
    assert topics[0].title == "coronavirus origin"
    assert topics[0].description == "what is the origin of COVID-19"
    assert topics[0].narrative.startswith("seeking range of information")
    assert topics[1].extra == {"subtopic": "humidity"}


def test_xml_repeated_unknown_tags_become_a_list_and_attributes_go_to_extra():
    text = ('<topics><topic number="7" type="faceted"><query>cheap hotels</query>'
            "<subtopic>in paris</subtopic><subtopic>in rome</subtopic></topic></topics>")
    (topic,) = read_topics(io.StringIO(text))
    assert topic.extra == {"subtopic": ["in paris", "in rome"], "type": "faceted"}


def test_malformed_xml_names_the_line():
    with pytest.raises(FormatError, match=r"^topics.xml:3: not well-formed XML"):
        read_topics(io.StringIO('<topics>\n<topic number="1">\n<query>a</quer>\n</topic></topics>'),
                    name="topics.xml")


def test_dl_tsv_topics():
    topics = read_topics(io.StringIO("156493\tdo goldfish grow\n1110199\twhat is wifi vs bluetooth\n"))
    assert [(t.qid, t.title) for t in topics] == [("156493", "do goldfish grow"),
                                                  ("1110199", "what is wifi vs bluetooth")]


def test_tsv_line_without_a_tab_is_an_error_with_its_line():
    with pytest.raises(FormatError) as caught:
        read_topics(io.StringIO("1\tfirst\n\n2 second\n"), name="q.tsv")
    assert caught.value.problems == ["q.tsv:3: expected 2 tab-separated columns (qid, text), found 1"]


def test_jsonl_topics_with_each_id_and_title_key():
    text = ('{"qid": "1", "title": "a", "description": "d", "narrative": "n", "lang": "en"}\n'
            '{"query_id": 2, "query": "b"}\n{"_id": "3", "text": "c", "metadata": {}}\n{"id": "4", "title": "e"}\n')
    topics = read_topics(io.StringIO(text))
    assert [(t.qid, t.title) for t in topics] == [("1", "a"), ("2", "b"), ("3", "c"), ("4", "e")]
    assert (topics[0].description, topics[0].narrative, dict(topics[0].extra)) == ("d", "n", {"lang": "en"})
    assert topics[2].extra == {"metadata": {}}


def test_jsonl_errors_name_their_lines():
    with pytest.raises(FormatError) as caught:
        read_topics(io.StringIO('{"qid": "1", "title": "a"}\n{"title": "no id"}\n{broken\n'), name="t.jsonl")
    assert [p.split(": ", 1)[0] for p in caught.value.problems] == ["t.jsonl:2", "t.jsonl:3"]
    assert "no topic id" in caught.value.problems[0]


def test_repeated_topic_id_is_an_error():
    with pytest.raises(FormatError) as caught:
        read_topics(io.StringIO("1\ta\n2\tb\n1\tc\n"), name="t.tsv")
    assert caught.value.problems == ["t.tsv:3: topic '1' appears more than once (first at line 1)"]


def test_topic_without_number_is_an_error():
    with pytest.raises(FormatError, match=r"^t.txt:1: topic has no <num>"):
        read_topics(io.StringIO("<top>\n<title> no number\n</top>\n"), name="t.txt")


def test_empty_topics_file_is_an_error():
    with pytest.raises(FormatError, match="no topics found"):
        read_topics(io.StringIO(""), name="t.txt")


def test_gzip_topics_and_explicit_format(tmp_path):
    path = tmp_path / "topics.txt.gz"
    path.write_bytes(gzip.compress(ROBUST04_SHAPE.encode()))
    assert [t.qid for t in read_topics(path, format="trec")] == ["301", "302"]
    with pytest.raises(FormatError, match="unknown topics format"):
        read_topics(path, format="csv")


def test_topic_records_are_immutable():
    (topic,) = read_topics(io.StringIO("1\tfirst\n"))
    with pytest.raises(AttributeError):
        topic.title = "changed"  # type: ignore[misc]
    with pytest.raises(TypeError):
        topic.extra["x"] = 1  # type: ignore[index]

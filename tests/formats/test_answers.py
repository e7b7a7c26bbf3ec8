"""Reading answer runs (TREC RAG JSON lines): real-looking files, and every problem with its file and line."""

from __future__ import annotations

import gzip
import io
import json
import pickle

import pytest

from workbench.formats import FormatError, limits
from workbench.formats.answers import Answer, Sentence, read_answers


def answer(topic: str, run: str = "ragtest-gpt4o", *, team: str = "waterloo", responses=None,
           references=None, **meta) -> dict:
    refs = ["msmarco_v2.1_doc_04_420132660#5_798245783", "msmarco_v2.1_doc_29_677149#2_1420813"] \
        if references is None else references
    sentences = [{"text": "Dogs were domesticated from wolves.", "citations": [0]},
                 {"text": "This happened at least 15,000 years ago.", "citations": [1, 0]},
                 {"text": "Their exact origin is debated.", "citations": []}] if responses is None else responses
    return {"metadata": {"team_id": team, "run_id": run, "topic_id": topic, "type": "automatic", **meta},
            "responses": sentences, "references": refs}


def lines(*records) -> str:
    return "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records)


def write(tmp_path, text: str, name: str = "answers.jsonl"):
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def problems_of(tmp_path, text: str, **options) -> list[str]:
    with pytest.raises(FormatError) as caught:
        read_answers(write(tmp_path, text), **options)
    return caught.value.problems


def test_index_and_segment_id_citations_resolve_to_segment_ids(tmp_path):
    ragtime = answer("2024-145979", responses=[{"text": "A.", "citations": ["doc-7", "doc-9"]}],
                     references=["doc-7", "doc-9"], narrative="A narrative")
    run = read_answers(write(tmp_path, lines(answer("2024-32912"), "", ragtime)))
    assert (run.run_id, run.team_id, run.name) == ("ragtest-gpt4o", "waterloo", str(tmp_path / "answers.jsonl"))
    first, second = run.answers
    assert first.sentences == (
        Sentence("Dogs were domesticated from wolves.", ("msmarco_v2.1_doc_04_420132660#5_798245783",)),
        Sentence("This happened at least 15,000 years ago.",
                 ("msmarco_v2.1_doc_29_677149#2_1420813", "msmarco_v2.1_doc_04_420132660#5_798245783")),
        Sentence("Their exact origin is debated.", ()))
    assert first.cited == ("msmarco_v2.1_doc_04_420132660#5_798245783", "msmarco_v2.1_doc_29_677149#2_1420813")
    assert (second.topic_id, second.line, second.metadata["narrative"]) == ("2024-145979", 3, "A narrative")
    assert second.sentences[0].citations == ("doc-7", "doc-9")
    with pytest.raises(AttributeError):
        first.topic_id = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        second.metadata["narrative"] = "changed"  # type: ignore[index]
    copy = pickle.loads(pickle.dumps(run))  # answers go to background tasks
    assert copy == run and copy.answers[1].metadata["narrative"] == "A narrative"
    assert isinstance(first, Answer)


def test_gzip_path_and_binary_and_text_streams_read_alike(tmp_path):
    text = lines(answer("1"), answer("2"))
    gz = tmp_path / "answers.jsonl.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    runs = [read_answers(gz), read_answers(io.BytesIO(text.encode())), read_answers(io.StringIO(text))]
    assert {tuple(a.topic_id for a in run.answers) for run in runs} == {("1", "2")}


def test_narrative_id_names_the_topic_when_topic_id_is_absent(tmp_path):
    record = answer("x")
    del record["metadata"]["topic_id"]
    record["metadata"]["narrative_id"] = "2025-77"
    assert read_answers(write(tmp_path, lines(record))).answers[0].topic_id == "2025-77"


def test_every_problem_is_one_line_with_file_and_line_and_nothing_is_returned(tmp_path):
    no_refs = answer("3")
    del no_refs["references"]
    no_team = answer("4")
    del no_team["metadata"]["team_id"]
    text = lines(
        answer("1"),
        '{"metadata": {"team_id": "t", "run_id": "r", "topic_id": "2"}',
        no_refs,
        no_team,
        answer("5", responses=[{"text": "x", "citations": [2, -1]}, {"text": "y", "citations": [True]}]),
        answer("6", responses=[{"citations": [0]}, "a sentence", {"text": "z", "citations": 0}]),
        answer("1"),
        answer("7", run="other-run"),
        "[1, 2]",
        answer("8", references=[5, "ok"], responses=[]),
        answer(12),
    )
    name = str(tmp_path / "answers.jsonl")
    assert problems_of(tmp_path, text, max_problems=50) == [f"{name}:{line}: {what}" for line, what in [
        (2, "not JSON: Expecting ',' delimiter"),
        (3, "missing field 'references'"),
        (4, "metadata has no 'team_id'"),
        (5, "responses[0]: citation 2 is out of range: the answer has 2 references"),
        (5, "responses[0]: citation -1 is out of range: the answer has 2 references"),
        (5, "responses[1]: a citation is an index into references or a segment id, not a boolean"),
        (6, "responses[0] has no 'text'"),
        (6, "responses[1] must be an object with text and citations, not a string"),
        (6, "responses[2].citations must be a list, not a number"),
        (7, "topic '1' is answered twice (first at line 1)"),
        (8, "run id 'other-run' differs from 'ragtest-gpt4o' (line 1): a file holds exactly one run"),
        (9, "an answer is a JSON object, not a list"),
        (10, "references[0]: is a number, not a segment id"),
    ]]


def test_unknown_topic_bad_identifiers_and_nul_text_are_refused(tmp_path):
    name = str(tmp_path / "answers.jsonl")
    text = lines(answer("9"), answer("1", run="r x\x01"), answer("2", responses=[{"text": "a\x00b", "citations": []}]),
                 answer("3", team=7))
    assert problems_of(tmp_path, text, known_qids={"1", "2", "3"}) == [
        f"{name}:1: topic '9' is not a topic of the collection",
        f"{name}:2: metadata.run_id: run tag 'r x\\x01' contains a control character",
        f"{name}:3: responses[0].text contains a NUL character",
        f"{name}:4: metadata.team_id must be a string, not a number",
    ]


def test_empty_file_and_blank_lines_only_are_refused(tmp_path):
    assert problems_of(tmp_path, "\n  \n") == [f"{tmp_path / 'answers.jsonl'}:1: the file is empty: no answers"]


def test_a_line_over_the_document_limit_is_refused_and_reading_goes_on(tmp_path):
    long = answer("2", responses=[{"text": "w" * 5000, "citations": []}])
    try:
        limits.configure(max_document=1000)
        found = problems_of(tmp_path, lines(answer("1"), long, answer("3", run="late")))
    finally:
        limits.configure()
    name = tmp_path / "answers.jsonl"
    assert found == [f"{name}:2: the line is longer than 1000 bytes",
                     f"{name}:3: run id 'late' differs from 'ragtest-gpt4o' (line 1): a file holds exactly one run"]


def test_a_file_over_the_runs_limit_is_refused_with_one_line(tmp_path):
    try:
        limits.configure(max_bytes={"runs": 2000})
        with pytest.raises(FormatError) as caught:
            read_answers(write(tmp_path, lines(*[answer(str(k)) for k in range(20)])))
    finally:
        limits.configure()
    assert caught.value.problems == [
        f"{tmp_path / 'answers.jsonl'}: refused: it holds more than 2.0 KB, the limit for runs files"]


def test_missing_file_is_one_line():
    with pytest.raises(FormatError, match="nowhere.jsonl: cannot read: no such file"):
        read_answers("nowhere.jsonl")


def test_trec_rag_2025_and_2024_shapes_read_like_the_schema_shape(tmp_path):
    rag25 = {"metadata": {"team_id": "organizer", "run_id": "fs_rank-qwen3-32b", "type": "automatic",
                          "narrative_id": "2", "narrative": "I'm seeking to understand climate change."},
             "references": ["msmarco_v2.1_doc_00_1062374885#2_1925315239", "msmarco_v2.1_doc_36_614618375#3_1234312863"],
             "answer": [{"text": "Human activities drive warming.", "citations": [0, 1]},
                        {"text": "Governments respond with agreements.", "citations": []}]}
    rag24 = {"run_id": "ragnarok", "topic_id": "2024-105741", "topic": "is it safe to eat raw flour",
             "references": ["msmarco_v2.1_doc_10_1#0_1", "msmarco_v2.1_doc_11_2#3_4"], "response_length": 9,
             "answer": [{"text": "Raw flour can carry E. coli.", "citations": [1]}]}
    one = read_answers(write(tmp_path, lines(rag25), "rag25.jsonl")).answers[0]
    assert (one.topic_id, one.run_id, one.team_id, one.metadata["narrative"]) == (
        "2", "fs_rank-qwen3-32b", "organizer", "I'm seeking to understand climate change.")
    assert one.sentences[0].citations == tuple(rag25["references"])
    assert one.sentences[1] == Sentence("Governments respond with agreements.", ())
    run = read_answers(write(tmp_path, lines(rag24), "rag24.jsonl"))
    assert (run.run_id, run.team_id) == ("ragnarok", "")
    two = run.answers[0]
    assert (two.topic_id, two.metadata["response_length"]) == ("2024-105741", 9)
    assert two.sentences[0].citations == ("msmarco_v2.1_doc_11_2#3_4",)


def test_shape_problems_name_the_missing_field_and_the_checkers_rules(tmp_path):
    rag25 = answer("1", responses=[])
    rag25["answer"] = rag25.pop("responses")
    rag25["metadata"]["type"] = "semi"
    flat = {"run_id": "ragtest-gpt4o", "topic_id": "3", "answer": []}
    name = str(tmp_path / "answers.jsonl")
    text = lines({}, rag25, flat, answer("4", responses=[{"text": "a", "citations": ["unlisted-seg"]}]),
                 {"run_id": "ragtest-gpt4o", "responses": []})
    assert problems_of(tmp_path, text) == [
        f"{name}:1: missing fields 'metadata', 'responses', 'references'",
        f"{name}:2: metadata.type must be 'automatic' or 'manual', not 'semi'",
        f"{name}:3: missing field 'references'",
        f"{name}:4: responses[0]: citation 'unlisted-seg' is not one of the answer's references",
        f"{name}:5: missing fields 'topic_id', 'references', 'answer'",
    ]

"""Answer runs in JSON lines: one generated answer per line, its sentences citing corpus segments.

The format followed is the one the TREC 2025 RAG-family tracks (RAG, RAGTIME, the AutoJudge spot check)
publish as a JSON schema: each line an object with the required fields ``metadata`` (an object with the
required ``team_id``, ``run_id`` and ``topic_id``, any other fields allowed, e.g. ``type``,
``narrative_id``), ``responses`` (a list of ``{"text", "citations"}``) and ``references`` (a list of
segment ids). Source: the track submission schema found by the code search (``"required": ["metadata",
"responses", "references"]``, metadata ``"required": ["team_id", "run_id", "topic_id"]``,
``"additionalProperties": true``). A citation is an index into ``references`` (TREC RAG) or a segment id
itself (RAGTIME); both are read and every citation is resolved to a segment id. A line whose metadata has
no ``topic_id`` but a ``narrative_id`` is read with that as its topic (TREC RAG 2025 names the topic so;
taken from the track guidelines as remembered, not from a schema). Extra metadata (``type``,
``response_length``, ...) is kept as is.

Problems (all reported, up to ``max_problems``, each ``path:LINE: message``, nothing returned if any): a
line that is not JSON or not an object, a missing or wrongly typed field, a bad identifier, a citation that
is neither an index nor a segment id or an index out of range, a topic answered twice, a run id differing
from the first line's (a file holds one run), a topic not in ``known_qids``, a line longer than the
document limit (counted in decoded characters, so at most 4 times as many bytes), a file over the size
limit of runs (:mod:`workbench.formats.limits`), no answer at all.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from workbench.formats import limits
from workbench.formats.errors import Problems
from workbench.formats.identifiers import identifier_problem, text_problem
from workbench.formats.sources import Source, display_name, open_text

__all__ = ["Answer", "AnswerRun", "Sentence", "read_answers"]


@dataclass(frozen=True)
class Sentence:
    """One sentence of an answer and the segment ids it cites, in the order given."""

    text: str
    citations: tuple[str, ...] = ()


@dataclass(frozen=True)
class Answer:
    """One answer: the run's answer to one topic, at ``line`` of its file."""

    topic_id: str
    run_id: str
    team_id: str
    sentences: tuple[Sentence, ...]
    references: tuple[str, ...]
    line: int
    #: the metadata object as given (read-only), ``type``, ``narrative``, ``response_length``, ...
    metadata: MappingProxyType = field(default_factory=lambda: MappingProxyType({}), compare=False, hash=False)

    @property
    def cited(self) -> tuple[str, ...]:
        """Every segment the answer cites, each once, in order of first citation."""
        return tuple(dict.fromkeys(seg for sentence in self.sentences for seg in sentence.citations))


@dataclass(frozen=True)
class AnswerRun:
    """One answer-run file: its run id and team, and its answers in file order."""

    run_id: str
    team_id: str
    answers: tuple[Answer, ...]
    name: str


def _type(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


class _Line:
    """The problems of one line: each added at its line number."""

    def __init__(self, number: int, problems: Problems) -> None:
        self.number = number
        self.problems = problems
        self.bad = False

    def add(self, message: str) -> None:
        self.bad = True
        self.problems.add(self.number, message)


def _identifier(meta: dict, key: str, kind: str, line: _Line) -> str | None:
    value = meta.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and key == "topic_id":
        value = str(value)
    if not isinstance(value, str):
        line.add(f"metadata.{key} must be a string, not {_type(value)}" if key in meta
                 else f"metadata has no {key!r}")
        return None
    problem = identifier_problem(kind, value)
    if problem:
        line.add(f"metadata.{key}: {problem}")
        return None
    return value


def _references(value: object, line: _Line) -> tuple[str, ...]:
    if not isinstance(value, list):
        line.add(f"references must be a list of segment ids, not {_type(value)}")
        return ()
    for k, ref in enumerate(value):
        problem = identifier_problem("docno", ref) if isinstance(ref, str) else f"is {_type(ref)}"
        if problem:
            line.add(f"references[{k}]: {problem}, not a segment id" if not isinstance(ref, str)
                     else f"references[{k}]: {problem}")
    return tuple(ref for ref in value if isinstance(ref, str))


def _citation(cite: object, where: str, references: tuple[str, ...], line: _Line) -> str | None:
    if isinstance(cite, int) and not isinstance(cite, bool):
        if 0 <= cite < len(references):
            return references[cite]
        line.add(f"{where}: citation {cite} is out of range: the answer has {len(references)} references")
        return None
    if isinstance(cite, str):
        problem = identifier_problem("docno", cite)
        if problem:
            line.add(f"{where}: citation {problem}")
            return None
        return cite
    line.add(f"{where}: a citation is an index into references or a segment id, not {_type(cite)}")
    return None


def _sentence(k: int, value: object, references: tuple[str, ...], line: _Line) -> Sentence | None:
    where = f"responses[{k}]"
    if not isinstance(value, dict):
        line.add(f"{where} must be an object with text and citations, not {_type(value)}")
        return None
    text, cites = value.get("text"), value.get("citations", [])
    if not isinstance(text, str):
        line.add(f"{where}.text must be a string, not {_type(text)}" if "text" in value else f"{where} has no 'text'")
        return None
    if text_problem(f"{where}.text", text):
        line.add(text_problem(f"{where}.text", text))  # type: ignore[arg-type]
        return None
    if not isinstance(cites, list):
        line.add(f"{where}.citations must be a list, not {_type(cites)}")
        return None
    resolved = [_citation(cite, where, references, line) for cite in cites]
    return Sentence(text, tuple(seg for seg in resolved if seg is not None))


def _answer(record: object, line: _Line) -> Answer | None:
    """The answer of one parsed line, or None (its problems added)."""
    if not isinstance(record, dict):
        line.add(f"an answer is a JSON object, not {_type(record)}")
        return None
    missing = [key for key in ("metadata", "responses", "references") if key not in record]
    if missing:
        line.add("missing field" + ("s " if len(missing) > 1 else " ") + ", ".join(map(repr, missing)))
        return None
    meta, responses = record["metadata"], record["responses"]
    if not isinstance(meta, dict):
        line.add(f"metadata must be an object, not {_type(meta)}")
        return None
    if "topic_id" not in meta and "narrative_id" in meta:
        meta = {**meta, "topic_id": meta["narrative_id"]}
    topic = _identifier(meta, "topic_id", "qid", line)
    run = _identifier(meta, "run_id", "tag", line)
    team = _identifier(meta, "team_id", "tag", line)
    references = _references(record["references"], line)
    if not isinstance(responses, list):
        line.add(f"responses must be a list of sentences, not {_type(responses)}")
        return None
    sentences = [_sentence(k, value, references, line) for k, value in enumerate(responses)]
    if line.bad:
        return None
    return Answer(topic, run, team, tuple(sentences), references, line.number,  # type: ignore[arg-type]
                  MappingProxyType(dict(record["metadata"])))


def _parse(text: str, line: _Line) -> Answer | None:
    try:
        record: Any = json.loads(text)
    except ValueError as exc:
        line.add(f"not JSON: {getattr(exc, 'msg', str(exc))}")
        return None
    return _answer(record, line)


def _check_run(answers: list[Answer], problems: Problems, known_qids: set[str] | None) -> None:
    """One run per file, one answer per topic, known topics."""
    first: dict[str, int] = {}
    main = answers[0]
    for answer in answers:
        if answer.run_id != main.run_id:
            problems.add(answer.line, f"run id {answer.run_id!r} differs from {main.run_id!r} (line "
                                      f"{main.line}): a file holds exactly one run")
        if answer.topic_id in first:
            problems.add(answer.line, f"topic {answer.topic_id!r} is answered twice (first at line "
                                      f"{first[answer.topic_id]})")
        first.setdefault(answer.topic_id, answer.line)
        if known_qids is not None and answer.topic_id not in known_qids:
            problems.add(answer.line, f"topic {answer.topic_id!r} is not a topic of the collection")


def read_answers(source: Source, *, name: str | None = None, known_qids: set[str] | None = None,
                 max_problems: int = 20) -> AnswerRun:
    """Read and validate an answer run (a path, a ``.gz`` path or a file object); raise
    :class:`~workbench.formats.errors.FormatError` listing every problem found.

    >>> import io
    >>> line = ('{"metadata": {"team_id": "t", "run_id": "r", "topic_id": "7"}, '
    ...         '"responses": [{"text": "Yes.", "citations": [1, "s9"]}], "references": ["s1", "s2"]}')
    >>> run = read_answers(io.StringIO(line + "\\n"))
    >>> run.run_id, run.answers[0].sentences[0].citations
    ('r', ('s2', 's9'))
    """
    name = display_name(source, name)
    problems = Problems(name, max_problems)
    most = limits.current().max_document
    answers: list[Answer] = []
    with open_text(source, kind="runs") as handle:
        number = 0
        while text := handle.readline(most + 1):
            number += 1
            if len(text) > most and not text.endswith("\n"):
                problems.add(number, f"the line is longer than {limits.human(most)}")
                while text and not text.endswith("\n"):  # skip the rest of the line, a block at a time
                    text = handle.readline(most + 1)
                continue
            if text.strip():
                answer = _parse(text, _Line(number, problems))
                if answer is not None:
                    answers.append(answer)
    if not answers and not problems:
        problems.add(1, "the file is empty: no answers")
    if answers:
        _check_run(answers, problems, known_qids)
    problems.raise_if_any()
    return AnswerRun(answers[0].run_id, answers[0].team_id, tuple(answers), name)

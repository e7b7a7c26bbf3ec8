"""Answer runs in JSON lines: one generated answer per line, its sentences citing corpus segments.

Three shapes are read, one answer per line, each an object:

- **AutoJudge / RAGTIME** (the track submission JSON schema, found with the code search):
  ``{"metadata": {"team_id", "run_id", "topic_id", ...}, "responses": [{"text", "citations"}], "references"}``,
  metadata ``"additionalProperties": true``.
- **TREC RAG 2025** (castorini/ragnarok ``src/ragnarok/scripts/rag25_validation.py``, the track's checker,
  and ``docs/rag25.md``): ``{"metadata": {"team_id", "run_id", "narrative_id", "type", "narrative", ...},
  "references", "answer": [{"text", "citations"}]}``; ``type`` is ``automatic`` or ``manual`` when given.
- **TREC RAG 2024** (ragnarok ``src/ragnarok/scripts/rag24_validation.py``): flat
  ``{"run_id", "topic_id", "topic", "references", "response_length", "answer": [...]}``, no team
  (``team_id`` is then ``""``); ``topic`` and ``response_length`` are kept, not required.

The topic is ``topic_id``, else ``narrative_id``. A citation is an index into ``references`` (the checkers'
format 1) or a segment id that must be one of ``references`` (format 2); both are read, also mixed, and every
citation is resolved to a segment id. The metadata (for the flat shape: every field but ``answer`` and
``references``) is kept as given. Not checked here, as they are track rules rather than format: the
400-word limit, the number of references, the MS MARCO segment-id pattern.

Problems (all reported, up to ``max_problems``, each ``path:LINE: message``, nothing returned if any): a line
that is not JSON or not an object, a missing or wrongly typed field, a bad identifier, a citation that is
neither an index nor a segment id, an index out of range or a segment id not among the references, a ``type``
other than automatic or manual, a topic answered twice, a run id differing from the first line's (a file holds
one run), a topic not in ``known_qids``, a line longer than the document limit (counted in decoded characters,
so at most 4 times as many bytes), a file over the size limit of runs (:mod:`workbench.formats.limits`), no
answer at all.
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

    def __post_init__(self) -> None:
        if not isinstance(self.metadata, MappingProxyType):
            object.__setattr__(self, "metadata", MappingProxyType(dict(self.metadata)))

    def __reduce__(self):  # a mapping proxy does not pickle: pickle its dict
        return (Answer, (self.topic_id, self.run_id, self.team_id, self.sentences, self.references, self.line,
                         dict(self.metadata)))

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


def _identifier(meta: dict, key: str, kind: str, line: _Line, prefix: str) -> str | None:
    value = meta.get(key)
    if isinstance(value, int) and not isinstance(value, bool) and kind == "qid":
        value = str(value)
    if not isinstance(value, str):
        line.add(f"{prefix}{key} must be a string, not {_type(value)}" if key in meta
                 else f"metadata has no {key!r}")
        return None
    problem = identifier_problem(kind, value)
    if problem:
        line.add(f"{prefix}{key}: {problem}")
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
        if cite in references:
            return cite
        line.add(f"{where}: citation {cite[:200]!r} is not one of the answer's references")
        return None
    line.add(f"{where}: a citation is an index into references or a segment id, not {_type(cite)}")
    return None


def _sentence(where: str, value: object, references: tuple[str, ...], line: _Line) -> Sentence | None:
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


def _fields(record: dict, line: _Line) -> tuple[dict, str, str] | None:
    """The metadata, the key of the sentences and the message's prefix for metadata fields, by shape: nested
    (``metadata`` with ``responses`` or ``answer``) or flat (TREC RAG 2024); None if fields are missing."""
    nested = "metadata" in record or not ("run_id" in record or "topic_id" in record)
    key = "answer" if "answer" in record and "responses" not in record else "responses"
    required = ("metadata", key, "references") if nested else ("run_id", "topic_id", "references", "answer")
    missing = [name for name in required if name not in record]
    if missing:
        line.add("missing field" + ("s " if len(missing) > 1 else " ") + ", ".join(map(repr, missing)))
        return None
    if not nested:
        return {k: v for k, v in record.items() if k not in ("answer", "references")}, key, ""
    if not isinstance(record["metadata"], dict):
        line.add(f"metadata must be an object, not {_type(record['metadata'])}")
        return None
    return record["metadata"], key, "metadata."


def _answer(record: object, line: _Line) -> Answer | None:
    """The answer of one parsed line, or None (its problems added)."""
    if not isinstance(record, dict):
        line.add(f"an answer is a JSON object, not {_type(record)}")
        return None
    fields = _fields(record, line)
    if fields is None:
        return None
    meta, key, prefix = fields
    topic_key = "narrative_id" if "topic_id" not in meta and "narrative_id" in meta else "topic_id"
    topic = _identifier(meta, topic_key, "qid", line, prefix)
    run = _identifier(meta, "run_id", "tag", line, prefix)
    team = _identifier(meta, "team_id", "tag", line, prefix) if prefix else ""
    if meta.get("type", "automatic") not in ("automatic", "manual"):
        line.add(f"{prefix}type must be 'automatic' or 'manual', not {meta['type']!r}")
    references = _references(record["references"], line)
    if not isinstance(record[key], list):
        line.add(f"{key} must be a list of sentences, not {_type(record[key])}")
        return None
    sentences = [_sentence(f"{key}[{k}]", value, references, line) for k, value in enumerate(record[key])]
    if line.bad:
        return None
    return Answer(topic, run, team, tuple(sentences), references, line.number, meta)  # type: ignore[arg-type]


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
    ...         '"responses": [{"text": "Yes.", "citations": [1, "s1"]}], "references": ["s1", "s2"]}')
    >>> run = read_answers(io.StringIO(line + "\\n"))
    >>> run.run_id, run.answers[0].sentences[0].citations
    ('r', ('s2', 's1'))
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

"""Nugget banks and nugget assignments in nuggetizer's JSON lines (castorini/nuggetizer, 0.0.5).

- **Banks** (``nuggetizer create`` output): one topic per line,
  ``{"qid", "query", "nuggets": [{"text", "importance"}]}``; ``importance`` is ``vital`` or ``okay``.
- **Assignments** (``nuggetizer assign`` output): one answer per line,
  ``{"qid", "run_id", "nuggets": [{"text", "importance", "assignment"}]}``; ``assignment`` is ``support``,
  ``partial_support`` or ``not_support``. Other fields (``query``, ``answer_text``, ...) are ignored.

Problems (all reported, up to ``max_problems``, each ``path:LINE: message``, nothing returned if any): a line
that is not a JSON object, a missing or wrongly typed field, a bad topic or run id, an empty nugget text, an
unknown importance or assignment (nuggetizer counts those as okay / not supported; here they are refused), a topic
given twice (a bank) or an answer given twice (a run and a topic), a topic not in ``known_qids``, a line longer
than the document limit, a file over the runs' size limit, an empty file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from workbench.formats import limits
from workbench.formats.errors import Problems
from workbench.formats.identifiers import identifier_problem, text_problem
from workbench.formats.sources import Source, display_name, open_text

__all__ = ["ASSIGNMENTS", "IMPORTANCES", "AssignedAnswer", "TopicBank", "nugget_bank_lines", "read_assignments",
           "read_nugget_banks"]

IMPORTANCES = ("vital", "okay")
ASSIGNMENTS = ("support", "partial_support", "not_support")


@dataclass(frozen=True)
class TopicBank:
    """A topic's nuggets, ``(text, importance)`` in bank order, at ``line`` of its file."""

    qid: str
    query: str
    nuggets: tuple[tuple[str, str], ...]
    line: int


@dataclass(frozen=True)
class AssignedAnswer:
    """The assignments of one run's answer to one topic: ``(text, importance, assignment)`` per nugget."""

    qid: str
    run_id: str
    nuggets: tuple[tuple[str, str, str], ...]
    line: int


def _nugget(where: str, value: object, keys: tuple[str, ...], add) -> tuple[str, ...] | None:
    if not isinstance(value, dict):
        add(f"{where} must be an object with {', '.join(keys)}")
        return None
    found = []
    for key in keys:
        item = value.get(key)
        if not isinstance(item, str):
            add(f"{where}.{key} must be a string" if key in value else f"{where} has no {key!r}")
            return None
        found.append(item)
    problem = text_problem(f"{where}.text", found[0])
    if problem or not found[0].strip():
        add(problem or f"{where}.text is empty")
        return None
    if found[1] not in IMPORTANCES:
        add(f"{where}.importance must be 'vital' or 'okay', not {found[1][:40]!r}")
        return None
    if len(found) > 2 and found[2] not in ASSIGNMENTS:
        add(f"{where}.assignment must be one of {', '.join(ASSIGNMENTS)}, not {found[2][:40]!r}")
        return None
    return tuple(found)


def _record(text: str, number: int, problems: Problems, keys: tuple[str, ...]) -> tuple[dict, list] | None:
    """The line's object and its checked nuggets, or None (its problems added)."""
    bad = []

    def add(message: str) -> None:
        bad.append(message)
        problems.add(number, message)

    try:
        record = json.loads(text)
    except ValueError as exc:
        add(f"not JSON: {getattr(exc, 'msg', str(exc))}")
        return None
    if not isinstance(record, dict):
        add("a line is a JSON object")
        return None
    ids = ("qid", "run_id") if "assignment" in keys else ("qid",)
    for key, kind in zip(ids, ("qid", "tag"), strict=False):
        value = record.get(key)
        value = str(value) if isinstance(value, int) and not isinstance(value, bool) and key == "qid" else value
        if not isinstance(value, str):
            add(f"{key} must be a string" if key in record else f"{key} is missing")
        elif problem := identifier_problem(kind, value):
            add(f"{key}: {problem}")
        record[key] = value
    nuggets = record.get("nuggets")
    if not isinstance(nuggets, list):
        add("nuggets must be a list" if "nuggets" in record else "nuggets is missing")
        return None
    checked = [_nugget(f"nuggets[{k}]", value, keys, add) for k, value in enumerate(nuggets)]
    return None if bad else (record, checked)


def _lines(source: Source, name: str, problems: Problems) -> Iterable[tuple[int, str]]:
    most = limits.current().max_document
    with open_text(source, kind="runs") as handle:
        number = 0
        while text := handle.readline(most + 1):
            number += 1
            if len(text) > most and not text.endswith("\n"):
                problems.add(number, f"the line is longer than {limits.human(most)}")
                while text and not text.endswith("\n"):
                    text = handle.readline(most + 1)
                continue
            if text.strip():
                yield number, text


def _read(source: Source, name: str | None, known_qids, max_problems: int, keys: tuple[str, ...]):
    name = display_name(source, name)
    problems = Problems(name, max_problems)
    found, first = [], {}
    for number, text in _lines(source, name, problems):
        parsed = _record(text, number, problems, keys)
        if parsed is None:
            continue
        record, nuggets = parsed
        key = (record["qid"], record.get("run_id"))
        if key in first:
            what = f"topic {key[0]!r}" + (f" of run {key[1]!r}" if key[1] is not None else "")
            problems.add(number, f"{what} is given twice (first at line {first[key]})")
        elif known_qids is not None and key[0] not in known_qids:
            problems.add(number, f"topic {key[0]!r} is not a topic of the collection")
        first.setdefault(key, number)
        found.append((number, record, tuple(nuggets)))
    if not found and not problems:
        problems.add(1, "the file is empty: no lines")
    problems.raise_if_any()
    return found


def read_nugget_banks(source: Source, *, name: str | None = None, known_qids: set[str] | None = None,
                      max_problems: int = 20) -> list[TopicBank]:
    """Read nuggetizer's nugget banks; raise :class:`~workbench.formats.errors.FormatError` on any problem.

    >>> import io
    >>> read_nugget_banks(io.StringIO('{"qid": "7", "query": "q", "nuggets": [{"text": "A", "importance": "vital"}]}'))
    [TopicBank(qid='7', query='q', nuggets=(('A', 'vital'),), line=1)]
    """
    found = _read(source, name, known_qids, max_problems, ("text", "importance"))
    return [TopicBank(r["qid"], r["query"] if isinstance(r.get("query"), str) else "", nuggets, number)
            for number, r, nuggets in found]


def read_assignments(source: Source, *, name: str | None = None, known_qids: set[str] | None = None,
                     max_problems: int = 20) -> list[AssignedAnswer]:
    """Read nuggetizer's assignments; raise :class:`~workbench.formats.errors.FormatError` on any problem."""
    found = _read(source, name, known_qids, max_problems, ("text", "importance", "assignment"))
    return [AssignedAnswer(r["qid"], r["run_id"], nuggets, number) for number, r, nuggets in found]


def nugget_bank_lines(banks: Iterable[TopicBank]) -> Iterable[str]:
    """The banks as nuggetizer's JSON lines, one topic a line (each ending in a newline)."""
    for bank in banks:
        yield json.dumps({"qid": bank.qid, "query": bank.query,
                          "nuggets": [{"text": text, "importance": imp} for text, imp in bank.nuggets]},
                         ensure_ascii=False) + "\n"

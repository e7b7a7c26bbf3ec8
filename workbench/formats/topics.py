"""Topics: classic TREC SGML, TREC XML, TSV and JSONL, autodetected from the content.

- ``trec``: ``<top> <num> Number: 301 <title> ... <desc> Description: ... <narr> Narrative: ... </top>``;
  tags are usually not closed (a field runs to the next tag), closed ones (``<num>1</num>``) work too.
  The labels ``Number:``, ``Topic:``, ``Description:``, ``Narrative:`` are dropped; any other tag
  (``<smry>``, ``<con>``, ...) goes to ``extra`` under its lower-case name.
- ``xml``: ``<topics><topic number="1"><query>..</query><question>..</question><narrative>..</narrative>``
  (TREC-COVID, Web track): ``query``/``title`` -> title, ``question``/``description`` -> description,
  ``narrative`` -> narrative; other child tags and attributes go to ``extra`` (a repeated tag: a list).
- ``tsv``: ``qid<TAB>text`` per line (TREC DL, MS MARCO).
- ``jsonl``: one object per line; the id from ``qid``, ``query_id``, ``_id`` or ``id``; the title from
  ``title``, ``text`` or ``query``; ``description``; ``narrative``; every other key goes to ``extra``.

Whitespace inside each field is collapsed to single spaces. A topic without an id, a repeated id, or
a file without topics is a :class:`FormatError` naming the line.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from workbench.formats import identifiers
from workbench.formats.errors import FormatError, Problems
from workbench.formats.sources import Source, display_name, open_text


@dataclass(frozen=True)
class TopicRecord:
    """One topic: its id, title, description, narrative, and any other fields of the source."""

    qid: str
    title: str
    description: str = ""
    narrative: str = ""
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def read_topics(source: Source, *, name: str | None = None, format: str | None = None) -> list[TopicRecord]:
    """Read every topic of ``source`` (``format`` one of ``FORMATS``: ``trec``, ``xml``, ``tsv``, ``jsonl``,
    or None to detect it from the content).

    >>> import io
    >>> read_topics(io.StringIO("<top>\\n<num> Number: 301\\n<title> Organized Crime\\n</top>\\n"))[0].title
    'Organized Crime'
    """
    name = display_name(source, name)
    with open_text(source, errors="surrogateescape", kind="topics") as handle:  # bytes that are not UTF-8 are refused below
        text = handle.read()
    text = text.removeprefix("\ufeff")
    chosen = format or detect_format(text)
    if chosen not in FORMATS:
        raise FormatError([f"{name}:1: unknown topics format {chosen!r} (one of {', '.join(FORMATS)})"])
    problems = Problems(name, 20)
    found = FORMATS[chosen][1](text, problems)
    seen: dict[str, int] = {}
    for line, record in found:
        for problem in _record_problems(record):
            problems.add(line, problem)
        if record.qid in seen:
            problems.add(line, f"topic {record.qid!r} appears more than once (first at line {seen[record.qid]})")
        seen.setdefault(record.qid, line)
    if not found and not problems:
        problems.add(1, f"no topics found (read as {chosen})")
    problems.raise_if_any()
    return [_cleaned(record) for _, record in found]


def _cleaned(record: TopicRecord) -> TopicRecord:
    return replace(record, title=identifiers.clean_text(record.title),
                   description=identifiers.clean_text(record.description),
                   narrative=identifiers.clean_text(record.narrative),
                   extra=MappingProxyType(identifiers.clean_value(dict(record.extra))))


def _record_problems(record: TopicRecord) -> list[str]:
    found = [identifiers.identifier_problem("qid", record.qid)]
    found += [identifiers.text_problem(f"topic {record.qid!r}'s {field}", getattr(record, field))
              for field in ("title", "description", "narrative")]
    return [problem for problem in found if problem]


def _looks_like_xml(head: str) -> bool:
    return head.startswith("<") and (re.search(r"<topics?[\s>]", head, re.IGNORECASE) is not None
                                     or head.startswith("<?xml"))


def detect_format(text: str) -> str:
    """The registered format whose detector accepts the start of the text: ``xml`` for
    ``<topics>``/``<topic ...>``, ``trec`` for ``<top>``, ``jsonl`` for ``{``, else ``tsv``."""
    head = text.lstrip()[:4096]
    return next(name for name, (accepts, _) in FORMATS.items() if accepts(head))


def _squash(text: str) -> str:
    return " ".join(text.split())


def _line_of(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


_TOP = re.compile(r"<top>(.*?)(?:</top>|(?=<top>)|\Z)", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<(/?)([A-Za-z][\w.-]*)[^>]*>")
_LABELS = {"num": r"number\s*:", "title": r"topic\s*:", "desc": r"description\s*:", "narr": r"narrative\s*:"}


def _sgml_fields(body: str) -> dict[str, str]:
    """Each opening tag's text, up to the next tag; repeated tags are joined."""
    fields: dict[str, list[str]] = {}
    tags = list(_TAG.finditer(body))
    for i, tag in enumerate(tags):
        if tag.group(1):
            continue
        end = tags[i + 1].start() if i + 1 < len(tags) else len(body)
        fields.setdefault(tag.group(2).lower(), []).append(body[tag.end(): end])
    return {key: _squash(" ".join(parts)) for key, parts in fields.items()}


def _parse_trec(text: str, problems: Problems) -> list[tuple[int, TopicRecord]]:
    found = []
    for block in _TOP.finditer(text):
        line = _line_of(text, block.start())
        fields = _sgml_fields(block.group(1))
        for key, label in _LABELS.items():
            if key in fields:
                fields[key] = re.sub(rf"^{label}\s*", "", fields[key], flags=re.IGNORECASE)
        qid = fields.pop("num", "")
        if not qid:
            problems.add(line, "topic has no <num>")
            continue
        record = TopicRecord(qid=qid, title=fields.pop("title", ""), description=fields.pop("desc", ""),
                             narrative=fields.pop("narr", ""), extra=MappingProxyType(fields))
        found.append((line, record))
    return found


_XML_FIELDS = {"query": "title", "title": "title", "question": "description", "description": "description",
               "desc": "description", "narrative": "narrative", "narr": "narrative"}
_XML_IDS = ("number", "id", "qid", "num")


def _xml_fields(element) -> tuple[dict[str, str], dict[str, Any]]:
    """A <topic>'s title, description and narrative (the first child naming each), and its other children
    (repeated ones as lists)."""
    fields = {"title": "", "description": "", "narrative": ""}
    extra: dict[str, Any] = {}
    for child in element:
        value = _squash("".join(child.itertext()))
        target = _XML_FIELDS.get(child.tag)
        if target is not None and not fields[target]:
            fields[target] = value
        elif child.tag in extra:
            previous = extra[child.tag]
            extra[child.tag] = [*previous, value] if isinstance(previous, list) else [previous, value]
        else:
            extra[child.tag] = value
    return fields, extra


def _xml_qid(attributes: dict, extra: dict) -> str | None:
    """The topic's id: an id attribute, else an id child element (taken out of what is kept as extra)."""
    qid = next((attributes.pop(key) for key in _XML_IDS if key in attributes), None)
    if qid is None:
        qid = next((extra.pop(key) for key in _XML_IDS if isinstance(extra.get(key), str)), None)
    return qid


def _parse_xml(text: str, problems: Problems) -> list[tuple[int, TopicRecord]]:
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        problems.add(exc.position[0], f"not well-formed XML: {exc}")
        return []
    starts = [_line_of(text, m.start()) for m in re.finditer(r"<topic[\s>/]", text)]
    elements = [root] if root.tag == "topic" else list(root.iter("topic"))
    found = []
    for index, element in enumerate(elements):
        line = starts[index] if index < len(starts) else 1
        attributes = dict(element.attrib)
        fields, extra = _xml_fields(element)
        qid = _xml_qid(attributes, extra)
        if not qid:
            problems.add(line, "<topic> has no number attribute")
            continue
        extra.update(attributes)
        found.append((line, TopicRecord(qid=qid.strip(), **fields, extra=MappingProxyType(extra))))
    return found


def _parse_tsv(text: str, problems: Problems) -> list[tuple[int, TopicRecord]]:
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        columns = line.rstrip("\r").split("\t")
        if len(columns) != 2 or not columns[0].strip():
            problems.add(number, f"expected 2 tab-separated columns (qid, text), found {len(columns)}")
            continue
        found.append((number, TopicRecord(qid=columns[0].strip(), title=_squash(columns[1]))))
    return found


_JSON_IDS = ("qid", "query_id", "_id", "id")
_JSON_TITLES = ("title", "text", "query")


def _parse_jsonl(text: str, problems: Problems) -> list[tuple[int, TopicRecord]]:
    found = []
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.add(number, f"not valid JSON: {exc.msg}")
            continue
        if not isinstance(item, dict):
            problems.add(number, "expected a JSON object")
            continue
        id_key = next((key for key in _JSON_IDS if item.get(key) not in (None, "")), None)
        if id_key is None:
            problems.add(number, f"no topic id (one of {', '.join(_JSON_IDS)})")
            continue
        qid = str(item.pop(id_key))
        title_key = next((key for key in _JSON_TITLES if key in item), None)
        title = _text(item.pop(title_key)) if title_key else ""
        record = TopicRecord(qid=qid, title=title, description=_text(item.pop("description", "")),
                             narrative=_text(item.pop("narrative", "")), extra=MappingProxyType(item))
        found.append((number, record))
    return found


def _text(value: Any) -> str:
    return _squash(value if isinstance(value, str) else "" if value is None else str(value))


#: the topic formats, in the order messages list them: name -> (detector of the text's start, parser).
#: The detectors exclude one another and together accept any text, so exactly one format is detected.
#: A new format is a parser (text, problems) -> [(line, TopicRecord)] and one entry here.
FORMATS: dict[str, tuple[Callable[[str], bool], Callable[[str, Problems], list[tuple[int, TopicRecord]]]]] = {
    "trec": (lambda head: head.startswith("<") and not _looks_like_xml(head), _parse_trec),
    "xml": (_looks_like_xml, _parse_xml),
    "tsv": (lambda head: not head.startswith(("<", "{")), _parse_tsv),
    "jsonl": (lambda head: head.startswith("{"), _parse_jsonl),
}

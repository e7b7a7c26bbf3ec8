"""Documents: TREC SGML (``<DOC><DOCNO>..</DOCNO>..</DOC>``), JSONL or TSV, streamed one at a time.

- ``trec``: the text between ``<DOCNO>`` and ``</DOCNO>`` is the docno. A ``<TITLE>``, ``<HEADLINE>``,
  ``<HEAD>`` or ``<HL>`` element becomes the title (several are joined); the text of every other
  element, and text outside any element, becomes the text, tags removed, HTML entities decoded,
  blank lines dropped. Anything between documents is ignored.
- ``jsonl``: one object per line; the docno from ``docno``, ``id`` or ``_id``; ``title``; the text from
  ``text``, ``contents`` or ``body``; every other key goes to ``extra``.
- ``tsv``: one document per line, ``docno<TAB>text`` (MS MARCO's ``collection.tsv``) or
  ``docno<TAB>title<TAB>text``; every line of a file has the same number of columns (that of its first
  line). A first line ``docno<TAB>text`` or ``docno<TAB>title<TAB>text`` is a header and skipped.

Detection: a file starting with ``{`` is JSONL, one whose first line has a tab (and no ``<DOC``) is TSV, any
other is TREC SGML.

The file is read in blocks of about 1 MB: memory stays flat however large the corpus. A document
without a docno, a ``<DOC>`` without ``</DOC>``, or a docno seen before is a :class:`FormatError`
naming the line where the document starts.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, TextIO

from workbench.formats import identifiers, limits
from workbench.formats.errors import FormatError
from workbench.formats.sources import Source, display_name, open_text

_BLOCK = 1 << 20


@dataclass(frozen=True)
class DocumentRecord:
    """One document: its docno, title, text and any other fields of the source."""

    docno: str
    title: str
    text: str
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def iter_documents(source: Source, *, name: str | None = None, format: str | None = None,
                   check_duplicates: bool = True) -> Iterator[DocumentRecord]:
    """Yield the documents of ``source`` in file order (``format``: ``trec``, ``jsonl``, ``tsv``, or None to detect).

    >>> import io
    >>> doc = next(iter_documents(io.StringIO("<DOC>\\n<DOCNO> 7 </DOCNO>\\n<TITLE>On rays</TITLE>\\nGamma\\n</DOC>")))
    >>> doc.docno, doc.title, doc.text
    ('7', 'On rays', 'Gamma')
    """
    for _line, record in iter_numbered_documents(source, name=name, format=format, check_duplicates=check_duplicates):
        yield record


def iter_numbered_documents(source: Source, *, name: str | None = None, format: str | None = None,
                            check_duplicates: bool = True) -> Iterator[tuple[int, DocumentRecord]]:
    """(line where the document starts, document) of ``source``, checked and cleaned as :func:`iter_documents`
    yields them (the corpus index records where each document is)."""
    name = display_name(source, name)
    with open_text(source, errors="surrogateescape", kind="documents") as handle:  # bytes that are not UTF-8 are refused below
        head = handle.read(_BLOCK).removeprefix("\ufeff")
        chosen = format or detect_format(head)
        if chosen not in FORMATS:
            raise FormatError([f"{name}:1: unknown documents format {chosen!r} (one of {', '.join(FORMATS)})"])
        records = FORMATS[chosen][1](handle, head, name)
        seen: dict[str, int] = {}
        for line, record in records:
            record = _checked(record, name, line)
            if check_duplicates:
                first = seen.setdefault(record.docno, line)
                if first != line:
                    raise FormatError([f"{name}:{line}: document {record.docno!r} appears more than once "
                                       f"(first at line {first})"])
            yield line, record
        if not seen and check_duplicates:
            raise FormatError([f"{name}:1: no documents found (read as {chosen})"])


_DOC_OPEN = re.compile(r"<DOC(?=[\s>])[^>]*>", re.IGNORECASE)
_DOC_CLOSE = re.compile(r"</DOC\s*>", re.IGNORECASE)
_DOCNO = re.compile(r"<DOCNO(?=[\s>])[^>]*>(.*?)</DOCNO\s*>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<(/?)([A-Za-z][\w.:-]*)[^>]*>")
_TITLE_TAGS = frozenset({"title", "headline", "head", "hl"})


def _trec_documents(handle: TextIO, buffer: str, name: str) -> Iterator[tuple[int, DocumentRecord]]:
    """Find ``<DOC>..</DOC>`` spans in a buffer refilled block by block; ``line`` is the line at ``position``."""
    position, line, eof = 0, 1, False
    while True:
        opening = _DOC_OPEN.search(buffer, position)
        closing = _DOC_CLOSE.search(buffer, opening.end()) if opening else None
        if opening is not None and closing is not None:
            line += buffer.count("\n", position, opening.start())
            body = buffer[opening.end(): closing.start()]
            nested = _DOC_OPEN.search(body)
            if nested is not None:
                where = line + buffer.count("\n", opening.start(), opening.end() + nested.start())
                raise FormatError([f"{name}:{line}: <DOC> without </DOC> before the next <DOC> (line {where})"])
            yield line, _sgml_document(body, name, line)
            line += buffer.count("\n", opening.start(), closing.end())
            position = closing.end()
            continue
        if eof:
            if opening is not None:
                start = line + buffer.count("\n", position, opening.start())
                raise FormatError([f"{name}:{start}: <DOC> without </DOC>"])
            return
        # keep the open document, or a short tail that may hold the start of a split tag
        keep = opening.start() if opening is not None else max(position, len(buffer) - 256)
        line += buffer.count("\n", position, keep)
        if opening is not None and len(buffer) - keep > limits.current().max_document:
            found = _DOCNO.search(buffer, opening.end(), opening.end() + 4096)
            raise _too_large(name, line, found.group(1).strip() if found else None)
        chunk = handle.read(_BLOCK)
        eof = not chunk
        buffer, position = buffer[keep:] + chunk, 0


def _sgml_document(body: str, name: str, line: int) -> DocumentRecord:
    docno = _DOCNO.search(body)
    if docno is None or not docno.group(1).strip():
        raise FormatError([f"{name}:{line}: document has no <DOCNO>"])
    rest = body[: docno.start()] + "\n" + body[docno.end():]
    title_parts: list[str] = []
    text_parts: list[str] = []
    depth = 0  # how many title elements are open
    cursor = 0
    for tag in _TAG.finditer(rest):
        (title_parts if depth else text_parts).append(rest[cursor: tag.start()])
        cursor = tag.end()
        if tag.group(2).lower() in _TITLE_TAGS:
            depth = max(0, depth - 1) if tag.group(1) else depth + 1
    (title_parts if depth else text_parts).append(rest[cursor:])
    title = " ".join(html.unescape(" ".join(title_parts)).split())
    lines = (" ".join(part.split()) for part in html.unescape("\n".join(text_parts)).split("\n"))
    return DocumentRecord(docno=docno.group(1).strip(), title=title, text="\n".join(x for x in lines if x))


_JSON_IDS = ("docno", "id", "_id")
_JSON_TEXTS = ("text", "contents", "body")


def _jsonl_documents(handle: TextIO, head: str, name: str) -> Iterator[tuple[int, DocumentRecord]]:
    for number, line in _lines(handle, head, name, _json_docno):
        record = _json_document(line, name, number)
        if record is not None:
            yield number, record


def _json_document(line: str, name: str, number: int) -> DocumentRecord | None:
    if not line.strip():
        return None
    try:
        item = json.loads(line)
    except json.JSONDecodeError as exc:
        raise FormatError([f"{name}:{number}: not valid JSON: {exc.msg}"]) from None
    if not isinstance(item, dict):
        raise FormatError([f"{name}:{number}: expected a JSON object"])
    return _mapping_document(item, name, number)


def document_from_mapping(item: dict, name: str, number: int) -> DocumentRecord:
    """A document from one row of named values (a Parquet row), by the rules of a JSONL line, checked and
    cleaned as :func:`iter_documents` yields it; ``number`` is the row's (1-based) in messages."""
    return _checked(_mapping_document(dict(item), name, number), name, number)


def _checked(record: DocumentRecord, name: str, line: int) -> DocumentRecord:
    """The record refused (``name:line: what``) if an import would refuse it, else cleaned."""
    problem = _record_problem(record)
    if problem:
        raise FormatError([f"{name}:{line}: {problem}"])
    return replace(record, title=identifiers.clean_text(record.title), text=identifiers.clean_text(record.text),
                   extra=MappingProxyType(identifiers.clean_value(dict(record.extra))))


def _mapping_document(item: dict, name: str, number: int) -> DocumentRecord:
    id_key = next((key for key in _JSON_IDS if item.get(key) not in (None, "")), None)
    if id_key is None:
        raise FormatError([f"{name}:{number}: document has no id (one of {', '.join(_JSON_IDS)})"])
    docno = str(item.pop(id_key))
    title = item.pop("title", "") or ""
    text_key = next((key for key in _JSON_TEXTS if key in item), None)
    text = (item.pop(text_key) or "") if text_key else ""
    return DocumentRecord(docno=docno, title=str(title).strip(), text=str(text).strip(),
                          extra=MappingProxyType(item))


_TSV_HEADERS = (("docno", "text"), ("docno", "title", "text"))


def _tsv_documents(handle: TextIO, head: str, name: str) -> Iterator[tuple[int, DocumentRecord]]:
    width = None
    for number, line in _lines(handle, head, name, _tsv_docno):
        if not line.strip():
            continue
        columns = line.rstrip("\r").split("\t")
        if width is None:
            width = len(columns)
            if tuple(c.strip().lower() for c in columns) in _TSV_HEADERS:
                continue
        if len(columns) != width or width not in (2, 3):
            raise FormatError([f"{name}:{number}: expected {width if width in (2, 3) else '2 or 3'} tab-separated "
                               f"columns (docno<TAB>text or docno<TAB>title<TAB>text), found {len(columns)}"])
        docno, *title, text = columns
        if not docno.strip():
            raise FormatError([f"{name}:{number}: document has no docno (the first column is empty)"])
        yield number, DocumentRecord(docno=docno.strip(), title=" ".join("".join(title).split()), text=text.strip())


def _lines(handle: TextIO, head: str, name: str, docno_of) -> Iterator[tuple[int, str]]:
    """(line number, line) of the whole file, read block by block from ``head`` on; ``docno_of`` names a line's
    document in the message when one is too long."""
    pending, number, chunk = "", 0, head
    while chunk:
        lines = (pending + chunk).split("\n")
        pending = lines.pop()
        for line in lines:
            number += 1
            _check_line(line, name, number, docno_of)
            yield number, line
        _check_line(pending, name, number + 1, docno_of)
        chunk = handle.read(_BLOCK)
    if pending:
        yield number + 1, pending


_JSON_DOCNO = re.compile(r'"(?:docno|id|_id)"\s*:\s*"([^"\\]{1,200})"')


def _json_docno(line: str) -> str | None:
    found = _JSON_DOCNO.search(line, 0, 4096)
    return found.group(1) if found else None


def _tsv_docno(line: str) -> str | None:
    docno = line[:4096].split("\t", 1)[0].strip()
    return docno[:200] if docno and "\t" in line[:4096] else None


def _check_line(line: str, name: str, number: int, docno: Callable[[str], str | None]) -> None:
    if len(line) > limits.current().max_document:
        raise _too_large(name, number, docno(line))


def _too_large(name: str, line: int, docno: str | None) -> FormatError:
    """One document larger than the limit (measured in characters read, about its bytes)."""
    which = f"document {docno!r}" if docno else "the document starting here"
    return FormatError([f"{name}:{line}: {which} is larger than {limits.human(limits.current().max_document)}, "
                        "the maximum size of one document"])


def _record_problem(record: DocumentRecord) -> str | None:
    return (identifiers.identifier_problem("docno", record.docno)
            or identifiers.text_problem(f"document {record.docno!r}'s title", record.title)
            or identifiers.text_problem(f"document {record.docno!r}'s text", record.text))


def _looks_like_tsv(head: str) -> bool:
    first = head.split("\n", 1)[0]
    return not head.startswith(("<", "{")) and "\t" in first and _DOC_OPEN.search(first) is None


def detect_format(head: str) -> str:
    """The format of a documents file from its start (BOM removed): the first of ``FORMATS`` whose
    detector accepts it; TREC SGML when none does (its reader then says it found no documents)."""
    head = head.lstrip()
    return next((n for n, (accepts, _) in FORMATS.items() if accepts(head)), "trec")


#: the document formats (their detectors exclude one another): name -> (detector of the file's start, reader).
#: A new format is a reader (handle, head, name) -> iterator of (line, DocumentRecord), one entry here and
#: its label in :mod:`workbench.formats.catalog`.
FORMATS = {
    "trec": (lambda head: not head.startswith("{") and not _looks_like_tsv(head), _trec_documents),
    "jsonl": (lambda head: head.startswith("{"), _jsonl_documents),
    "tsv": (_looks_like_tsv, _tsv_documents),
}

"""Topics written out for teams, in the formats ``workbench.formats.read_topics`` reads back: classic TREC
SGML (``<top> <num> Number: ...``), TSV (``qid<TAB>title``, as TREC DL and MS MARCO) and JSONL (every field).

Django-free: it takes plain records (anything with ``qid``, ``title``, ``description``, ``narrative`` and
``extra``) and returns the file's text.

>>> from types import SimpleNamespace as T
>>> print(write_topics([T(qid="301", title="Organized crime", description="", narrative="", extra={})], "tsv"))
301	Organized crime
<BLANKLINE>
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["TOPIC_FILES", "write_topics"]

_TAG = re.compile(r"^[a-z][a-z0-9_-]*$")
_SPACE = re.compile(r"\s+")


def _line(text: Any) -> str:
    """One line of text: tabs, newlines and runs of spaces become single spaces."""
    return _SPACE.sub(" ", str(text or "")).strip()


def _trec(topics: Iterable) -> str:
    out = []
    for t in topics:
        out += ["<top>", "", f"<num> Number: {t.qid}", f"<title> {_line(t.title)}", ""]
        if t.description:
            out += ["<desc> Description:", _line(t.description), ""]
        if t.narrative:
            out += ["<narr> Narrative:", _line(t.narrative), ""]
        for key, value in (t.extra or {}).items():
            # other SGML fields (``<smry>``, ``<con>``) as they came; structured values only in JSONL
            if _TAG.match(str(key)) and key not in {"top", "num", "title", "desc", "narr"} \
                    and isinstance(value, str | int | float) and not isinstance(value, bool):
                out += [f"<{key}> {_line(value)}", ""]
        out += ["</top>", ""]
    return "\n".join(out)


def _tsv(topics: Iterable) -> str:
    return "".join(f"{t.qid}\t{_line(t.title)}\n" for t in topics)


def _jsonl(topics: Iterable) -> str:
    lines = []
    for t in topics:
        record = {"qid": t.qid, "title": t.title or ""}
        if t.description:
            record["description"] = t.description
        if t.narrative:
            record["narrative"] = t.narrative
        for key, value in (t.extra or {}).items():
            record.setdefault(str(key), value)
        lines.append(json.dumps(record, ensure_ascii=False) + "\n")
    return "".join(lines)


#: format name -> (label, file name, content type, writer)
TOPIC_FILES: dict[str, tuple[str, str, str, Callable[[Iterable], str]]] = {
    "trec": ("TREC topics (<top> SGML)", "topics.txt", "text/plain; charset=utf-8", _trec),
    "tsv": ("TSV (qid, title)", "topics.tsv", "text/tab-separated-values; charset=utf-8", _tsv),
    "jsonl": ("JSONL (every field)", "topics.jsonl", "application/x-ndjson; charset=utf-8", _jsonl),
}


def write_topics(topics: Iterable, format: str) -> str:
    """The text of a topics file in ``format`` (one of :data:`TOPIC_FILES`)."""
    if format not in TOPIC_FILES:
        raise ValueError(f"unknown topics format {format!r} (one of {', '.join(TOPIC_FILES)})")
    return TOPIC_FILES[format][3](topics)

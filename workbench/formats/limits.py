"""The limits every reader applies, whatever a file claims to be: how large a file of each kind may be once
decompressed, how much a compressed file may expand, how large one document and a run's ir_metadata header
may be. Django-free: the defaults are here, ``workbench.settings`` sets them at start-up (:func:`configure`)
from its environment variables; a reader asks :func:`current`.

A file over a limit is refused with one line as soon as the limit is passed: the reader never holds more
than a block of it beyond what it already keeps for a valid file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

__all__ = ["KINDS", "Limits", "configure", "current", "human"]

MB = 1 << 20
GB = 1 << 30

#: the kinds of files a reader is told it reads
KINDS = ("runs", "qrels", "topics", "documents", "other")


@dataclass(frozen=True)
class Limits:
    #: most bytes a file of each kind may hold once decompressed (a plain file: its size)
    max_bytes: dict
    #: most a compressed file may expand (decompressed / compressed) once ``ratio_after`` bytes are out
    max_ratio: float = 100.0
    ratio_after: int = 16 * MB
    #: most bytes of one document (a TREC ``<DOC>``, a JSONL or TSV line)
    max_document: int = 16 * MB
    #: most bytes of a run's ir_metadata header, its deepest nesting, and the most YAML nodes it may hold
    max_metadata: int = 64 * 1024
    max_metadata_depth: int = 20
    max_metadata_nodes: int = 10_000

    def bytes_for(self, kind: str) -> int:
        return int(self.max_bytes.get(kind) or self.max_bytes["other"])


_DEFAULTS = Limits(max_bytes={"runs": 2 * GB, "qrels": 2 * GB, "topics": 512 * MB, "documents": 1024 * GB,
                              "other": 1 * GB})
_current = _DEFAULTS


def current() -> Limits:
    return _current


def configure(**changes) -> Limits:
    """Set limits (keyword names of :class:`Limits`; ``max_bytes`` may name only some kinds); the new limits.
    ``configure()`` without arguments restores the defaults."""
    global _current
    if not changes:
        _current = _DEFAULTS
        return _current
    if "max_bytes" in changes:
        changes["max_bytes"] = {**_current.max_bytes, **changes["max_bytes"]}
    _current = replace(_current, **changes)
    return _current


def human(size: float) -> str:
    """``16 MB``, ``1.5 GB``, ``900 bytes``."""
    for unit, scale in (("TB", 1 << 40), ("GB", GB), ("MB", MB), ("KB", 1024)):
        if size >= scale:
            value = size / scale
            return f"{value:.0f} {unit}" if value == int(value) or value >= 100 else f"{value:.1f} {unit}"
    return f"{int(size)} bytes"


def stated(kind: str) -> str:
    """The limits of ``kind`` as a form states them.

    >>> stated("documents").startswith("At most 1 TB once decompressed")
    True
    """
    now = current()
    text = (f"At most {human(now.bytes_for(kind))} once decompressed; a compressed file may expand at most "
            f"{now.max_ratio:.0f} times")
    if kind == "documents":
        text += f"; one document at most {human(now.max_document)}"
    if kind == "runs":
        text += f"; an ir_metadata header at most {human(now.max_metadata)}, without YAML aliases"
    return text + "."

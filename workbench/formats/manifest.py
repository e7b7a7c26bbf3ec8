"""What the run files do not say about their runs: a runs manifest, one line per run giving what the run files do not say (its team, whether it
contributes to the pool, its priority, its type, a description).

CSV or TSV (a tab in the header line makes it TSV), a header row first. Columns: ``tag`` (required),
then any of ``team``, ``contributes``, ``priority``, ``type``, ``description`` in any order. An empty
cell says nothing about that field (the run file's ir_metadata header or the upload's defaults apply).
Problems are ``name:LINE: what``: an unknown or repeated column, no ``tag`` column, a line with too many
cells, an empty or repeated tag, ``contributes`` not a yes/no value, ``priority`` not a whole number >= 1.
:func:`header_fields` reads the same fields (team, type, description) from a run file's ir_metadata header.

>>> import io
>>> rows = read_manifest(io.StringIO("tag,team,priority\\nalpha,uni-a,2\\n"), name="m.csv")
>>> rows["alpha"].team, rows["alpha"].priority, rows["alpha"].contributes, rows["alpha"].line
('uni-a', 2, None, 2)
"""

from __future__ import annotations

import csv
from dataclasses import dataclass

from workbench.formats.errors import Problems
from workbench.formats.sources import Source, display_name, open_text

__all__ = ["COLUMNS", "ManifestEntry", "header_fields", "read_manifest"]

#: the columns a manifest may have, ``tag`` first
COLUMNS = ("tag", "team", "contributes", "priority", "type", "description")

_TRUE = {"yes", "y", "true", "t", "1", "on"}
_FALSE = {"no", "n", "false", "f", "0", "off"}
_LIMITS = {"tag": 200, "team": 200, "type": 32, "description": 2000}


@dataclass(frozen=True)
class ManifestEntry:
    """One run's line; ``None`` where the manifest says nothing."""

    tag: str
    line: int
    team: str | None = None
    contributes: bool | None = None
    priority: int | None = None
    type: str | None = None
    description: str | None = None


def _header(cells: list[str], problems: Problems) -> list[str]:
    names = [cell.strip().lower().lstrip("\ufeff") for cell in cells]
    seen: set[str] = set()
    for name in names:
        if name not in COLUMNS:
            problems.add(1, f"unknown column {name!r} (columns: {', '.join(COLUMNS)})")
        elif name in seen:
            problems.add(1, f"column {name!r} appears twice")
        seen.add(name)
    if "tag" not in names:
        problems.add(1, "no 'tag' column: the header row names the columns, 'tag' first")
    return names


def _value(name: str, raw: str, line: int, problems: Problems):
    text = raw.strip()
    if not text:
        return None
    if name in _LIMITS and len(text) > _LIMITS[name]:
        problems.add(line, f"{name} is longer than {_LIMITS[name]} characters")
        return None
    if name == "contributes":
        lowered = text.lower()
        if lowered in _TRUE | _FALSE:
            return lowered in _TRUE
        problems.add(line, f"contributes {text!r} is not yes or no")
        return None
    if name == "priority":
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value < 1:
            problems.add(line, f"priority {text!r} is not a whole number of 1 or more")
            return None
        return value
    if name == "type":
        if any(ch.isspace() for ch in text):
            problems.add(line, f"type {text!r} is not one word (e.g. automatic, manual)")
            return None
        return text.lower()
    return text


def read_manifest(source: Source, *, name: str | None = None, max_problems: int = 100) -> dict[str, ManifestEntry]:
    """The manifest's lines by tag; raise :class:`~workbench.formats.errors.FormatError` listing every
    problem (``name:LINE: what``)."""
    name = display_name(source, name)
    problems = Problems(name, max_problems)
    entries: dict[str, ManifestEntry] = {}
    with open_text(source, encoding="utf-8-sig") as handle:
        first = handle.readline()
        if not first.strip():
            problems.add(1, "the manifest is empty: a header row (tag,team,contributes,priority,type,"
                            "description) and one line per run")
            problems.raise_if_any()
        if first.startswith("PK\x03\x04") or "\x00" in first or "\ufffd" in first:
            problems.add(1, "not a CSV or TSV text file (a spreadsheet? save it as CSV, UTF-8)")
            problems.raise_if_any()
        delimiter = "\t" if "\t" in first else ","
        header = _header(next(csv.reader([first], delimiter=delimiter)), problems)
        problems.raise_if_any()
        reader = csv.reader(handle, delimiter=delimiter)
        for cells in reader:
            line = reader.line_num + 1
            if not any(cell.strip() for cell in cells):
                continue
            if len(cells) > len(header):
                problems.add(line, f"{len(cells)} cells, the header names {len(header)} columns")
                continue
            # fewer cells than columns: the missing ones say nothing
            values = {column: _value(column, cell, line, problems)
                      for column, cell in zip(header, cells, strict=False)}
            tag = values.pop("tag", None)
            if tag is None:
                problems.add(line, "no run tag")
                continue
            if tag in entries:
                problems.add(line, f"run tag {tag!r} appears twice (first at line {entries[tag].line})")
                continue
            entries[tag] = ManifestEntry(tag=tag, line=line, **values)
    if not entries and not problems:
        problems.add(2, "no runs: one line per run after the header row")
    problems.raise_if_any()
    return entries


def _header_value(header: dict, *paths: tuple[str, ...]):
    """The first of ``paths`` (keys into the ir_metadata mapping) that holds a value."""
    for path in paths:
        value = header
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value not in (None, ""):
            return value
    return None


def header_fields(metadata: dict | None) -> dict:
    """Team, type and description declared by a run file's ir_metadata header (``actor.team``,
    ``method.automatic`` or ``method.type``, ``description`` or ``method.description`` or
    ``research goal.description``)."""
    header = (metadata or {}).get("ir_metadata")
    if not isinstance(header, dict):
        return {}
    found = {}
    team = _header_value(header, ("actor", "team"), ("team",))
    if isinstance(team, str | int) and not isinstance(team, bool):
        found["team"] = str(team)[:200]
    automatic = _header_value(header, ("method", "automatic"))
    kind = _header_value(header, ("method", "type"), ("type",))
    if isinstance(automatic, bool):
        found["run_type"] = "automatic" if automatic else "manual"
    elif isinstance(kind, str) and kind.strip() and not any(c.isspace() for c in kind.strip()):
        found["run_type"] = kind.strip().lower()[:32]
    description = _header_value(header, ("description",), ("method", "description"),
                                ("research goal", "description"))
    if isinstance(description, str):
        found["description"] = description.strip()
    return found

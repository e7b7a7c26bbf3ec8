"""A run file's ir_metadata header (https://www.ir-metadata.org: PRIMAD, as YAML).

In a run file the header is a block of comment lines at the very top, from ``# ir_metadata.start`` to
``# ir_metadata.end``, each line's YAML after its ``#``. Only a file whose first line is
``# ir_metadata.start`` has one: any other line starting with ``#`` is a run line (``#`` is a valid topic
id for trec_eval). The header's lines are blanked, not removed, so every run line keeps its line number
in messages.
"""

from __future__ import annotations

import mmap
import re

from workbench.formats import limits
from workbench.formats.errors import Problems

__all__ = ["split_header"]

_START = re.compile(rb"#[ \t]*ir_metadata\.start[ \t]*\r?(\n|$)")
_END = re.compile(rb"^#[ \t]*ir_metadata\.end[ \t]*\r?$", re.MULTILINE)


def _shape_problem(text: str) -> str | None:
    """Why the header's YAML is refused before it is built: an alias (``*name``, which can multiply a few
    bytes into gigabytes), nesting deeper than the limit, or more nodes than the limit; None if it is fine."""
    import yaml  # 0.1 s at start-up, and only a run with a header needs it (trec_eval starts without)

    bounds = limits.current()
    depth = nodes = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            return "the ir_metadata header uses a YAML alias (*name), which is not accepted: write the value out"
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > bounds.max_metadata_depth:
                return f"the ir_metadata header is nested deeper than {bounds.max_metadata_depth} levels"
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
        if isinstance(event, yaml.NodeEvent):
            nodes += 1
            if nodes > bounds.max_metadata_nodes:
                return f"the ir_metadata header holds more than {bounds.max_metadata_nodes:,} values"
    return None


def _yaml(text_lines: list[str], problems: Problems) -> dict:
    import yaml

    try:
        text = "\n".join(text_lines)
        shape = _shape_problem(text)
        if shape:
            problems.add(2, shape)
            return {}
        found = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = 2 + (mark.line if mark is not None else 0)
        problems.add(line, f"the ir_metadata header is not valid YAML ({getattr(exc, 'problem', None) or exc})")
        return {}
    if not isinstance(found, dict):
        problems.add(2, "the ir_metadata header is not a YAML mapping")
        return {}
    return found


def split_header(data: bytes | mmap.mmap, problems: Problems) -> tuple[bytes | mmap.mmap, dict | None]:
    """(the data with its ir_metadata header blanked, ``{"ir_metadata": {...}}``); ``data`` and None
    without one."""
    if not _START.match(data[:200]):
        return data, None
    largest = limits.current().max_metadata
    end = _END.search(data, 0, largest + 200)
    if end is None or end.start() > largest:
        if end is not None or _END.search(data) is not None:
            problems.add(1, f"the ir_metadata header is larger than {limits.human(largest)}, the most a run's "
                            "header may hold")
        else:
            problems.add(1, "the ir_metadata header has no '# ir_metadata.end' line")
        return data, {}
    newline = data.find(b"\n", end.end())
    stop = len(data) if newline < 0 else newline + 1
    raw = bytes(data[:stop]).decode("utf-8", "replace").splitlines()
    found = _yaml([re.sub(r"^#( |$)?", "", line) for line in raw[1:-1]], problems)
    return b"\n" * len(raw) + bytes(data[stop:]), {"ir_metadata": found}

"""Finding a line again in an input file, for error messages on the slow path only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from workbench.formats import open_text


def first_line_matching(source: str | Path, predicate: Callable[[list[str]], bool]) -> int | str:
    """The 1-based number of the first line whose whitespace-split fields satisfy ``predicate``."""
    if not isinstance(source, str | Path):
        return "?"
    with open_text(source, kind="runs") as handle:
        for number, line in enumerate(handle, start=1):
            if predicate(line.split()):
                return number
    return "?"

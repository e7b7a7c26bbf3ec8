"""CSV and TSV cells a spreadsheet cannot read as formulas, for every export meant for one.

A text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is taken by Excel, LibreOffice
and Google Sheets as a formula (``=HYPERLINK(...)`` in a run tag becomes a live link in the organizer's
export). OWASP's rule: such a cell gets a leading ``'``, which the spreadsheet shows as the text it was. A
number stays exactly as it was, ``-1.5`` whether a float or the text of one. TREC-format files (qrels,
runs, pools, trec_eval's output) are never passed through here: they stay exact. Django-free.

>>> safe_cell('=HYPERLINK("http://x","y")')
'\\'=HYPERLINK("http://x","y")'
>>> safe_cell("-1.5"), safe_cell(-1.5), safe_cell("-rm"), safe_cell("plain")
('-1.5', -1.5, "'-rm", 'plain')
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # a frame's cells need pandas; a CSV writer's (the curves command's) do not: no import for it
    import pandas as pd

__all__ = ["FORMULA_STARTS", "frame_csv", "safe_cell", "safe_frame", "safe_values", "writer"]

#: the first characters that make a spreadsheet read a cell as a formula
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: a number, as text too; a trailing ``*`` marks a significant difference (the significance matrix): no formula
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\*?")


def safe_cell(value: Any) -> Any:
    """``value`` with a leading ``'`` if it is text a spreadsheet would read as a formula; anything else
    (numbers, text of a number such as ``-1.5`` or ``-0.25*``, None) as it is."""
    if not isinstance(value, str) or not value.startswith(FORMULA_STARTS) or _NUMBER.fullmatch(value):
        return value
    return "'" + value


def safe_row(row: Iterable[Any]) -> list[Any]:
    return [safe_cell(value) for value in row]


class _Writer:
    """``csv.writer`` whose every row is made safe first."""

    def __init__(self, inner) -> None:
        self._inner = inner

    def writerow(self, row: Iterable[Any]):
        return self._inner.writerow(safe_row(row))

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def writer(handle, **options) -> _Writer:
    """A ``csv.writer(handle, **options)`` that writes every cell through :func:`safe_cell`."""
    return _Writer(csv.writer(handle, **options))


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` whose text cells and column names are safe; numeric columns untouched."""
    import pandas as pd

    safe = frame.copy()
    for i in range(frame.shape[1]):
        values = frame.iloc[:, i]
        if not pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_datetime64_any_dtype(values):
            safe.isetitem(i, values.map(safe_cell))
    safe.columns = [safe_cell(c) for c in frame.columns]
    return safe


def frame_csv(frame: pd.DataFrame, **options) -> str:
    """``frame.to_csv(**options)`` with its text cells safe (the options as pandas takes them)."""
    return safe_frame(frame).to_csv(**options)


class _SafeValues:
    """A django-tables2 table as ``TableExport`` reads it (``as_values``), every cell made safe."""

    def __init__(self, table) -> None:
        self._table = table

    def as_values(self, exclude_columns=None) -> Iterator[list[Any]]:
        for row in self._table.as_values(exclude_columns=exclude_columns):
            yield safe_row(row)


def safe_values(table) -> _SafeValues:
    """``table`` for a CSV export: ``TableExport("csv", safe_values(table))``."""
    return _SafeValues(table)

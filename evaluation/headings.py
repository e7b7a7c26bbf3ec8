"""Column headings that may wrap at a measure name's ``_`` and ``.`` (``ndcg_cut_condensed_10`` in a narrow
column) instead of widening the table, and leave exports without the hints."""

from __future__ import annotations

import django_tables2 as tables
from django.utils.html import escape, strip_tags
from django.utils.safestring import SafeString, mark_safe

__all__ = ["BreakableHeadings", "breakable"]


def breakable(name: str) -> SafeString:
    """``name`` escaped, with a line-break hint (``<wbr>``) after each ``_`` and ``.``."""
    return mark_safe(escape(name).replace("_", "_<wbr>").replace(".", ".<wbr>"))  # noqa: S308 - escaped first


class BreakableHeadings(tables.Table):
    """A table whose CSV and spreadsheet exports (``as_values``) give the headings as plain text."""

    def as_values(self, exclude_columns=None):
        rows = super().as_values(exclude_columns)
        yield [strip_tags(heading) for heading in next(rows)]
        yield from rows

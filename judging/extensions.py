"""Extension points of judging that a higher app fills in (layers point down: judging never imports evaluation).

The agreement page shows how much the ranking of the runs depends on who judged, which needs the
evaluation engine; evaluation registers that computation here in its ``AppConfig.ready()``.
"""

from __future__ import annotations

from collections.abc import Callable

_ranking_agreement: Callable[[object], list[dict]] | None = None


def register_ranking_agreement(function: Callable[[object], list[dict]]) -> None:
    """``function(collection)`` returns one row per pair of assessors (Kendall's tau of the run rankings)."""
    global _ranking_agreement
    _ranking_agreement = function


def ranking_agreement(collection) -> list[dict]:
    """The registered rows for the collection, or none when no app registered a computation."""
    return _ranking_agreement(collection) if _ranking_agreement is not None else []

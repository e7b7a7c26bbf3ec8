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


_system_scores: Callable[[object, object, list], dict] | None = None


def register_system_scores(function: Callable[[object, object, list], dict]) -> None:
    """``function(collection, qrels_frame, topics)`` returns each run's MAP over ``topics`` under those qrels
    (the machine-agreement page and command compare system rankings with it)."""
    global _system_scores
    _system_scores = function


def system_scores(collection, qrels_frame, topics: list) -> dict:
    """The registered computation's scores, or none when no app registered one."""
    return _system_scores(collection, qrels_frame, topics) if _system_scores is not None else {}

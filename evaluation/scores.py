"""Scores and figures as the pages read them: from the version's stored board where its job wrote one
(:mod:`evaluation.board_files`), the rest computed (:mod:`evaluation.scoring`). Computing never reads a board:
this module is where a stored board and a computation meet."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evaluation import board_files, scoring
from judging.completeness import Completeness
from judging.policies import DEFAULT_POLICY
from workbench.models import Collection

__all__ = ["completeness", "evaluate"]


def evaluate(collection: Collection, requests: Iterable[str] = (), *, policy: str = DEFAULT_POLICY,
             assessor: str | None = None, tags: Sequence[str] | None = None) -> dict[str, scoring.Scores]:
    """:func:`evaluation.scoring.evaluate`, with the base measures read from the version's stored board when
    its job has written it (the requests outside the base set are evaluated in a separate pass)."""
    stored = board_files.current(collection, scoring.normalise_policy(policy)) if assessor is None else None
    return scoring.evaluate(collection, requests, policy=policy, assessor=assessor, tags=tags,
                            stored=None if stored is None else stored.scores)


def completeness(collection: Collection) -> Completeness:
    """:func:`evaluation.scoring.completeness`, as the board job read it at this version when it stored one."""
    stored = board_files.stored_figure(collection, "completeness")
    if stored is None:
        return scoring.completeness(collection)
    return Completeness(complete=stored["complete"], unjudged=stored["unjudged"],
                        partial={q: tuple(v) for q, v in stored["partial"].items()})

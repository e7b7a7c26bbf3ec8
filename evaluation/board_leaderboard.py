"""The leaderboard as the pages read it: from the collection's stored board (:mod:`evaluation.board_files`),
no database read and no ranking; while the board job the last change asked for runs, the newest older board
marked "updating" or a page saying the scores are being computed. A read never asks for a board.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from evaluation import board_files, cache, scoring
from evaluation.leaderboard import Leaderboard, assemble
from evaluation.measures import DEFAULT_MEASURES, ROBUST_MEASURES
from evaluation.scoring import EvaluationError
from workbench.models import Collection

__all__ = ["BoardState", "board_covers", "from_board", "stored_leaderboard"]


def from_board(stored, *, measures: Sequence[str] | None = None, tags: Sequence[str] | None = None,
               judged_threshold: float = 0.8, test: str = "t", correction: str = "holm", alpha: float = 0.05
               ) -> Leaderboard:
    """The leaderboard of a stored board (:mod:`evaluation.board`): no database read, no ranking. The
    measures must be among the board's (:func:`board_covers`)."""
    requests = list(measures) if measures else list(DEFAULT_MEASURES)
    names = scoring.measure_names(requests)
    meta = stored.meta
    key = ("board", stored.version, stored.policy, tuple(requests), None if tags is None else tuple(tags),
           float(judged_threshold), test, correction, alpha)

    def compute() -> Leaderboard:
        scores = stored.scores if tags is None else {t: stored.scores[t] for t in tags}
        board = assemble(scores, names, infap=meta.get("infap"), teams=meta["teams"],
                          contributed=meta["contributed"], pool_depth=meta.get("pool_depth"),
                          pool_text=meta.get("pool_text"), n_qrels=meta["n_qrels"], slug=meta["slug"],
                          policy_text=stored.policy, threshold=judged_threshold, test=test,
                          correction=correction, alpha=alpha)
        return replace(board, board_version=stored.version)

    return cache.cached(key, compute)


@dataclass(frozen=True)
class BoardState:
    """Where a page's leaderboard comes from: ``current`` (the version's board), ``updating`` (an older
    board while the job computes the current one), ``computing`` (no board yet: nothing to show), or
    ``""`` (a choice no board holds, such as one assessor's qrels: evaluated in the request)."""

    status: str
    job: object | None = None


def stored_leaderboard(collection: Collection, *, measures: Sequence[str] | None = None,
                       qrels_policy: str = "adjudicated", assessor: str | None = None, test: str = "t",
                       correction: str = "holm", alpha: float = 0.05) -> tuple[Leaderboard | None, BoardState]:
    """The leaderboard read from the collection's stored board. A read never asks for a board: the service that
    changed the collection did (:func:`evaluation.tasks.request_board`). While the job it queued runs, the
    newest older board (``updating``) or nothing (``computing``); ``(None, BoardState(""))`` when no board
    holds the choice and no job computes it (evaluated in the request), and :class:`EvaluationError` when
    the version's board job found nothing to evaluate."""
    if assessor is not None:
        return None, BoardState("")
    policy = scoring.normalise_policy(qrels_policy)
    options = {"measures": measures, "test": test, "correction": correction, "alpha": alpha}
    with cache.one_version():
        stored = board_files.current(collection, policy)
        if stored is None:
            return _waiting(collection, policy, measures, options)
    if not board_covers(measures, stored):
        return None, BoardState("")
    return from_board(stored, **options), BoardState("current")


def _waiting(collection: Collection, policy: str, measures, options: dict) -> tuple[Leaderboard | None, BoardState]:
    """No board of the current version: the job computing it and the board to show meanwhile, if any."""
    refused = board_files.refusal(board_files.last_job(collection), collection, policy)
    if refused:
        raise EvaluationError(refused)
    job = board_files.pending_job(collection)
    if job is None or policy not in job.params.get("policies", []):
        return None, BoardState("")
    previous = board_files.latest(collection, policy)
    if previous is None or not board_covers(measures, previous):
        return None, BoardState("computing", job)
    return from_board(previous, **options), BoardState("updating", job)


def board_covers(requests: Sequence[str] | None, stored) -> bool:
    """Whether a board's measures include every value ``requests`` asks for (and the robust ones)."""
    wanted = set(scoring.measure_names([*(requests or DEFAULT_MEASURES), *ROBUST_MEASURES]))
    return wanted <= set(scoring.measure_names(stored.requests))

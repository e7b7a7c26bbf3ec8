"""The board job (:mod:`evaluation.board`) split by topic (``workbench.subjobs``), as the evaluation report is
(:mod:`evaluation.report_topics`, whose parts and join this reuses).

Each policy whose board is not stored yet is split into the same slices of the judged topics
(:func:`~evaluation.report_topics.topic_sections`); part i reads only its topics' lines of every run and its
topics' qrels, and keeps every run's per-topic values of the base measures and, for each run (team) left out,
its runs' values without its unique judgments there (:func:`~evaluation.report_topics.topic_part`: a board is
the report's leaderboard passes with no measure asked for). One more part reads what the board's meta holds
besides the scores (completeness, judged figures, assessors, infAP of a sampled pool): the same for every
topic, read once while the topic parts score. The join puts the values end to end and summarises them
(:func:`~evaluation.report_topics.topic_scores`) and stores the board and its extras as one worker does
(:func:`evaluation.board.store`), the leave-one-out from the parts. A part computed at another version of the
collection than the join's (a judgment saved meanwhile), or a policy whose board got stored meanwhile, is
built by the join as one worker builds it: a board is never made of two versions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evaluation import board, board_store, cache, scoring, snapshot
from evaluation.report_topics import part_version, topic_part, topic_scores, topic_sections
from evaluation.scoring import EvaluationError
from workbench.models import Collection

__all__ = ["board_sections", "board_part", "build_joined"]

#: the part reading the meta's figures (params ``{"figures": [policies]}``)
FIGURES = "figures"


def _wanted(collection: Collection, policy: str, key: str) -> bool:
    """Whether the policy's board is worth splitting: a valid policy whose board (or extras) is not stored on
    this disk. With files in a bucket the planner does not wait on it (a planner hanging on storage before its
    job runs is taken for a dead worker): the parts look (:func:`board_part`)."""
    try:
        scoring.normalise_policy(policy)
    except EvaluationError:
        return False
    if board_store.shared():
        return True
    return not board_store.stored(board.board_name(collection.pk, key, policy))


def board_sections(collection: Collection, policies: list[str], *, shares: int) -> list[dict]:
    """The parts of a board job: every policy to split, in slices of the judged topics, and the figures'
    part; none (one worker) when no policy needs it, or there is one slice (one judged topic, or none) or no run."""
    with cache.one_version():
        key = board.version_key(cache.version(collection))
        split = [p for p in dict.fromkeys(policies) if _wanted(collection, p, key)]
        if not split or not collection.runs.exists():
            return []
        sections = topic_sections(collection, shares=shares)
    if len(sections) < 2:
        return []
    return [*({"policy": p, **section} for p in split for section in sections), {FIGURES: split}]


def board_part(collection: Collection, params: dict) -> bytes | dict:
    """One part's output: the figures (JSON), or its topics' values under its policy (nothing when the
    policy's board is stored: the join reads it)."""
    with cache.one_version():
        if FIGURES in params:
            return {"version": board.version_key(cache.version(collection)), **_figures(collection, params[FIGURES])}
        key = board.version_key(cache.version(collection))
        if board_store.stored(board.board_name(collection.pk, key, params["policy"])):
            return b""
        return topic_part(collection, params, policy=params["policy"])


def _figures(collection: Collection, policies: list[str]) -> dict:
    figures = board.shared_figures(collection, [])
    figures["infap"] = {}
    for policy in policies:
        try:
            figures["infap"][policy] = board.infap_figures(collection, policy)
        except EvaluationError:  # no qrels under it: the join says so, as one worker does
            pass
    return figures


def build_joined(collection: Collection, policy: str, outputs: list[bytes], figures: dict, *,
                 step: Callable[[str], None] = lambda text: None) -> Path:
    """The board of ``policy`` from its parts' outputs (in order) and the figures' part: what
    :func:`evaluation.board.build` stores, or that function's work when the parts cannot give it."""
    with cache.one_version():
        snap = snapshot.snapshot(collection)
        key = board.version_key(snap.version)
        name = board.board_name(collection.pk, key, policy)
        if (board_store.stored(name) or figures.get("version") != key or policy not in figures["infap"]
                or any(not data or part_version(data) != key for data in outputs)):
            return board.build(collection, policy, step=step)
        step(f"joining the parts' scores of {len(snap.teams)} runs ({policy})")
        scores, n_qrels, loo = topic_scores(collection, outputs, policy=policy)
        meta = board.board_meta(collection, snap, policy, n_qrels, figures)
        found = {("map", by): loo[by] for by in loo}
        return board.store(collection, policy, scores, meta, step, loo=found if found else None)

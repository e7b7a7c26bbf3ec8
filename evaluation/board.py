"""The board: one evaluation of a collection version, computed once by a background job and stored for every
page and every web worker to read (the files: :mod:`evaluation.board_files`, whose names this module gives too).

The job (:func:`evaluation.tasks.build_board`) computes the base measures of every run
(:func:`evaluation.scoring.evaluate`, no board read), infAP/xinfAP/infNDCG where the pool was sampled, and what
a leaderboard needs besides, stores them (:func:`store`) and then the extras the other pages read
(:mod:`evaluation.board_extras`). The service that changed the collection asks for the job once its write is
committed (:func:`evaluation.tasks.request_board`); a page reads the board of the current version and, until it
is written, shows the newest older board marked "updating" (:func:`evaluation.board_files.latest`), or a page
saying it is being computed. Loading a board costs the same whatever the number of runs' lines: a web worker
never ranks runs for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from evaluation import board_extras, board_store, cache, judged, scoring, snapshot
from evaluation.board_files import (  # noqa: F401  (the stored boards, under the names pages and tests use)
    KEEP,
    KIND,
    Board,
    _policy_file,
    any_stored,
    board_dir,
    board_name,
    current,
    known_policies,
    last_job,
    latest,
    pending_job,
    read,
    refusal,
    stored_figure,
    version_key,
    write,
)
from evaluation.engine.evaluator import EvalResult
from evaluation.inferred import xinfap_scores
from judging.qrels import assessor_names
from workbench.models import Collection

__all__ = ["KIND", "Board", "board_dir", "board_name", "board_meta", "build", "current", "infap_figures", "latest",
           "pending_job", "shared_figures", "store", "version_key"]


def build(collection: Collection, policy: str, *, step: Callable[[str], None] = lambda text: None) -> Path:
    """Compute and store the board of the collection's current version under ``policy``; its file on this
    machine's disk (:func:`evaluation.board_store.local`)."""
    with cache.one_version():
        snap = snapshot.snapshot(collection)
        key = version_key(snap.version)
        name = board_name(collection.pk, key, policy)
        if board_store.stored(name):
            _build_extras(collection, policy, key, step)
            return board_store.local(name)
        step(f"ranking and scoring {len(snap.teams)} runs ({policy})")
        scores = scoring.evaluate(collection, policy=policy)
        step("the robust measures of a sampled pool")
        n_qrels = int(scoring.qrels_frame(collection, policy=policy)["qid"].nunique())
        meta = board_meta(collection, snap, policy, n_qrels, shared_figures(collection, [policy]))
        return store(collection, policy, scores, meta, step)


def shared_figures(collection: Collection, policies: list[str]) -> dict:
    """What a board's meta holds that is not its runs' scores (the same for every policy but infAP, by
    policy), as JSON; a split board job reads them in its parts (:mod:`evaluation.board_topics`)."""
    return {"infap": {policy: infap_figures(collection, policy) for policy in policies},
            "assessors": assessor_names(collection),
            "completeness": dataclasses.asdict(scoring.completeness(collection)),
            "judged_figures": dataclasses.asdict(judged.main_pool_figures(collection))}


def infap_figures(collection: Collection, policy: str) -> dict | None:
    infap = scoring.infap_scores(collection, policy=policy)
    if infap is not None:
        inferred = xinfap_scores(collection, policy=policy)
        infap = {tag: {"infAP": value, **inferred.get(tag, {})} for tag, value in infap.items()}
    return infap


def board_meta(collection: Collection, snap, policy: str, n_qrels: int, figures: dict) -> dict:
    """The board's meta (:func:`shared_figures` computed here or by a part)."""
    pool = snap.main_pool
    return {"version": version_key(snap.version), "policy": policy, "slug": snap.slug,
            "relevant_from": snap.relevant_from, "requests": list(scoring.base_requests(snap)), "teams": snap.teams,
            "contributed": snap.contributed, "pool_depth": None if pool is None else pool.depth,
            "pool_text": None if pool is None else f"{pool.name} ({pool.strategy}"
            + (f", depth {pool.depth})" if pool.depth else ")"),
            "n_qrels": n_qrels, "infap": figures["infap"][policy], "assessors": figures["assessors"],
            "completeness": figures["completeness"], "judged_figures": figures["judged_figures"]}


def store(collection: Collection, policy: str, scores: dict[str, EvalResult], meta: dict,
          step: Callable[[str], None], loo: dict | None = None, tables: dict | None = None) -> Path:
    """Write the board, prune the older ones, then the extras (with ``loo``: the leave-one-out by (measure,
    by), and ``tables``: extras by name, computed already)."""
    name = board_name(collection.pk, meta["version"], policy)
    step(f"writing the board of {len(scores)} runs")
    path = write(name, scores, meta)
    _prune(collection.pk, name, policy)
    _build_extras(collection, policy, meta["version"], step, loo, tables)
    return path


def _build_extras(collection: Collection, policy: str, key: str, step: Callable[[str], None],
                  loo: dict | None = None, tables: dict | None = None) -> None:
    """What the other results pages read (:mod:`evaluation.board_extras`), after the board (the leaderboard
    shows as soon as the board is written), unless a job stored them already."""
    if not board_store.stored(board_extras.extra_name(collection.pk, key, policy, board_extras.LAST_EXTRA)):
        board_extras.build_extras(collection, policy, key, step=step, loo=loo, tables=tables)


def _prune(collection_pk: int, newest: str, policy: str) -> None:
    """Keep the newest board and ``KEEP`` older ones of the policy."""
    older = [name for name, _ in board_store.listing(str(collection_pk), f".{_policy_file(policy)}.parquet")
             if name != newest]
    for name in older[KEEP:]:
        board_store.delete(name)
    kept = {name.rsplit("/", 1)[1].split(".", 1)[0] for name in [newest, *older[:KEEP]]}
    board_extras.prune(collection_pk, kept, policy)

"""The board job (:mod:`evaluation.board`) split into parts any worker claims (``workbench.jobs.subjobs``), by topic as
the evaluation report is (:mod:`evaluation.report_topics`, whose parts and join this reuses).

Each policy whose board is not stored yet is split into the same slices of the judged topics
(:func:`~evaluation.report_topics.topic_sections`); part i reads only its topics' lines of every run and its
topics' qrels, and keeps every run's per-topic values of the base measures and, for each run (team) left out,
its runs' values without its unique judgments there (:func:`~evaluation.report_topics.topic_part`: a board is
the report's leaderboard passes with no measure asked for). The first policy's parts also read how much of a
slice of every topic is judged (completeness, judged figures: per topic, added up by the join), and each part
its topics' rows of every run's mean curves (the join takes their means: the curves are those of one ranking).
Two more parts per policy compute the extras read from the qrels and the runs alone (the qrels and topics; the
recall estimates: :data:`evaluation.board_extras.ALONE`; and a third the curves where grades are mapped to gains),
sent as Arrow streams of the tables one worker stores, and one part the assessors and infAP. The join puts the
values end to end and summarises them
(:func:`~evaluation.report_topics.topic_scores`) and stores the board and its extras in one worker's order
(:func:`evaluation.board.store`; it computes only ``run_recall``, which reads the board). A part computed at
another version of the collection than the join's (a judgment saved meanwhile), or a policy whose board got
stored meanwhile, is built by the join as one worker builds it: a board is never made of two versions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyarrow as pa

from evaluation import board, board_extras, board_store, cache, judged, scoring, snapshot
from evaluation.engine.curve_batch import curves_of
from evaluation.report_topics import (
    _packed,
    _unpacked,
    part_meta,
    topic_part,
    topic_rows,
    topic_scores,
    topic_sections,
)
from evaluation.scoring import EvaluationError
from judging.completeness import Completeness, joined_completeness, topic_completeness
from judging.qrels import assessor_names
from workbench.models import Collection

__all__ = ["board_part", "board_sections", "build_joined", "joined_figures"]

#: the part reading the meta's figures (params ``{"figures": [policies]}``)
FIGURES = "figures"
#: a part computing extras read from the qrels and the runs alone (params ``{"policy": ..., "extras": [names]}``)
EXTRAS = "extras"
#: those extras (:data:`evaluation.board_extras.ALONE`) in parts, of about the same time (at 1,000 runs: topics
#: 8 s, recall 11 s; the qrels are read once per worker); the topic parts give the curves' rows (they rank
#: every document of their topics: :func:`~evaluation.report_topics.topic_part`), but where the grades are mapped
#: to gains (the measures' ranking is not the curves'): then a part of their own ranks every document of every run
EXTRA_PARTS = (["qrels", "topics"], ["recall"])
CURVES_PART = ["curves"]


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
    """The parts of a board job: every policy to split, in slices of the judged topics (the first policy's
    parts read the figures of a slice of every topic too), and the part of the figures read once; none (one
    worker) when no policy needs it, or there is one slice (one judged topic, or none) or no run."""
    with cache.one_version():
        key = board.version_key(cache.version(collection))
        split = [p for p in dict.fromkeys(policies) if _wanted(collection, p, key)]
        if not split or not collection.runs.exists():
            return []
        sections = topic_sections(collection, shares=shares)
    if len(sections) < 2:
        return []
    every = sorted(collection.topics.values_list("qid", flat=True))
    figures = [every[i * len(every) // len(sections):(i + 1) * len(every) // len(sections)]
               for i in range(len(sections))]
    curves = collection.grade_gains is None  # the topic parts' ranking is the curves' own
    extras = EXTRA_PARTS if curves else (*EXTRA_PARTS, CURVES_PART)
    return [*({"policy": p, **section, **({"figure_topics": figures[i]} if p == split[0] else {}),
               **({"curves": True} if curves else {})} for p in split for i, section in enumerate(sections)),
            *({"policy": p, EXTRAS: names} for p in split for names in extras), {FIGURES: split}]


def board_part(collection: Collection, params: dict) -> bytes | dict:
    """One part's output: the figures read once (JSON), or its topics' values under its policy, with the
    figures of its slice of every topic (JSON when the policy's board is stored: the join reads it)."""
    with cache.one_version():
        key = board.version_key(cache.version(collection))
        if FIGURES in params:
            wanted = [p for p in params[FIGURES] if not board_store.stored(board.board_name(collection.pk, key, p))]
            return {"version": key, **(_figures(collection, wanted) if wanted else {"infap": {}})}
        if EXTRAS in params:
            return _extras(collection, params["policy"], params[EXTRAS], key)
        figures = _slice_figures(collection, params["figure_topics"]) if "figure_topics" in params else None
        if board_store.stored(board.board_name(collection.pk, key, params["policy"])):
            return {"version": key, "figures": figures}
        _whole_qrels(collection, params["policy"])
        return topic_part(collection, params, policy=params["policy"], extra={"figures": figures},
                          curves=params.get("curves", False))


def _whole_qrels(collection: Collection, policy: str) -> None:
    """Read the policy's whole qrels into this process's cache of the version: the part takes its topics'
    lines from them (``scoring.prepared_qrels``) and the extras' parts this worker claims next read them whole
    (one read per worker, not one per part: 5 s each for 1.8 million judgments)."""
    try:
        scoring.qrels_frame(collection, policy=policy)
    except EvaluationError:  # nothing to evaluate against: the part says so as it would have
        pass


def _extras(collection: Collection, policy: str, names: list[str], key: str) -> bytes | dict:
    """The extras ``names`` as Arrow streams, exactly the tables one worker stores (nothing when the policy's
    board is stored, or it has no qrels: the join does what one worker does)."""
    if board_store.stored(board.board_name(collection.pk, key, policy)):
        return {"version": key}
    try:
        tables = {name: board_extras.computed_extra(collection, policy, name) for name in names}
    except EvaluationError:
        return {"version": key}
    arrays = {}
    for name, table in tables.items():
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_table(table)
        arrays[name] = np.frombuffer(sink.getvalue().to_pybytes(), dtype=np.uint8)
    return _packed({"version": key, "extras": names}, arrays)


def extra_tables(outputs: list, key: str) -> dict:
    """The extras the parts computed at version ``key``, by name (none of a part computed at another)."""
    tables = {}
    for data in outputs:
        if not isinstance(data, bytes):
            continue
        meta, arrays = _unpacked(data)
        if meta["version"] != key:
            continue
        for name in meta["extras"]:
            tables[name] = pa.ipc.open_stream(pa.py_buffer(arrays[name].tobytes())).read_all()
    return tables


def _figures(collection: Collection, policies: list[str]) -> dict:
    """What the meta holds but the scores and the figures read by topic: the assessors, infAP by policy."""
    found: dict = {"assessors": assessor_names(collection), "infap": {}}
    for policy in policies:
        try:
            found["infap"][policy] = board.infap_figures(collection, policy)
        except EvaluationError:  # no qrels under it: the join says so, as one worker does
            pass
    return found


def _slice_figures(collection: Collection, topics: list[str]) -> dict:
    counts = scoring.judged_counts(collection, scoring.completeness_pools(collection), topics)
    return {"completeness": dataclasses.asdict(topic_completeness(collection, topics, counts=counts)),
            "judged_figures": dataclasses.asdict(judged.main_pool_figures(collection, topics))}


def joined_figures(figures: dict, outputs: list[bytes | dict]) -> dict:
    """The figures of the board's meta (:func:`evaluation.board.shared_figures`) from the figures' part and
    the slices the parts read; ``{}`` when a part was computed at another version or a slice is missing."""
    key, slices = figures.get("version"), []
    for data in outputs:
        meta = part_meta(data) if isinstance(data, bytes) else data
        if meta.get("version") != key:
            return {}
        found = meta["extra"].get("figures") if isinstance(data, bytes) else meta.get("figures")
        if found is not None:
            slices.append(found)
    if "assessors" not in figures or not slices:
        return {}
    return {**figures,
            "completeness": dataclasses.asdict(joined_completeness([Completeness(**f["completeness"])
                                                                   for f in slices])),
            "judged_figures": dataclasses.asdict(judged.joined_figures([judged.JudgedFigures(**f["judged_figures"])
                                                                       for f in slices]))}


def build_joined(collection: Collection, policy: str, outputs: list[bytes | dict], figures: dict, *,
                 extras: list | None = None, step: Callable[[str], None] = lambda text: None) -> Path:
    """The board of ``policy`` from its parts' outputs (in order) and the figures (:func:`joined_figures`):
    what :func:`evaluation.board.build` stores, or that function's work when the parts cannot give it."""
    with cache.one_version():
        snap = snapshot.snapshot(collection)
        key = board.version_key(snap.version)
        name = board.board_name(collection.pk, key, policy)
        if (board_store.stored(name) or figures.get("version") != key or policy not in figures["infap"]
                or any(not isinstance(data, bytes) or part_meta(data)["version"] != key for data in outputs)):
            return board.build(collection, policy, step=step)
        step(f"joining the parts' scores of {len(snap.teams)} runs ({policy})")
        scores, n_qrels, loo = topic_scores(collection, outputs, policy=policy)
        meta = board.board_meta(collection, snap, policy, n_qrels, figures)
        found = {("map", by): loo[by] for by in loo}
        tables = extra_tables(extras or [], key)
        rows = None if "curves" in tables else topic_rows(outputs)
        if rows is not None:  # else computed by the join, as one worker does
            tags, joined = rows
            tables["curves"] = board_extras.extra_table(board_extras.curves_frame(
                [(tags[run], kinds) for run, kinds in curves_of(joined).items()]))
        return board.store(collection, policy, scores, meta, step, loo=found if found else None, tables=tables)

"""The evaluation report (:mod:`evaluation.report`) as a job split by topic (``workbench.jobs.subjobs``).

trec_eval's measures are per topic, then summarised over the topics, and so is leave-one-out: a unit's
unique judgments change only its runs' values on the topics where they are. Part i of k takes the i-th of k
contiguous slices of the qrels' topics (their order: the engine's), reads only those topics' lines of every
run, ranks them and keeps every run's per-topic values for every engine pass the leaderboard makes, and, for
each run (team) left out, its runs' values without its unique judgments on those topics. The join puts each
run's values end to end in topic order and summarises them as the engine does (:meth:`Evaluator.joined`),
then computes the leaderboard, its statistics and the leave-one-out tables from them: the files are those
of one worker's report, byte for byte (the per-topic values are the same numbers, added in the same order).
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence

import numpy as np
import pandas as pd
from django.db.models import Exists, OuterRef

from evaluation import cache, scoring, snapshot
from evaluation.board_files import version_key
from evaluation.engine import Evaluator
from evaluation.engine.curve_batch import TopicCurves, topic_curves
from evaluation.engine.evaluator import joined
from evaluation.engine.ranking import rank_runs
from evaluation.leaderboard import leaderboard_of
from evaluation.measures import DEFAULT_MEASURES, ROBUST_MEASURES
from evaluation.reusability import (
    _check,
    _from_rows,
    _owned,
    _Rescoring,
    contribution_slice,
    judgments_of,
    unique_owner,
)
from judging.models import Judgment
from workbench.collections.selectors import run_frames
from workbench.formats import spreadsheet
from workbench.models import Collection

__all__ = ["part_meta", "topic_joined", "topic_part", "topic_rows", "topic_scores", "topic_sections"]

BY = ("run", "team")


def topic_sections(collection: Collection, *, shares: int) -> list[dict]:
    """The parts: ``shares`` contiguous slices of the judged topics, in the engine's (byte) order; fewer when
    there are fewer topics. Nothing is read but which topics have judgments: each part reads its qrels."""
    judged = Judgment.objects.filter(collection=collection, topic=OuterRef("pk"))  # a probe of an index per topic
    topics = sorted(collection.topics.filter(Exists(judged)).values_list("qid", flat=True))
    shares = max(1, min(shares, len(topics)))
    return [{"topics": topics[i * len(topics) // shares:(i + 1) * len(topics) // shares]} for i in range(shares)]


def _requests(measures: Sequence[str] | None) -> list[str]:
    return [*(list(measures) if measures else DEFAULT_MEASURES), *ROBUST_MEASURES]


def _passes(snap, measures, loo_measure: str) -> tuple[list, list, list]:
    """Every engine pass a part makes, and (indices into them) the leaderboard's and leave-one-out's."""
    board, loo = scoring.passes(snap, _requests(measures)), scoring.passes(snap, [loo_measure])
    every = list(dict.fromkeys([*board, *loo]))
    return every, [every.index(b) for b in board], [every.index(b) for b in loo]


@cache.reads  # one version of the collection, read once (each reading counts the pool's entries)
def topic_part(collection: Collection, section: dict, *, measures: Sequence[str] | None = None,
               policy: str = "adjudicated", loo_measure: str = "map", extra: dict | None = None,
               curves: bool = False) -> bytes:
    """One part's output: its topics' values of every run, and of each unit's runs left out (and ``extra``,
    JSON for the join: :func:`part_meta`); with ``curves`` (qrels whose grades are not mapped to gains), the
    runs' rows of the mean curves on its topics too (:func:`topic_curves`)."""
    snap, policy = snapshot.snapshot(collection), scoring.normalise_policy(policy)
    topics = list(section["topics"])
    prepared = scoring.prepared_qrels(collection, policy=policy, topics=topics)
    runs = run_frames(collection, topics=topics if prepared is None else prepared.topics)
    order = list(runs)
    ranking, rows = _ranked(prepared, [runs.pop(t) for t in order], curves=curves, level=snap.relevant_from)
    meta: dict = {"order": order, "topics": 0 if prepared is None else len(prepared.topics), "passes": [], "loo": {},
                  "version": version_key(snap.version), "extra": extra or {}, "curves": rows is not None}
    arrays: dict[str, np.ndarray] = {} if rows is None else {f"curves/{k}": v for k, v in rows.arrays().items()}
    for p, batch in enumerate(_passes(snap, measures, loo_measure)[0]):
        meta["passes"].append(_scored(snap, prepared, ranking, order, batch, p, arrays))
    if collection.runs.filter(contributes=True).exists():
        here, tags, source = contribution_slice(collection, topics)
        judged = None if prepared is None or not len(here) else judgments_of(here, prepared)  # once for both
        for by in BY:
            meta["loo"][by], arrays[f"loo/{by}"] = _loo_slice(collection, snap, prepared, ranking, order, loo_measure,
                                                              by, tags, (here, judged), source)
    return _packed(meta, arrays)


def _ranked(prepared, runs: list, *, curves: bool, level: int) -> tuple[object, TopicCurves | None]:
    """The runs ranked for the measures (``-M``), and with ``curves`` the rows of their curves: from one ranking
    of every document (the curves' own), cut. A judged document retrieved twice below the cut (the curves
    refuse it) leaves the curves to the join, which computes them as one worker does."""
    if prepared is None:  # no topic of the part judged: no row
        return None, TopicCurves.empty() if curves else None
    if curves:
        try:
            every = rank_runs(prepared, runs)
        except ValueError:
            pass
        else:
            return every.head(scoring.MAX_DEPTH), topic_curves(every, prepared, level)
    return rank_runs(prepared, runs, max_depth=scoring.MAX_DEPTH), None


def topic_rows(outputs: list[bytes]) -> tuple[list[str], TopicCurves] | None:
    """The runs (tags, in order) and their curves' rows on every topic from the parts' ``outputs`` (in topic
    order), or None if a part has none (computed without, or by an earlier version)."""
    parts, order = [], None
    for data in outputs:
        meta, arrays = _unpacked(data)
        if not meta.get("curves") or order not in (None, meta["order"]):
            return None
        order = meta["order"]
        parts.append(TopicCurves(**{name: arrays[f"curves/{name}"] for name in TopicCurves.__dataclass_fields__}))
    return (order, TopicCurves.joined(parts)) if parts else None


def _scored(snap, prepared, ranking, order: list[str], batch, p: int, arrays: dict) -> dict:
    """Every run's values on the part's topics in engine pass ``p`` (into ``arrays``), and their topics."""
    if prepared is None:  # none of its topics has a qrels line: no topic to score
        return {"qids": [[] for _ in order], "names": []}
    evaluator = Evaluator(prepared, list(batch), relevance_level=snap.relevant_from, max_depth=scoring.MAX_DEPTH)
    found = evaluator.topic_values(ranking, dict(enumerate(order)))
    names = list(found[order[0]][1]) if order else []
    for name in names:
        arrays[f"{p}/{name}"] = np.concatenate([found[t][1][name] for t in order])
    return {"qids": [found[t][0] for t in order], "names": names}


def _loo_slice(collection, snap, prepared, ranking, order, measure, by, tags, provenance, source
               ) -> tuple[dict, np.ndarray]:
    """Each unit's unique judgments on the part's topics (counted) and its runs' values without them there."""
    name = _check(measure, by)
    rescoring = None if prepared is None else _Rescoring(prepared=prepared, ranking=ranking, run_index={t: i for i, t in enumerate(order)},
                           run_bounds=np.searchsorted(ranking.seg_run, np.arange(len(order) + 1)),
                           request=scoring.batches([measure])[0], relevant_from=snap.relevant_from, full={},
                           name=name)
    unit_of = {t: (t if by == "run" else snap.team_of(t)) for t in tags}
    units = sorted(set(unit_of.values()))
    unit_code = {u: i for i, u in enumerate(units)}
    found = {"units": units, "source": source, "judged": [0] * len(units), "relevant": [0] * len(units), "entries": []}
    if prepared is None:
        return found, np.zeros(0)
    here, judged = provenance
    tag_code, tag_names = pd.factorize(here["tag"])
    owner = unique_owner(here, prepared, [unit_code[unit_of[t]] for t in tag_names], tag_code, judged)
    relevant = collection.is_relevant(prepared.grades)
    values = []
    for u, (unit, mine) in enumerate(zip(units, _owned(owner, len(units)), strict=True)):
        found["judged"][u], found["relevant"][u] = int(mine.size), int(relevant[mine].sum())
        for tag, (qids, loo) in rescoring.values_without(_unit_runs(snap, by, unit), mine).items():
            found["entries"].append([u, tag, list(qids)])
            values.append(np.asarray(loo, dtype=np.float64))
    return found, np.concatenate(values) if values else np.zeros(0)


def _unit_runs(snap, by: str, unit: str) -> list[str]:
    return [unit] if by == "run" else [t for t in snap.tags if snap.team_of(t) == unit]


def _packed(meta: dict, arrays: dict[str, np.ndarray]) -> bytes:
    """JSON and arrays in one ``.npz`` (no pickles: a part's output may come from another machine)."""
    out = io.BytesIO()
    np.savez(out, __meta__=np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8), **arrays)
    return out.getvalue()


def _unpacked(data: bytes) -> tuple[dict, dict]:
    with np.load(io.BytesIO(data), allow_pickle=False) as found:
        arrays = {k: found[k] for k in found.files}
    return json.loads(arrays.pop("__meta__").tobytes()), arrays


def _slices(meta: dict, arrays: dict, p: int) -> dict[str, tuple[list, dict]]:
    """One part's (qids, values) of each run in pass ``p``."""
    found = meta["passes"][p]
    sizes = [len(q) for q in found["qids"]]
    bounds = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    columns = {name: arrays[f"{p}/{name}"] for name in found["names"]}
    return {tag: (found["qids"][r], {n: v[bounds[r]:bounds[r + 1]] for n, v in columns.items()})
            for r, tag in enumerate(meta["order"])}


def topic_joined(collection: Collection, outputs: list[bytes], *, measures: Sequence[str] | None = None,
                 policy: str = "adjudicated", loo_measure: str = "map") -> tuple[object, dict[str, str]]:
    """The leaderboard and the leave-one-out tables (CSV by ``by``) from the parts' outputs, in order."""
    scores, n_qrels, loo = topic_scores(collection, outputs, measures=measures, policy=policy, loo_measure=loo_measure)
    board = leaderboard_of(collection, scores, measures=measures, qrels_policy=scoring.normalise_policy(policy),
                           n_qrels=n_qrels)
    return board, {by: spreadsheet.frame_csv(found.table, index=False) for by, found in loo.items()}


def topic_scores(collection: Collection, outputs: list[bytes], *, measures: Sequence[str] | None = None,
                 policy: str = "adjudicated", loo_measure: str = "map") -> tuple[dict, int, dict]:
    """From the parts' outputs, in order: every run's scores of the leaderboard's passes (what
    :func:`evaluation.scoring.evaluate` gives one worker; with no ``measures``, the base measures: the
    board's), the number of qrels topics, and the leave-one-out (:class:`LeaveOneOut`) by ``by``."""
    snap, policy = snapshot.snapshot(collection), scoring.normalise_policy(policy)
    parts = [_unpacked(data) for data in outputs]
    every, board_passes, loo_passes = _passes(snap, measures, loo_measure)
    if not sum(meta["topics"] for meta, _ in parts):  # what one worker says
        scoring.qrels_frame(collection, policy=policy)
    results = []
    for p, batch in enumerate(every):
        slices = [_slices(meta, arrays, p) for meta, arrays in parts]
        results.append({tag: joined(batch, [s[tag] for s in slices], tag) for tag in parts[0][0]["order"]})
    scores = scoring.combine([results[p] for p in board_passes], snap.tags)
    loo = {}
    if parts[0][0]["loo"]:
        full = scoring.combine([results[p] for p in loo_passes], snap.tags)
        loo = {by: _loo_joined(snap, _check(loo_measure, by), by, parts, full) for by in BY}
    return scores, sum(meta["topics"] for meta, _ in parts), loo


def part_meta(output: bytes) -> dict:
    """A part's ``version`` (:func:`evaluation.board_files.version_key`: the collection's when it was computed) and
    ``extra`` (what :func:`topic_part` was given)."""
    meta = _unpacked(output)[0]
    return {"version": meta.get("version", ""), "extra": meta.get("extra", {})}


def _loo_joined(snap, name: str, by: str, parts: list, full: dict):
    """The leave-one-out of :func:`evaluation.reusability.leave_one_out`, from the parts' slices."""
    first = parts[0][0]["loo"][by]
    units = first["units"]
    values: list[dict[str, tuple[list, list]]] = [{} for _ in units]
    for meta, arrays in parts:
        found, offset = meta["loo"][by], 0
        for u, tag, qids in found["entries"]:
            mine = values[u].setdefault(tag, ([], []))
            mine[0].extend(qids)
            mine[1].append(arrays[f"loo/{by}"][offset:offset + len(qids)])
            offset += len(qids)
    totals = {t: (float(np.sum(s.values[name])) if name in s.values else 0.0, len(s.qids)) for t, s in full.items()}
    scores = {t: (total / n if n else 0.0) for t, (total, n) in totals.items()}
    rows = []
    for u, unit in enumerate(units):
        changed = {tag: float(np.sum(np.concatenate(loo))) - float(np.sum(full[tag].column(name, qids, 0.0)))
                   for tag, (qids, loo) in values[u].items()}
        judged = sum(meta["loo"][by]["judged"][u] for meta, _ in parts)
        relevant = sum(meta["loo"][by]["relevant"][u] for meta, _ in parts)
        for tag in _unit_runs(snap, by, unit):
            total, n = totals[tag]
            rows.append({"unit": unit, "run": tag, "team": snap.teams[tag], "contributed": snap.contributed[tag],
                         "unique_judged": judged, "unique_relevant": relevant,
                         "score": scores[tag], "score_loo": (total + changed.get(tag, 0.0)) / n if n else 0.0})
    return _from_rows(snap, name, by, rows, scores, first["source"])

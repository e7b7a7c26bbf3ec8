"""The evaluation's compute layer: what a collection holds now, evaluated with the engine, and cached.

Evaluation stores nothing (no database writes): this module reads the collection's state once per
*version*, hands it to the Django-free engine and keeps the results in process. The selectors
(:mod:`evaluation.selectors`) build leaderboards and reports from them.

Rules (trec_eval's, as NIST evaluates a track): unjudged documents count as non-relevant, at most the
first ``MAX_DEPTH = 1000`` documents of a topic count (``-M 1000``), a grade >= the collection's
``relevant_from`` is relevant (``-l``), a topic is averaged when it is in both the run and the qrels.

Version: judgments are an append-only log, so (count, last id) of a collection's judgments changes
whenever its qrels can; with the runs' (id, checksum, team, contributes), the pools' (id, updated_at)
and the pool entries' (count, last id) it identifies everything a score depends on. Reading it costs
four small queries; everything else is computed once per version (LRU, thread-safe).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

import pandas as pd
from django.db.models import Count, Max

from evaluation.engine import Evaluator, MeasureError, Qrels, parse_measures
from evaluation.engine.evaluator import EvalResult
from evaluation.engine.ranking import Ranked, rank_runs
from evaluation.engine.spec import CUT_DOUBLE, CUT_LONG
from judging.models import Judgment
from judging.policies import QRELS_POLICIES
from judging.qrels import qrels as judged_qrels
from pooling import strategies as S
from pooling.models import Pool, PoolEntry
from pooling.selectors import pool_entry_table, pool_provenance
from workbench.models import Collection, Run
from workbench.selectors import run_frames

MAX_DEPTH = 1000
#: measures every evaluation computes, so that leaderboards, reports and plots share one engine pass
BASE_MEASURES = ("map", "ndcg_cut.5,10,20", "P.5,10,20", "bpref", "recall.100,1000", "Rprec", "recip_rank",
                 "iprec_at_recall", "num_rel", "num_rel_ret", "judged.10", "map_condensed",
                 "ndcg_cut_condensed.10")


class EvaluationError(ValueError):
    """A request that cannot be evaluated; the message is one line for the user."""


# --------------------------------------------------------------------------------------------- cache
class _LRU:
    def __init__(self, size: int = 64) -> None:
        self._data: OrderedDict[Hashable, object] = OrderedDict()
        self._lock = threading.Lock()
        self.size = size

    def get_or_compute(self, key: Hashable, compute: Callable[[], object]):
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
        value = compute()
        with self._lock:
            self._data[key] = value
            while len(self._data) > self.size:
                self._data.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._data.clear()


cache = _LRU()


def clear_caches() -> None:
    """Forget every computed result (benchmarks measuring cold reads; tests)."""
    cache.clear()
    _rankings.clear()


def cached(key: Hashable, compute: Callable[[], object]):
    """Compute once per key (keys start with the collection's version)."""
    return cache.get_or_compute(key, compute)


_pinned: contextvars.ContextVar[dict | None] = contextvars.ContextVar("pinned_versions", default=None)


@contextlib.contextmanager
def one_version():
    """Within the block, each collection's version is read once: every read of a page (or of one
    selector, which calls several cached steps) sees one state of the collection, and the four queries
    of :func:`version` are paid once rather than per step. For reads only: a write inside the block
    would not be seen. Nested blocks share the outermost's versions."""
    if _pinned.get() is not None:
        yield
        return
    token = _pinned.set({})
    try:
        yield
    finally:
        _pinned.reset(token)


def reads(function):
    """Decorator for read-only selectors: the whole call sees one version (:func:`one_version`)."""

    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        with one_version():
            return function(*args, **kwargs)

    return wrapped


def version(collection: Collection) -> tuple:
    pinned = _pinned.get()
    if pinned is not None and collection.pk in pinned:
        return pinned[collection.pk]
    key = _read_version(collection)
    if pinned is not None:
        pinned[collection.pk] = key
    return key


def _read_version(collection: Collection) -> tuple:
    judgments = Judgment.objects.filter(collection=collection).aggregate(n=Count("id"), last=Max("id"))
    runs = tuple(Run.objects.filter(collection=collection).order_by("tag")
                 .values_list("id", "tag", "sha256", "team", "contributes"))
    pools = tuple(Pool.objects.filter(collection=collection).order_by("id").values_list("id", "updated_at"))
    entries = PoolEntry.objects.filter(pool__collection=collection).aggregate(n=Count("id"), last=Max("id"))
    return (collection.pk, collection.relevant_from, judgments["n"], judgments["last"], runs, pools,
            entries["n"], entries["last"])


# -------------------------------------------------------------------------------------- the snapshot
@dataclass(frozen=True)
class PoolInfo:
    """A stored pool; ``depth`` is k for a depth-k pool with one k for every topic, else None. Its
    ``entries`` (qid, docno, inclusion_probability, stratum, ...) and ``provenance`` (qid, docno, tag, rank)
    are read on first use only (a leaderboard does not need them)."""

    pool: Pool
    name: str
    strategy: str
    params: dict
    depth: int | None

    @functools.cached_property
    def entries(self) -> pd.DataFrame:
        return pool_entry_table(self.pool)

    @functools.cached_property
    def provenance(self) -> pd.DataFrame:
        return pool_provenance(self.pool)

    def contributors(self) -> set[str]:
        """The runs the pool was built from (every build and extension); with a per-team limit, the runs
        its provenance names."""
        records = [self.params, *self.params.get("history", [])]
        if any(r.get("runs_per_team") for r in records):
            return set(self.provenance["tag"].unique()) if len(self.provenance) else set()
        return {str(t) for r in records for t in (r.get("runs") or [])}


@dataclass(frozen=True)
class Snapshot:
    """A collection as the evaluation sees it at one version."""

    version: tuple
    slug: str
    relevant_from: int
    teams: dict[str, str]            # tag -> team ("" when none given), every run, in tag order
    declared: dict[str, bool]        # tag -> Run.contributes
    contributed: dict[str, bool]     # tag -> some pool was built from it (declared when no pool says)
    pools: tuple[PoolInfo, ...]
    main_pool: PoolInfo | None       # "main", else the latest

    @property
    def tags(self) -> list[str]:
        return list(self.teams)

    @property
    def sampled_pool(self) -> PoolInfo | None:
        if self.main_pool is not None and self.main_pool.strategy == "sampled":
            return self.main_pool
        return next((p for p in self.pools if p.strategy == "sampled"), None)

    def team_of(self, tag: str) -> str:
        return self.teams.get(tag) or tag


def _pool_info(pool: Pool) -> PoolInfo:
    depth = pool.params.get("depth") if pool.strategy == "depth" else None
    return PoolInfo(pool, pool.name, pool.strategy, dict(pool.params), depth if isinstance(depth, int) else None)


def snapshot(collection: Collection) -> Snapshot:
    key = version(collection)
    return cached((key, "snapshot"), lambda: _load_snapshot(collection, key))


def _load_snapshot(collection: Collection, key: tuple) -> Snapshot:
    runs = list(Run.objects.filter(collection=collection).order_by("tag").values_list("tag", "team", "contributes"))
    pools = tuple(_pool_info(p) for p in Pool.objects.filter(collection=collection).order_by("-updated_at", "-id"))
    main = next((p for p in pools if p.name == "main"), pools[0] if pools else None)
    in_pool: set[str] = set()
    for p in pools:
        in_pool |= p.contributors()
    declared = {tag: bool(c) for tag, _, c in runs}
    contributed = {tag: (tag in in_pool) if in_pool else declared[tag] for tag, _, _ in runs}
    return Snapshot(version=key, slug=collection.slug, relevant_from=collection.relevant_from,
                    teams={tag: team for tag, team, _ in runs}, declared=declared, contributed=contributed,
                    pools=pools, main_pool=main)


# ----------------------------------------------------------------------------------------- qrels
def normalise_policy(policy: str) -> str:
    policy = "adjudicated" if policy in (None, "current") else policy
    if policy not in QRELS_POLICIES:
        raise EvaluationError(f"unknown qrels policy {policy!r} (current, {', '.join(QRELS_POLICIES)}, or an assessor)")
    return policy


def qrels_frame(collection: Collection, *, policy: str = "adjudicated", assessor: str | None = None) -> pd.DataFrame:
    """The qrels (qid, docno, rel) evaluation uses; a clear error when there is nothing to evaluate against."""
    policy = normalise_policy(policy)
    key = (version(collection), "qrels", policy, assessor)

    def load() -> pd.DataFrame:
        frame = judged_qrels(collection, assessor=assessor, policy=policy)
        if frame.empty:
            who = f" by assessor {assessor!r}" if assessor else ""
            raise EvaluationError(f"no judgments{who} in collection {collection.slug!r}: nothing to evaluate against")
        return frame

    return cached(key, load)


def prepared_qrels(collection: Collection, *, policy: str = "adjudicated", assessor: str | None = None) -> Qrels:
    """:func:`qrels_frame` prepared for the engine, once per version (every evaluation pass shares it)."""
    policy = normalise_policy(policy)
    key = (version(collection), "prepared qrels", policy, assessor)
    return cached(key, lambda: Qrels.from_frame(qrels_frame(collection, policy=policy, assessor=assessor)))


# --------------------------------------------------------------------------------------- measures
def _request_of(measure) -> str:
    return measure.name if measure.raw is None else f"{measure.name}.{measure.raw}"


def parse_requests(requests: Iterable[str]) -> list:
    try:
        return [m for r in requests for m in parse_measures([r])]
    except MeasureError as exc:
        raise EvaluationError(str(exc)) from None


def measure_names(requests: Iterable[str]) -> list[str]:
    """Printed names (trec_eval's, e.g. ``ndcg_cut_10``) of the requests' values, in the order requested
    (``runid``, which nicknames such as ``official`` bring, and per-topic-only ``relstring`` left out)."""
    requests = list(requests)
    names = _names(requests)
    if not names:
        raise EvaluationError(f"no measure value to report in {', '.join(requests)}")
    return names


def _names(requests: Iterable[str]) -> list[str]:
    names: list[str] = []
    for m in parse_requests(requests):
        if m.spec.summary not in ("runid", "none"):
            names.extend(n for n in m.names if n not in names)
    return names


def batches(requests: Iterable[str]) -> list[tuple[str, ...]]:
    """Group requests into engine calls: cut-offs of one measure are merged (``P.5`` + ``P.10`` ->
    ``P.5,10``); two different parameter sets of another measure (``rbp.p=0.5``, ``rbp.p=0.8``) go to
    different calls, since the engine, like trec_eval, keeps only the first."""
    merged: dict[str, object] = {}
    rounds: list[dict[str, str]] = [{}]
    for m in parse_requests(requests):
        if m.spec.kind in (CUT_LONG, CUT_DOUBLE):
            merged.setdefault(m.name, set()).update(m.params)
            continue
        request = _request_of(m)
        for bucket in rounds:
            if bucket.get(m.name, request) == request:
                bucket[m.name] = request
                break
        else:
            rounds.append({m.name: request})
    for name, cuts in merged.items():
        rounds[0][name] = f"{name}." + ",".join(f"{c:g}" if isinstance(c, float) else str(c) for c in sorted(cuts))
    return [tuple(sorted(b.values())) for b in rounds if b]


# ------------------------------------------------------------------------------------ evaluation
#: one run's scores: the engine's result (``qids``, ``values``: name -> per-topic array, ``aggregate``:
#: trec_eval's "all" line; ``per_topic`` is the frame, built on first use, ``column`` one measure's row)
Scores = EvalResult


def frames(collection: Collection, tags: Sequence[str] | None = None) -> dict[str, pd.DataFrame]:
    return run_frames(collection, tags=tags)


#: rankings of every run against the current qrels: big (an entry per judged line), so only the latest few
_rankings = _LRU(size=2)


def ranked(collection: Collection, *, policy: str = "adjudicated", assessor: str | None = None
           ) -> tuple[Ranked, list[str]]:
    """Every run ranked against the qrels (the engine's first step, independent of the measures) and
    the tags in the ranking's run order: one ranking per version, shared by every measure batch and by
    leave-one-out (:meth:`Ranked.without`)."""
    policy = normalise_policy(policy)
    key = (version(collection), "ranked", policy, assessor)

    def compute() -> tuple[Ranked, list[str]]:
        runs = frames(collection)
        tags = list(runs)
        qrels = prepared_qrels(collection, policy=policy, assessor=assessor)
        return rank_runs(qrels, [runs[t] for t in tags], max_depth=MAX_DEPTH), tags

    return _rankings.get_or_compute(key, compute)


def score_ranked(qrels: Qrels, ranking: Ranked, tags: dict[int, str], requests: Sequence[str],
                 relevance_level: int) -> dict[str, Scores]:
    """Scores of the runs ``tags`` names (index in ``ranking`` -> tag), ranked against ``qrels`` or its parent."""
    evaluator = Evaluator(qrels, list(requests), relevance_level=relevance_level, max_depth=MAX_DEPTH)
    return evaluator.score(ranking, tags)


def evaluate_frames(qrels: pd.DataFrame | Qrels, runs: dict[str, pd.DataFrame], requests: Sequence[str],
                    relevance_level: int) -> dict[str, Scores]:
    """Scores of ``runs`` against ``qrels`` (a frame, or :class:`Qrels` already prepared)."""
    prepared = qrels if isinstance(qrels, Qrels) else Qrels.from_frame(qrels)
    evaluator = Evaluator(prepared, list(requests), relevance_level=relevance_level, max_depth=MAX_DEPTH)
    results = evaluator.evaluate_many(runs)
    return results


def _combine(parts: list[dict[str, Scores]], tags: Sequence[str]) -> dict[str, Scores]:
    """One :class:`Scores` per run from several batches' (every batch ranks the runs alike: same topics,
    same order; a name two batches give keeps the first's values)."""
    out = {}
    for tag in tags:
        if len(parts) == 1:
            out[tag] = parts[0][tag]
            continue
        first = parts[0][tag]
        values, aggregate, measures = dict(first.values), dict(first.aggregate), tuple(first.measures)
        for p in parts[1:]:
            other = p[tag]
            if other.qids != first.qids:  # not expected: align on the first batch's topics
                values.update({n: other.column(n, first.qids) for n in other.values if n not in values})
            else:
                values.update({n: v for n, v in other.values.items() if n not in values})
            aggregate.update(other.aggregate)
            measures += tuple(other.measures)
        out[tag] = Scores(first.qids, values, aggregate, measures, first.tag)
    return out


def base_requests(snap: Snapshot) -> tuple[str, ...]:
    requests = list(BASE_MEASURES)
    depth = snap.main_pool.depth if snap.main_pool is not None else None
    if depth and depth != 10:
        requests.append(f"judged.{depth}")
    return tuple(requests)


def evaluate(collection: Collection, requests: Iterable[str] = (), *, policy: str = "adjudicated",
             assessor: str | None = None, tags: Sequence[str] | None = None) -> dict[str, Scores]:
    """Scores of every run (or of ``tags``) for the base measures plus ``requests``, cached per version.

    Every run of the collection is evaluated at once (one engine pass, shared by every later request);
    requests outside the base set are evaluated in a separate pass, cached too.
    """
    snap = snapshot(collection)
    policy = normalise_policy(policy)
    if tags is not None:
        unknown = [t for t in tags if t not in snap.teams]
        if unknown:
            raise EvaluationError(f"no run {unknown[0]!r} in collection {snap.slug!r}")
    if not snap.teams:
        raise EvaluationError(f"collection {snap.slug!r} has no runs to evaluate")
    base = base_requests(snap)
    known = set(_names(base))
    extra = [r for r in requests if not set(_names([r])) <= known or not _names([r])]
    parts = []
    for batch in [*batches(base), *(batches(extra) if extra else [])]:
        key = (snap.version, "scores", policy, assessor, batch)

        def compute(batch=batch) -> dict[str, Scores]:
            ranking, order = ranked(collection, policy=policy, assessor=assessor)
            return score_ranked(prepared_qrels(collection, policy=policy, assessor=assessor), ranking,
                                dict(enumerate(order)), batch, snap.relevant_from)

        parts.append(cached(key, compute))
    chosen = list(tags) if tags is not None else snap.tags
    return _combine(parts, chosen)


def infap_scores(collection: Collection, *, policy: str = "adjudicated", assessor: str | None = None
                 ) -> dict[str, float] | None:
    """infAP of every run where the pool was sampled, else None.

    trec_eval's infAP (Yilmaz & Aslam, CIKM 2006) needs the pooled-but-not-judged documents marked -1 in
    the qrels: here every document of the sampled population (top ``D`` of the pool's runs, ``D`` = the
    last stratum's last rank) that has no judgment. infAP assumes a uniform sample of that population;
    for a stratified design it is an approximation (xinfAP would weight the strata).
    """
    snap = snapshot(collection)
    pool = snap.sampled_pool
    if pool is None:
        return None
    policy = normalise_policy(policy)

    def compute() -> dict[str, float]:
        qrels = qrels_frame(collection, policy=policy, assessor=assessor)
        strata = pool.params.get("strata") or [list(s) for s in S.DEFAULT_STRATA]
        depth = int(strata[-1][1])
        pool_runs = [t for t in pool.params.get("runs", []) if t in snap.teams] or \
            [t for t, c in snap.contributed.items() if c]
        population = S.ranked_entries({t: f for t, f in frames(collection, pool_runs).items()}, depth)
        population = population[["qid", "docno"]].drop_duplicates()
        judged = pd.MultiIndex.from_frame(qrels[["qid", "docno"]].astype(str))
        keys = pd.MultiIndex.from_frame(population.astype(str))
        unjudged = population[~keys.isin(judged)].assign(rel=-1)
        augmented = pd.concat([qrels, unjudged], ignore_index=True)
        scores = evaluate_frames(augmented, frames(collection), ("infAP",), snap.relevant_from)
        return {tag: float(s.aggregate["infAP"]) for tag, s in scores.items()}

    return cached((snap.version, "infAP", policy, assessor), compute)

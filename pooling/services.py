"""Building and extending pools from the stored runs, with the strategies of ``pooling.strategies``.

A pool is never rebuilt in place: building again with deeper k, more runs or more budget adds only
the pairs that are new (in a new round, queued after the existing ones) and keeps every entry and
every judgment that exists.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from django.db import transaction
from django.db.models import Max

from pooling import advance
from pooling import strategies as S
from pooling.entries import PoolRefused, write_round
from pooling.features import corpus_for
from pooling.models import Pool, PoolEntry
from pooling.strategies import registry
from pooling.strategies.cal import CalParams
from workbench.collections.selectors import run_frames
from workbench.models import Collection, Job

__all__ = ["PoolBuildSummary", "PoolRefused", "building", "pool_build", "runs_for", "seed_from"]

@dataclass(frozen=True)
class PoolBuildSummary:
    pool: Pool
    added: int
    total: int
    topics: int
    runs: list[str]  # the runs pooled (after the per-team limit)
    round: int
    timings: dict[str, float] = field(default_factory=dict)  # seconds spent: "read runs", "pool", "write"
    offered: int = 0  # the runs the build could use (ticked, or every run offered to the pool)

    def runs_text(self) -> str:
        """"from 2 runs of the 3 offered" (or "from 3 runs" when every offered run was pooled); a cal pool
        says what it used: the documents' text, and the runs only when their top documents seeded it."""
        cal = self.pool.params.get("cal") if isinstance(self.pool.params, dict) else None
        if cal is not None:
            seeded = (f", seeded with the top {cal.get('seed_depth')} documents of {len(self.runs)} "
                      f"run{'s' if len(self.runs) != 1 else ''}" if self.runs and cal.get("seed_depth") else
                      ", no run pooled")
            return f"from the documents' text (cal: learned from the judgments{seeded})"
        text = f"from {len(self.runs)} run{'s' if len(self.runs) != 1 else ''}"
        return text + (f" of the {self.offered} offered" if self.offered > len(self.runs) else "")


def runs_for(collection: Collection, tags: Sequence[str] | None, frames: dict | None = None, *,
             required: bool = True, depth: int | None = None):
    """The runs to pool (the named ones, or every contributing run): frames, teams and priorities by tag.
    ``frames``: the runs read already (a part of a split build, pooling.split). ``required=False``: a
    strategy that can pool without runs (cal learns from the documents). ``depth``: only each topic's first
    ``depth`` rows are read (a depth-k pool looks no further)."""
    if frames is None:
        frames = _read_runs(collection, tags, required, depth)
    meta = dict(collection.runs.filter(tag__in=list(frames)).values_list("tag", "team"))
    priorities = dict(collection.runs.filter(tag__in=list(frames)).values_list("tag", "pool_priority"))
    return frames, meta, priorities


def _read_runs(collection: Collection, tags: Sequence[str] | None, required: bool, depth: int | None) -> dict:
    if tags:
        known = set(collection.runs.filter(tag__in=tags).values_list("tag", flat=True))
        unknown = [t for t in tags if t not in known]
        if unknown:
            raise PoolRefused(f"no run {', '.join(map(repr, unknown))} in collection {collection.slug!r}")
        frames = run_frames(collection, tags=tags, depth=depth)
    else:
        frames = run_frames(collection, contributing_only=True, depth=depth)
    if not frames and required:
        raise PoolRefused(f"collection {collection.slug!r} has no contributing runs to pool")
    return frames


def _pool_for(collection: Collection, name: str, strategy: str, seed: int, order: str) -> tuple[Pool, bool, int]:
    """The pool to build or extend, whether it is new, and the round this build is."""
    if building(collection, name) is not None:
        raise PoolRefused(f"pool {collection.slug}/{name} is being built by another job: wait for it to finish")
    pool, created = Pool.objects.get_or_create(
        collection=collection, name=name, defaults={"strategy": strategy, "seed": seed, "order": order})
    if not created and pool.strategy != strategy:
        raise PoolRefused(f"pool {pool} was built with {pool.strategy!r}; extend it with the same strategy "
                          f"or build another pool (--name)")
    if created:
        return pool, True, 1
    last = max(PoolEntry.objects.filter(pool=pool).aggregate(m=Max("round"))["m"] or 0,
               pool.provenance_tables.aggregate(m=Max("round"))["m"] or 0)
    return pool, False, last + 1


def building(collection: Collection, name: str) -> Pool | None:
    """The pool ``name`` while a split build writes it (hidden, ``Pool.published`` false); one whose build
    ended without publishing it (its job failed) is removed, and None returned."""
    pool = Pool.all_objects.filter(collection=collection, name=name, published=False).first()
    if pool is None:
        return None
    job = Job.objects.filter(pk=pool.params.get("building")).first()
    if job is not None and not job.finished:
        return pool
    pool.delete()
    return None


def _record(pool: Pool, params: dict, history: dict) -> None:
    pool.params = {**params, "history": pool.params.get("history", []) + [history]}
    pool.save()


def fixed_params(params: dict, strategy: registry.Strategy, result: S.PoolResult,
                 request: registry.PoolParams) -> dict:
    """What a fixed strategy's build records: the build's ``params`` completed by the strategy's."""
    params.update({k: v for k, v in result.params.items() if k not in params or params[k] is None})
    params.update(strategy.recorded(request))
    return params


def record(pool: Pool, params: dict) -> None:
    """Record a fixed build's parameters on the pool, and in its history."""
    _record(pool, params, {k: v for k, v in params.items() if k != "stratum_sizes"})


def build_params(frames: Mapping, *, depth: int | None, budget: int | None = None, total_budget: int | None = None,
                 runs_per_team: int | None = None, seed: int = 0, order: str = "shuffled") -> dict:
    """A build's parameters before the strategy's. "offered": the runs this build could use; "runs" (set
    by the strategy): the ones it pooled, after the per-team limit. A run contributed to the pool iff some
    build's "runs" names it (pooling.selectors)."""
    return {"offered": sorted(frames), "runs": None, "depth": depth, "budget": budget, "total_budget": total_budget,
            "runs_per_team": runs_per_team, "seed": seed, "order": order}


def _build_adaptive(pool: Pool, strategy: registry.Strategy, frames, request: registry.PoolParams,
                    params: dict) -> int:
    """Record an adaptive pool's parameters and offer each topic's next document (its first, or with a
    bigger budget the one after the judgments the pool was told of); the number of topics that got a new
    one. Judging queues the new ones for the topic's assessors when they ask for work
    (``judging.queueing``), and takes in documents the collection judged elsewhere when it assigns them."""
    adaptive = strategy.build(frames, request)
    params.update({"shared": request.shared, "budgets": {q: int(b) for q, b in adaptive.budgets.items()},
                   "depth": request.depth or 100, "runs": adaptive.params["runs"]})
    if request.cal is not None:
        params["cal"] = adaptive.cal.as_dict()
    _record(pool, params, params)
    advance.forget(pool)
    return sum(1 for qid in adaptive.topics if advance.pool_advance(pool=pool, qid=qid).added)


def _build_fixed(pool: Pool, strategy: registry.Strategy, frames, request: registry.PoolParams, params: dict,
                 *, round_no: int, created: bool, timings: dict[str, float]) -> tuple[int, int]:
    """Pool the runs now and write the new entries; (entries written, topics they are on)."""
    clock = time.perf_counter()
    result = strategy.build(frames, request)
    timings["pool"] = time.perf_counter() - clock
    record(pool, fixed_params(params, strategy, result, request))
    clock = time.perf_counter()
    written = write_round(pool, result, round_no=round_no, new_pool=created)
    timings["write"] = time.perf_counter() - clock
    return written


def _cal_params(cal: CalParams | Mapping | None) -> CalParams:
    """The cal parameters as given by the command (an object) or a job (its JSON)."""
    try:
        return cal if isinstance(cal, CalParams) else CalParams(**(cal or {}))
    except (TypeError, ValueError) as exc:
        raise PoolRefused(str(exc)) from None


@transaction.atomic
def pool_build(*, collection: Collection, name: str = "main", strategy: str = "depth", depth: int | None = None,
               budget: int | None = None, total_budget: int | None = None, tags: Sequence[str] | None = None,
               runs_per_team: int | None = None, seed: int = 0, order: str = "shuffled",
               strata: Sequence[S.Stratum] | None = None, shared: bool = False,
               cal: CalParams | Mapping | None = None, frames: dict | None = None,
               options: Mapping | None = None) -> PoolBuildSummary:
    """Build the pool ``name`` of the collection, or extend it if it exists.

    Fixed strategies (depth, rrf, borda, sampled) write their entries now. Adaptive ones (mtf,
    maxmean, bandit) write each topic's first document now and the next ones as judgments arrive
    (:func:`pooling.advance.pool_advance`). Strategies come from :mod:`pooling.strategies.registry`.
    ``frames``: the runs' lines read already (a split build's parts, :mod:`pooling.split`). ``options``:
    values of parameters a strategy declares beyond the common ones (:attr:`PoolParams.options`).
    """
    try:
        chosen = registry.get(strategy)
    except registry.StrategyRefused as exc:
        raise PoolRefused(str(exc)) from None
    clock = time.perf_counter()
    frames, teams, priorities = runs_for(collection, tags, frames, required=not chosen.needs_corpus,
                                         depth=depth if chosen.splits_by_topic and isinstance(depth, int) else None)
    timings = {"read runs": time.perf_counter() - clock}
    pool, created, round_no = _pool_for(collection, name, strategy, seed, order)
    params = build_params(frames, depth=depth, budget=budget, total_budget=total_budget,
                          runs_per_team=runs_per_team, seed=seed, order=order)
    request = registry.PoolParams(depth=depth, budget=budget, total_budget=total_budget, seed=seed, strata=strata,
                                  shared=shared, teams=teams, priorities=priorities, runs_per_team=runs_per_team,
                                  cal=_cal_params(cal) if chosen.needs_corpus else None,
                                  corpus=corpus_for(collection) if chosen.needs_corpus else None,
                                  options=options)
    try:
        if chosen.adaptive:
            added, topics = _build_adaptive(pool, chosen, frames, request, params), None
        else:
            added, topics = _build_fixed(pool, chosen, frames, request, params, round_no=round_no,
                                         created=created, timings=timings)
    except registry.StrategyRefused as exc:
        raise PoolRefused(str(exc)) from None
    if created and not chosen.adaptive:
        total = added
    else:
        total = PoolEntry.objects.filter(pool=pool).count()
        topics = PoolEntry.objects.filter(pool=pool).values("topic").distinct().count()
    return PoolBuildSummary(pool=pool, added=added, total=total, topics=topics, runs=sorted(params["runs"] or []),
                            round=round_no, timings=timings, offered=len(frames))


def seed_from(value: int | None) -> int:
    """A recorded seed: the given one, or a fresh random one."""
    return int(value) if value is not None else int(np.random.default_rng().integers(0, 2**31 - 1))


@transaction.atomic
def pool_topic_stop(*, pool: Pool, qid: str, reason: str = "") -> None:
    """Stop a cal pool's topic by hand: no new document is offered (one already offered stays to judge)."""
    declared = registry.STRATEGIES.get(pool.strategy)  # None: imported judgments
    if declared is None or not declared.stops:
        stopping = ", ".join(s.name for s in registry.STRATEGIES.values() if s.stops)
        raise PoolRefused(f"pool {pool} ({pool.strategy}) has no topics to stop: only {stopping} pools stop by topic")
    if not pool.collection.topics.filter(qid=qid).exists():
        raise PoolRefused(f"no topic {qid!r} in collection {pool.collection.slug!r}")
    pool = Pool.objects.select_for_update().get(pk=pool.pk)
    stopped = dict(pool.params.get("stopped", {}))
    stopped[qid] = reason.strip() or "stopped by hand"
    pool.params = {**pool.params, "stopped": stopped}
    pool.save(update_fields=["params", "updated_at"])
    advance.topic_status(pool, qid)  # the stored state says stopped, and why (from the pool's record)

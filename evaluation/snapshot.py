"""A collection as evaluation sees it at one version: its runs (team, declared and actual contribution)
and its pools (strategy, depth, entries and provenance on first use)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pandas as pd

from evaluation.cache import cached, version
from pooling.models import Pool
from pooling.selectors import contributed_runs, pool_entry_table, pool_provenance, pool_runs
from pooling.strategies import registry
from workbench.models import Collection, Run


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
        """The runs the pool was built from (:func:`pooling.selectors.pool_runs`)."""
        return pool_runs(self.pool)


@dataclass(frozen=True)
class Snapshot:
    """A collection as the evaluation sees it at one version."""

    version: tuple
    slug: str
    relevant_from: int
    teams: dict[str, str]            # tag -> team ("" when none given), every run, in tag order
    declared: dict[str, bool]        # tag -> Run.contributes: offered to the pool (eligible)
    contributed: dict[str, bool]     # tag -> some pool was built from it (pooling.selectors.contributed_runs)
    pools: tuple[PoolInfo, ...]
    main_pool: PoolInfo | None       # "main", else the first built

    @property
    def tags(self) -> list[str]:
        return list(self.teams)

    @property
    def sampled_pool(self) -> PoolInfo | None:
        if self.main_pool is not None and _stratified(self.main_pool.strategy):
            return self.main_pool
        return next((p for p in self.pools if _stratified(p.strategy)), None)

    def team_of(self, tag: str) -> str:
        return self.teams.get(tag) or tag


def _stratified(strategy: str) -> bool:
    declared = registry.STRATEGIES.get(strategy)  # the sample inferred measures read (strata, known rates)
    return declared is not None and declared.stratified


def _pool_info(pool: Pool) -> PoolInfo:
    declared = registry.STRATEGIES.get(pool.strategy)  # a depth-k pool (each run's top k) states its depth
    depth = pool.params.get("depth") if declared is not None and declared.splits_by_topic else None
    return PoolInfo(pool, pool.name, pool.strategy, dict(pool.params), depth if isinstance(depth, int) else None)


def snapshot(collection: Collection) -> Snapshot:
    key = version(collection)
    return cached((key, "snapshot"), lambda: _load_snapshot(collection, key))


def _load_snapshot(collection: Collection, key: tuple) -> Snapshot:
    runs = list(Run.objects.filter(collection=collection).order_by("tag").values_list("tag", "team", "contributes"))
    pools = tuple(_pool_info(p) for p in Pool.objects.filter(collection=collection).order_by("-updated_at", "-id"))
    # the pool named "main", else the first one built: a pool built later (a cal pool, a deeper experiment) never
    # becomes the one the leaderboard's completeness and judged figures are counted on
    main = next((p for p in pools if p.name == "main"), min(pools, key=lambda p: p.pool.pk) if pools else None)
    declared = {tag: bool(c) for tag, _, c in runs}
    contributed = contributed_runs(collection)  # the one definition, shared with the pool page and exports
    return Snapshot(version=key, slug=collection.slug, relevant_from=collection.relevant_from,
                    teams={tag: team for tag, team, _ in runs}, declared=declared, contributed=contributed,
                    pools=pools, main_pool=main)

"""What a pool build would give, per topic, before it is built: the console shows it under the form.

The strategy runs over the runs' arrays exactly as :func:`pooling.services.pool_build` runs it, and
nothing is written. For an existing pool of that name the preview counts what the build would add.
Adaptive strategies choose their documents one judgment at a time, so their preview is each topic's
budget and candidates.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from pooling import strategies as S
from pooling.entries import PoolRefused
from pooling.models import Pool, PoolEntry
from pooling.services import runs_for
from pooling.strategies import registry
from pooling.strategies.ranking import team_key
from workbench.formats.ids import sorted_topics
from workbench.models import Collection

__all__ = ["PoolPreview", "pool_preview"]


@dataclass(frozen=True)
class PoolPreview:
    strategy: str
    adaptive: bool
    runs: list[str]  # the runs the build will pool (after the per-team limit), sorted
    extends: bool  # a pool of that name exists: the numbers are what the build adds
    #: one row per topic: qid, documents (the pool's size there), new (what a build adds), budget (adaptive)
    rows: list[dict] = field(default_factory=list)
    name: str = "main"
    offered: int = 0  # runs the build could use (ticked, or every run offered to the pool)
    #: the offered runs by team: {"team", "runs": [{"tag", "priority", "used"}]}, teams by name
    groups: list[dict] = field(default_factory=list)

    @property
    def label(self) -> str:
        return registry.get(self.strategy).label

    @property
    def total(self) -> int:
        return sum(row["documents"] for row in self.rows)

    @property
    def total_new(self) -> int:
        return sum(row["new"] for row in self.rows)


def _existing(pool: Pool | None) -> pd.DataFrame:
    if pool is None:
        return pd.DataFrame(columns=["qid", "docno"])
    return pd.DataFrame.from_records(list(PoolEntry.objects.filter(pool=pool).values_list("topic__qid", "docno")),
                                     columns=["qid", "docno"])


def pool_preview(*, collection: Collection, name: str = "main", strategy: str = "depth",
                 params: registry.PoolParams, tags=None) -> PoolPreview:
    """The per-topic size of the pool ``pool_build`` would build (or add to pool ``name``)."""
    try:
        chosen = registry.get(strategy)
    except registry.StrategyRefused as exc:
        raise PoolRefused(str(exc)) from None
    pool = Pool.objects.filter(collection=collection, name=name).first()
    if pool is not None and pool.strategy != strategy:
        raise PoolRefused(f"pool {pool} was built with {pool.strategy!r}; extend it with the same strategy "
                          f"or give another name")
    frames, teams, priorities = runs_for(collection, tags)
    params = registry.PoolParams(**{**params.__dict__, "teams": teams, "priorities": priorities})
    try:
        built = chosen.build(frames, params)
    except registry.StrategyRefused as exc:
        raise PoolRefused(str(exc)) from None
    if chosen.adaptive:
        rows = [{"qid": qid, "documents": int(budget), "new": int(budget), "budget": int(budget)}
                for qid, budget in built.budgets.items()]
    else:
        existing = _existing(pool)
        fresh = S.new_entries(existing, built) if len(existing) else built
        sizes = built.entries.groupby("qid", sort=False).size()
        added = fresh.entries.groupby("qid", sort=False).size()
        rows = [{"qid": str(qid), "documents": int(n), "new": int(added.get(qid, 0)), "budget": None}
                for qid, n in sizes.items()]
    order = {qid: i for i, qid in enumerate(sorted_topics([row["qid"] for row in rows]))}
    rows.sort(key=lambda row: order[row["qid"]])
    used = [str(t) for t in built.params.get("runs", list(frames))]
    return PoolPreview(strategy=strategy, adaptive=chosen.adaptive, runs=sorted(used), extends=pool is not None,
                       rows=rows, name=name, offered=len(frames),
                       groups=_groups(list(frames), set(used), teams, priorities))


def key_is_team(tag: str, teams: dict) -> bool:
    return team_key(teams.get(tag), tag)[0] == "team"


def _groups(tags: list[str], used: set[str], teams: dict, priorities: dict) -> list[dict]:
    """The offered runs by team (as the per-team limit groups them), each team's runs by priority then
    tag; runs without a team are listed under "no team", each one a team of its own for the limit."""
    groups: dict[tuple[str, str], dict] = {}
    for tag in tags:
        key = team_key(teams.get(tag), tag)
        label = (teams.get(tag) or "").strip() or "no team"
        group = groups.setdefault(("team", "") if key[0] == "run" else key, {"team": label, "runs": []})
        group["runs"].append({"tag": tag, "priority": priorities.get(tag), "used": tag in used})
    for group in groups.values():
        group["runs"].sort(key=lambda r: (r["priority"] is None, r["priority"] or 0, r["tag"]))
        group["used"] = sum(r["used"] for r in group["runs"])
        # the limit cut between runs of equal priority: the tag decided (say so, the team may not know)
        pooled = {r["priority"] for r in group["runs"] if r["used"]}
        group["tie"] = next((r["priority"] for r in group["runs"] if not r["used"] and r["priority"] in pooled
                             and key_is_team(r["tag"], teams)), None)
    return sorted(groups.values(), key=lambda g: (g["team"] == "no team", g["team"].casefold()))

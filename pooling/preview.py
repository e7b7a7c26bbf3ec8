"""What a pool build would give, per topic, before it is built: the console shows it under the form.

The strategy runs over the runs' arrays exactly as :func:`pooling.services.pool_build` runs it, and
nothing is written. For an existing pool of that name the preview counts what the build would add.
Adaptive strategies choose their documents one judgment at a time, so their preview is each topic's
budget and candidates.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

from pooling import strategies as S
from pooling.entries import PoolRefused
from pooling.models import Pool, PoolEntry
from pooling.strategies import registry
from pooling.strategies.ranking import select_runs, team_key
from workbench.collections import runstore
from workbench.collections.selectors import _run_blobs as run_blobs
from workbench.collections.selectors import run_frames
from workbench.formats.ids import sorted_topics
from workbench.models import Collection, Run

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
    #: the strategy's declared parameters as the build will use them: (label, value), cal's included
    parameters: list[tuple[str, str]] = field(default_factory=list)

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


def _corpus_preview(collection: Collection, name: str, strategy: str, params: registry.PoolParams,
                    pool: Pool | None) -> PoolPreview:
    if not collection.documents.exists():
        raise PoolRefused(f"{strategy} learns from the documents' text: import the collection's documents first")
    if params.budget is None:
        raise PoolRefused(f"{strategy} pooling needs a budget (judgments per topic)")
    qids = sorted_topics(collection.topics.values_list("qid", flat=True))
    rows = [{"qid": q, "documents": int(params.budget), "new": int(params.budget), "budget": int(params.budget)}
            for q in qids]
    return PoolPreview(strategy=strategy, adaptive=True, runs=[], extends=pool is not None, rows=rows, name=name,
                       offered=0, groups=[])


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
    if chosen.needs_corpus:  # cal: one row per topic with its budget; its features are the build job's work
        return replace(_corpus_preview(collection, name, strategy, params, pool),
                       parameters=parameters_used(chosen, params))
    offered, teams, priorities = _offered(collection, tags)
    if chosen.splits_by_topic and isinstance(params.depth, int):  # depth-k: each run's top k alone
        used = select_runs(offered, teams=teams, priorities=priorities, runs_per_team=params.runs_per_team)
        rows = _depth_rows(collection, used, params.depth, pool)
    else:
        rows, used = _built_rows(chosen, collection, pool, offered, teams, priorities, strategy, params)
    order = {qid: i for i, qid in enumerate(sorted_topics([row["qid"] for row in rows]))}
    rows.sort(key=lambda row: order[row["qid"]])
    return PoolPreview(strategy=strategy, adaptive=chosen.adaptive, runs=sorted(used), extends=pool is not None,
                       rows=rows, name=name, offered=len(offered),
                       groups=_groups(offered, set(used), teams, priorities),
                       parameters=parameters_used(chosen, params))


def parameters_used(chosen: registry.Strategy, params: registry.PoolParams) -> list[tuple[str, str]]:
    """(label, value) of each parameter the strategy declares, as the build reads it from ``params``
    (cal's from its one object; a parameter left empty shows as "default" or "none")."""
    shown = []
    for p in chosen.params:
        if p.into is not None:
            gathered = getattr(params, p.into, None)
            value = p.default if gathered is None else getattr(gathered, p.name, None)
        elif hasattr(params, p.name):
            value = getattr(params, p.name)
        else:
            value = (params.options or {}).get(p.name)
        if p.name == "topic_depth" or (p.name == "depth" and isinstance(value, dict)):
            continue
        if isinstance(value, list | tuple):
            value = " ".join(f"{s[0]}-{s[1]}:{s[2]:g}" if isinstance(s, tuple) else str(s) for s in value)
        shown.append((p.title, "none" if value is None else str(value)))
    return shown



def _built_rows(chosen, collection: Collection, pool: Pool | None, offered: list[str], teams: dict,
                priorities: dict, strategy: str, params: registry.PoolParams) -> tuple[list[dict], list[str]]:
    """Each topic's size as the strategy builds it over the runs' lines, and the runs it used."""
    frames = _frames(collection, offered, teams, priorities, chosen, params)
    params = registry.PoolParams(**{**params.__dict__, "teams": teams, "priorities": priorities})
    try:
        built = chosen.build(frames, params)
    except registry.StrategyRefused as exc:
        raise PoolRefused(str(exc)) from None
    used = [str(t) for t in built.params.get("runs", list(frames))]
    if chosen.adaptive:
        return [{"qid": qid, "documents": int(budget), "new": int(budget), "budget": int(budget)}
                for qid, budget in built.budgets.items()], used
    existing = _existing(pool)
    fresh = S.new_entries(existing, built) if len(existing) else built
    sizes = built.entries.groupby("qid", sort=False).size()
    added = fresh.entries.groupby("qid", sort=False).size()
    return [{"qid": str(qid), "documents": int(n), "new": int(added.get(qid, 0)), "budget": None}
            for qid, n in sizes.items()], used


def _depth_rows(collection: Collection, used: list[str], depth: int, pool: Pool | None) -> list[dict]:
    """A depth-k pool is the union of each run's top k (:mod:`pooling.strategies.depth`): counted here run
    by run, so that the web worker holds one run's lines and the pooled pairs at a time, never the pool's
    frames and provenance (78 runs at depth 100 took some 60 MB more that way)."""
    have = set(PoolEntry.objects.filter(pool=pool).values_list("topic__qid", "docno")) if pool else set()
    pooled: dict[str, set[str]] = {}
    for _, top in _tops(collection, used, depth):
        for qid, docno in zip(top["qid"].astype(str).tolist(), top["docno"].astype(str).tolist(), strict=True):
            pooled.setdefault(qid, set()).add(docno)
    return [{"qid": qid, "documents": len(docs), "new": sum((qid, d) not in have for d in docs), "budget": None}
            for qid, docs in pooled.items()]


def _tops(collection: Collection, used: list[str], depth: int):
    """(tag, the run's lines ranked within ``depth``) for each run, one run decoded at a time."""
    ids = dict(Run.objects.filter(collection_id=collection.pk, tag__in=used).values_list("tag", "id"))
    for tag in used:
        blob = run_blobs([ids[tag]]).get(ids[tag])
        # its lines were removed: the whole read says so (RunDataMissing)
        whole = runstore.decode(blob) if blob is not None else run_frames(collection, tags=[tag])[tag]
        yield tag, S.ranked_entries({tag: whole}, depth)
        del whole


def offered_rows(collection: Collection, tags) -> list[tuple[str, str, int]]:
    """(tag, team, priority) of the runs a build could use (the named ones, or every run offered to the pool),
    in the order the build takes them (as ``runs_for``): read from the runs' rows, not their lines."""
    runs = Run.objects.filter(collection_id=collection.pk)
    if tags:
        known = set(runs.filter(tag__in=list(tags)).values_list("tag", flat=True))
        unknown = [t for t in tags if t not in known]
        if unknown:
            raise PoolRefused(f"no run {', '.join(map(repr, unknown))} in collection {collection.slug!r}")
        runs = runs.filter(tag__in=list(tags))
    else:
        runs = runs.filter(contributes=True)
    rows = list(runs.values_list("tag", "team", "pool_priority"))
    if not rows:
        raise PoolRefused(f"collection {collection.slug!r} has no contributing runs to pool")
    return rows


def _offered(collection: Collection, tags) -> tuple[list[str], dict, dict]:
    rows = offered_rows(collection, tags)
    return [t for t, _, _ in rows], {t: team for t, team, _ in rows}, {t: p for t, _, p in rows}


def _frames(collection: Collection, offered: list[str], teams: dict, priorities: dict,
            chosen: registry.Strategy, params: registry.PoolParams) -> dict[str, pd.DataFrame]:
    """The lines the preview needs, read in the web server's request: only the runs the per-team limit
    keeps, and for depth-k only each run's lines within the depth (the pool of a depth-k build is made
    of those alone). A track of 150 runs of 30,000 lines held whole took some 240 MB more."""
    used = select_runs(offered, teams=teams, priorities=priorities, runs_per_team=params.runs_per_team)
    depth = params.depth
    if not chosen.splits_by_topic or depth is None:
        return run_frames(collection, tags=used)
    deepest = max(depth.values()) if isinstance(depth, dict) else int(depth)
    return {tag: top[["qid", "docno", "rank", "score"]].reset_index(drop=True)
            for tag, top in _tops(collection, used, deepest)}


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

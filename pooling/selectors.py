"""Reads of pools: entries, provenance and statistics."""

from __future__ import annotations

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from pooling import provenance as provenance_store
from pooling import strategies as S
from pooling.models import Pool, PoolEntry, PoolProvenance
from workbench.models import Collection, Run


def pool_named(collection: Collection, name: str = "main") -> Pool | None:
    return Pool.objects.filter(collection=collection, name=name).first()


def default_pool(collection: Collection) -> Pool | None:
    """The pool a page shows when none is named: "main", else the one built or extended last (as the
    leaderboard chooses its pool)."""
    return pool_named(collection) or Pool.objects.filter(collection=collection).order_by("-updated_at", "-id").first()


def free_pool_name(collection: Collection, base: str) -> str:
    """``base``, or ``base-2``, ``base-3``...: the first name no pool of the collection has, nor one a split
    build is writing (a link that prefills the pool form must not extend an existing pool unless the
    organizer types its name)."""
    taken = set(Pool.all_objects.filter(collection=collection).values_list("name", flat=True))
    base = base[:56]
    if base not in taken:
        return base
    return next(f"{base}-{i}" for i in range(2, len(taken) + 3) if f"{base}-{i}" not in taken)


def pool_runs(pool: Pool, provenance: pd.DataFrame | None = None) -> set[str]:
    """The runs the pool was built from: every run some build or extension of it pooled (after the
    per-team limit). Builds record them as ``runs`` beside the ``offered`` ones; pools built before that
    recorded every offered run as ``runs``, so for those with a per-team limit the runs their provenance
    names stand in. Imported pools were built from no run."""
    records = [pool.params, *pool.params.get("history", [])]
    tags: set[str] = set()
    legacy = False
    for record in records:
        if "offered" in record or not record.get("runs_per_team"):
            tags.update(str(t) for t in record.get("runs") or [])
        else:
            legacy = True
    if legacy:
        provenance = pool_provenance(pool) if provenance is None else provenance
        tags.update(str(t) for t in provenance["tag"].unique())
    return tags


def pooled_runs(collection: Collection) -> set[str]:
    """The runs some pool of the collection was built from (no fallback: empty before any pool)."""
    pooled: set[str] = set()
    for pool in Pool.objects.filter(collection=collection):
        pooled |= pool_runs(pool)
    return pooled


def contributed_runs(collection: Collection) -> dict[str, bool]:
    """THE definition of "contributed", for every page and export: tag -> whether some pool of the
    collection was built from the run (:func:`pool_runs`), for every run in tag order.

    ``Run.contributes`` only says the run was *offered* to the pool (eligible); a per-team limit or a
    choice of runs leaves offered runs out. A collection with no pool built from runs (no pool yet, or
    only imported judgments) has nothing to derive the fact from: its offered runs count as contributed,
    so that a leaderboard over imported qrels does not flag every run."""
    tags = list(Run.objects.filter(collection=collection).order_by("tag").values_list("tag", "contributes"))
    pooled = pooled_runs(collection)
    if not pooled:
        return {tag: bool(offered) for tag, offered in tags}
    return {tag: tag in pooled for tag, _ in tags}


def pool_run_rows(pool: Pool, stats: dict) -> list[dict]:
    """One row per run of the collection for the pool page: tag, team, ``contributed`` (the pool was built
    from it, :func:`pool_runs`), ``offered`` (``Run.contributes``), and from :func:`pool_statistics` the
    pooled documents it retrieved (``documents``), those only it retrieved (``unique``) and, once judged,
    how many are relevant."""
    built_from = pool_runs(pool)
    figures = stats.get("runs", {})
    rows = []
    for tag, team, offered in Run.objects.filter(collection=pool.collection).order_by("tag").values_list(
            "tag", "team", "contributes"):
        found = figures.get(tag, {})
        row = {"tag": tag, "team": team, "contributed": tag in built_from, "offered": bool(offered),
               "documents": found.get("contributed", 0), "unique": found.get("unique", 0)}
        if "relevant" in found or any("relevant" in f for f in figures.values()):
            row |= {"relevant": found.get("relevant", 0), "unique_relevant": found.get("unique_relevant", 0)}
        rows.append(row)
    rows.sort(key=lambda row: (not row["contributed"], row["tag"]))
    return rows


def pool_page_facts(pool: Pool, stats: dict, rows: list[dict]) -> dict:
    """What the pool page says besides its tables: the parameters (without the run lists the table
    shows), how many runs it was built from of how many offered (:func:`pool_run_rows`), the other pools."""
    return {"params": {k: v for k, v in stats.get("params", {}).items() if k not in ("runs", "offered")},
            "n_built_from": sum(row["contributed"] for row in rows), "n_offered": sum(row["offered"] for row in rows),
            "other_pools": list(Pool.objects.filter(collection=pool.collection).exclude(pk=pool.pk)
                                .order_by("name").values_list("name", flat=True))}


def pool_pairs(pool: Pool, topics: list[str] | None = None) -> pd.DataFrame:
    """qid, docno of every pooled pair (of ``topics`` only, if given), sorted by topic (natural order) then docno."""
    entries = PoolEntry.objects.filter(pool=pool)
    if topics is not None:
        entries = entries.filter(topic__qid__in=list(topics))
    frame = pd.DataFrame.from_records(list(entries.values_list("topic__qid", "docno")), columns=["qid", "docno"])
    if frame.empty:
        return frame
    order = S.sorted_topics(frame["qid"])
    frame["qid"] = pd.Categorical(frame["qid"], categories=order, ordered=True)
    frame = frame.sort_values(["qid", "docno"], kind="stable")
    frame["qid"] = frame["qid"].astype(str)
    return frame.reset_index(drop=True)


def pool_entries(pool: Pool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(entries, provenance): entries with qid, docno, pool_rank, min_depth, judging_order,
    inclusion_probability, stratum, round; provenance long as qid, docno, tag, rank (for organizers
    only: never show it to assessors)."""
    return pool_entry_table(pool), pool_provenance(pool)


def pool_entry_table(pool: Pool) -> pd.DataFrame:
    """The entries of :func:`pool_entries` without their provenance."""
    columns = ["qid", "docno", "pool_rank", "min_depth", "judging_order", "inclusion_probability", "stratum",
               "round"]
    return pd.DataFrame.from_records(
        # ordered as the model orders entries, without the joins its ordering implies (pool, collection)
        list(PoolEntry.objects.filter(pool=pool).order_by("topic__qid", "judging_order").values_list(
            "topic__qid", "docno", "pool_rank", "min_depth", "judging_order", "inclusion_probability", "stratum",
            "round")),
        columns=columns)


def pool_provenance(pool: Pool, *, coded: bool = False) -> pd.DataFrame:
    """qid, docno, tag, rank for every pooled document and every run that retrieved it within the pool's
    depth: the columnar tables of the builds, then what entries added one at a time carry. ``coded``: qid,
    docno and tag as categoricals (for statistics that group them)."""
    decode = provenance_store.decode_coded if coded else provenance_store.decode
    parts = [decode(blob) for blob in
             PoolProvenance.objects.filter(pool=pool).order_by("round", "part").values_list("table", flat=True)]
    single = [(qid, docno, tag, rank)
              for qid, docno, by_tag in PoolEntry.objects.filter(pool=pool, provenance__isnull=False)
              .values_list("topic__qid", "docno", "provenance")
              for tag, rank in (by_tag or {}).items()]
    if single:
        parts.append(pd.DataFrame.from_records(single, columns=provenance_store.COLUMNS).astype(
            {"qid": "str", "docno": "str", "tag": "str", "rank": "int64"}))
    if not parts:
        return provenance_store.empty()
    if len(parts) == 1:
        return parts[0]
    if not coded:
        return pd.concat(parts, ignore_index=True)
    return pd.DataFrame({
        **{c: union_categoricals([pd.Categorical(part[c]) for part in parts]) for c in ("qid", "docno", "tag")},
        "rank": np.concatenate([part["rank"].to_numpy(dtype=np.int64) for part in parts])})


def _judged_figures(stats: dict, entries: pd.DataFrame, provenance: pd.DataFrame, qrels: pd.DataFrame,
                    relevant_from: int) -> None:
    """Add judged and relevant counts per topic, the judged fraction and relevant documents by depth."""
    progress = S.judging_progress(entries, qrels, relevant_from=relevant_from)
    for row in progress.to_dict("records"):
        stats["topics"][row["qid"]].update(judged=int(row["judged"]),
                                           judged_fraction=round(float(row["judged_fraction"]), 4),
                                           relevant=int(row["relevant"]))
    judged = int(progress["judged"].sum())
    stats["judged"] = judged
    stats["judged_fraction"] = round(judged / len(entries), 4)
    by_depth = S.relevant_by_depth(provenance, qrels, relevant_from=relevant_from)
    stats["relevant_by_depth"] = [
        {k: (round(float(v), 4) if isinstance(v, float) else int(v)) for k, v in row.items()}
        for row in by_depth.to_dict("records")]


def pool_statistics(pool: Pool, qrels: pd.DataFrame | None = None) -> dict:
    """What `pool_stats` prints: sizes, unique contributions, overlap, judged fraction, relevant by depth."""
    entries, provenance = pool_pairs(pool), pool_provenance(pool, coded=True)
    relevant_from = pool.collection.relevant_from
    stats: dict = {
        "collection": pool.collection.slug, "pool": pool.name, "strategy": pool.strategy,
        "params": {k: v for k, v in pool.params.items() if k not in ("history", "stratum_sizes", "budgets")},
        "seed": pool.seed, "order": pool.order, "size": int(len(entries)),
    }
    if entries.empty:
        return stats | {"topics": {}, "runs": {}, "overlap": {}}
    judged = qrels if qrels is not None and len(qrels) else None
    sizes = S.pool_size(entries)
    stats["topics"] = {q: {"pool_size": int(n)} for q, n in sizes.items()}
    unique = S.unique_contributions(provenance, judged, relevant_from=relevant_from)
    stats["runs"] = {row["tag"]: {k: int(v) for k, v in row.items() if k != "tag"} for row in unique.to_dict("records")}
    overlap = S.overlap_matrix(provenance)
    stats["overlap"] = {str(a): {str(b): int(v) for b, v in row.items()} for a, row in overlap.iterrows()}
    if judged is not None:
        _judged_figures(stats, entries, provenance, judged, relevant_from)
    return stats

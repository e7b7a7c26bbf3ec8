"""Continuous active learning (:mod:`..cal`): a classifier over the collection's documents picks what to
judge next, per topic, until the budget is spent or a stopping rule fires."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from ..cal import CalParams, CalPool
from ..declaration import PoolParams, Strategy, StrategyRefused, declared
from .common import Budget

if TYPE_CHECKING:  # the runs' side (pandas) is imported when a pool is built, not with the declaration
    from ..ranking import Runs

NEEDS_TEXT = "cal learns from the documents' text: import the collection's documents first"


def build(runs: Runs, p: PoolParams) -> CalPool:
    if p.corpus is None:
        raise StrategyRefused(NEEDS_TEXT)
    if p.budget is None:
        raise StrategyRefused("cal pooling needs a budget (--budget N judgments per topic)")
    per_topic = isinstance(p.budget, Mapping)
    cal = replace(p.cal or CalParams(), budget=None if per_topic else int(p.budget), seed=p.seed)
    topics = {q: t for q, t in p.corpus.topics.items() if not per_topic or q in p.budget}
    seeds, ranked = {}, None
    if cal.seed_depth and runs:
        from ..depth import depth_pool
        from ..ranking import ranked_entries

        ranked = ranked_entries(runs, cal.seed_depth)[["qid", "docno", "tag", "rank"]]
        entries = depth_pool(runs, cal.seed_depth).entries
        seeds = {str(q): list(g["docno"].astype(str)) for q, g in entries.groupby("qid", sort=False)}
    pool = CalPool(p.corpus.features, topics, cal, seed_docs=seeds,
                   budgets={str(q): int(b) for q, b in p.budget.items()} if per_topic else None)
    if ranked is not None:
        pool.ranked, pool.params["runs"] = ranked, sorted(runs)
    return pool


def samples_when(record: Mapping) -> bool:
    """A cal pool draws a side sample when its stopping rule samples (qbcb)."""
    try:
        return CalParams(**record.get("cal", {})).rule().samples
    except (TypeError, ValueError):  # a record this version cannot read: no sample to estimate from
        return False


STRATEGY = Strategy("cal", "Continuous active learning", True, build, needs_corpus=True, order=80,
                    params=(*declared(Budget), *declared(CalParams, into="cal")), samples=True, stops=True,
                    samples_when=samples_when,
                    help="A classifier trained on the judgments so far picks each topic's next document from "
                         "the whole collection (BMI / AutoTAR); stopping rules end a topic early.")

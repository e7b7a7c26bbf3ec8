"""Replaying a pooling strategy on a stored collection against a qrels file (``manage.py simulate_pool``).

Builds the strategy's pool object from what the collection holds (runs for depth and the adaptive pools,
document features and topic texts for ``cal``), then hands it to the Django-free
:func:`pooling.strategies.simulate.simulate`. Every strategy is charged the same judgments per topic.
"""

from __future__ import annotations

from dataclasses import dataclass

from pooling import features as stored_features
from pooling.strategies import depth_pool, registry
from pooling.strategies.cal import CalParams, CalPool
from pooling.strategies.simulate import OrderedPool, relevant_sets, simulate, stopping_summary
from pooling.strategies.stopping import make_rule
from workbench.collections.selectors import run_frames
from workbench.models import Collection

__all__ = ["SIMULATED", "SimulationRefused", "Simulation", "simulate_pool"]

#: depth-k (each run's top k, judged in pool order) and the adaptive strategies
SIMULATED = tuple(s.name for s in registry.STRATEGIES.values() if s.splits_by_topic or s.adaptive)


class SimulationRefused(ValueError):
    """What the simulation cannot do with the collection and options given (one line for the user)."""


@dataclass(frozen=True)
class Simulation:
    strategy: str
    budget: int = 100
    depth: int = 100
    seed: int = 0
    stop: str | None = None
    target_recall: float = 0.8
    confidence: float = 0.95
    sample_size: int = 1000
    cal: CalParams | None = None
    runs: tuple[str, ...] | None = None


def _runs(collection: Collection, qids: list[str], tags=None) -> dict:
    if tags:
        frames = run_frames(collection, tags=tags)
        missing = sorted(set(tags) - set(frames))
        if missing:
            raise SimulationRefused(f"no run {', '.join(missing)} in {collection.slug!r}")
    else:
        frames = run_frames(collection, contributing_only=True) or run_frames(collection)
    return {tag: frame[frame["qid"].astype(str).isin(qids)] for tag, frame in frames.items()}


def _seed_docs(runs: dict, depth: int) -> dict[str, list[str]]:
    if not runs or depth <= 0:
        return {}
    entries = depth_pool(runs, depth).entries
    return {str(q): list(group["docno"].astype(str)) for q, group in entries.groupby("qid", sort=False)}


def _pool(collection: Collection, spec: Simulation, qids: list[str]):
    chosen = registry.STRATEGIES.get(spec.strategy)
    if chosen is not None and chosen.needs_corpus:
        features = stored_features.features_for(collection)
        if features is None:
            raise SimulationRefused(f"collection {collection.slug!r} has no documents: cal needs their text "
                                    "(import_documents)")
        params = spec.cal or CalParams(budget=spec.budget, seed=spec.seed)
        rule = make_rule(spec.stop, target_recall=spec.target_recall, confidence=spec.confidence,
                         sample_size=spec.sample_size) if spec.stop else None  # else the one --cal names
        texts = stored_features.topic_texts(collection)
        seeds = _seed_docs(_runs(collection, qids, spec.runs), params.seed_depth) if params.seed_depth else {}
        return CalPool(features, {q: texts[q] for q in qids}, params, stop_rule=rule, seed_docs=seeds)
    if spec.stop:
        raise SimulationRefused(f"--stop applies to cal, not to {spec.strategy}")
    runs = _runs(collection, qids, spec.runs)
    if not runs:
        raise SimulationRefused(f"{spec.strategy} pools the collection's runs, and {collection.slug!r} has none "
                                "(import_runs), or use --strategy cal")
    if chosen is not None and chosen.splits_by_topic:
        entries = depth_pool(runs, spec.depth).entries
        orders = {str(q): list(g["docno"].astype(str)) for q, g in entries.groupby("qid", sort=False)}
        return OrderedPool(orders, spec.budget, name=chosen.name)
    if spec.strategy in registry.adaptive_names():
        return registry.adaptive_pool(spec.strategy, runs, spec.budget, depth=spec.depth, seed=spec.seed)
    raise SimulationRefused(f"unknown strategy {spec.strategy!r} ({', '.join(SIMULATED)})")


def simulate_pool(*, collection: Collection, qrels, spec: Simulation) -> dict:
    """Replay ``spec.strategy`` on the collection's topics that the qrels judge; the JSON of the command."""
    relevant = relevant_sets(qrels, collection.relevant_from)
    known = set(collection.topics.values_list("qid", flat=True))
    qids = sorted(known & set(relevant))
    if not qids:
        raise SimulationRefused(f"the qrels judge none of the topics of {collection.slug!r}")
    result = simulate(_pool(collection, spec, qids), relevant, qids)
    result["budget"] = spec.budget
    # a sampling rule's side sample is judged too: the totals count it with the review's judgments
    side = sum(t.get("side_judgments") or 0 for t in result["topics"].values())
    result.update(review_judgments=result["judgments"], side_judgments=side, judgments=result["judgments"] + side)
    if spec.stop:
        unmet = {qid: t["stop_reason"] for qid, t in result["topics"].items()
                 if t.get("stopped_at") is None and t.get("stop_reason")}
        result["stopping"] = {"rule": spec.stop, "confidence": spec.confidence,
                              **stopping_summary(result, spec.target_recall if spec.stop != "knee" else None),
                              "not_met": unmet}
    return result

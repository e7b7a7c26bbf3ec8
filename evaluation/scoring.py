"""Scores of a collection's runs: its qrels under a policy, measure requests batched into engine passes,
every run ranked once per version and scored by the Django-free engine; cached per version.

Rules (trec_eval's, as NIST evaluates a track): unjudged documents count as non-relevant, at most the
first ``MAX_DEPTH = 1000`` documents of a topic count (``-M 1000``), a grade >= the collection's
``relevant_from`` is relevant (``-l``), a topic is averaged when it is in both the run and the qrels.
The measures every evaluation computes come from :mod:`evaluation.measures`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from evaluation import measures as registry
from evaluation.cache import cache, cached, rankings, version
from evaluation.engine import Evaluator, MeasureError, Qrels, parse_measures
from evaluation.engine.evaluator import EvalResult
from evaluation.engine.ranking import Ranked, rank_runs
from evaluation.engine.spec import CUT_DOUBLE, CUT_LONG
from evaluation.snapshot import Snapshot, snapshot
from judging.completeness import Completeness, Counts, pool_judged_counts, topic_completeness
from judging.policies import DEFAULT_POLICY, POLICIES
from judging.qrels import qrels as judged_qrels
from pooling import strategies as S
from pooling.models import Pool
from workbench.collections.selectors import run_frames
from workbench.models import Collection

MAX_DEPTH = 1000


class EvaluationError(ValueError):
    """A request that cannot be evaluated; the message is one line for the user."""


COMPLETE = "/complete"  # policy suffix: only the topics whose pooled documents are all judged


def normalise_policy(policy: str) -> str:
    """``adjudicated`` or ``majority``, optionally with ``/complete`` (partly judged topics left out)."""
    policy = DEFAULT_POLICY if policy in (None, "current") else policy
    base, scope = (policy[:-len(COMPLETE)], COMPLETE) if policy.endswith(COMPLETE) else (policy, "")
    base = DEFAULT_POLICY if base == "current" else base
    if base not in POLICIES:
        raise EvaluationError(f"unknown qrels policy {policy!r} (current, {', '.join(POLICIES.names)}, or an assessor)")
    return base + scope


def completeness(collection: Collection) -> Completeness:
    """:func:`judging.completeness.topic_completeness` on the main pool (:func:`completeness_pools`), once per
    version of the collection (the pages read the figure the board job stored:
    :func:`evaluation.scores.completeness`)."""
    return cached((version(collection), "completeness"),
                  lambda: topic_completeness(collection, counts=judged_counts(collection, completeness_pools(
                      collection))))


def completeness_pools(collection: Collection) -> list[int]:
    """The pools whose documents a topic must have judged to be complete: the main pool (``main``, else the first
    built), as the judged figures; another pool (a cal pool, a deeper experiment) never changes which topics
    the leaderboard counts as judged."""
    main = snapshot(collection).main_pool
    return [] if main is None else [main.pool.pk]


def judged_counts(collection: Collection, pools: Sequence[int] | None, topics: list[str] | None = None
                  ) -> dict[str, Counts]:
    """:func:`judging.completeness.pool_judged_counts` of the pools with these ids (``None``: every pool of the
    collection; on ``topics`` only, if given), once per version: completeness and the judged figures both read
    the main pool's, so the database is asked once (seconds at 1,000 runs), not twice."""
    ids = tuple(sorted(Pool.objects.filter(collection=collection).values_list("pk", flat=True)
                       if pools is None else pools))
    return cached((version(collection), "pool judged counts", ids, None if topics is None else tuple(topics)),
                  lambda: pool_judged_counts(collection, Pool.objects.filter(pk__in=ids), topics))


def _complete_topics_only(collection: Collection, frame: pd.DataFrame) -> pd.DataFrame:
    complete = completeness(collection).complete
    if not complete:
        raise EvaluationError(f"no topic of collection {collection.slug!r} is fully judged yet: "
                              "choose all topics to see scores")
    return frame[frame["qid"].isin(complete)].reset_index(drop=True)


def qrels_frame(collection: Collection, *, policy: str = DEFAULT_POLICY, assessor: str | None = None) -> pd.DataFrame:
    """The qrels (qid, docno, rel) evaluation uses; a clear error when there is nothing to evaluate against."""
    policy = normalise_policy(policy)
    key = (version(collection), "qrels", policy, assessor)

    def load() -> pd.DataFrame:
        frame = judged_qrels(collection, assessor=assessor, policy=policy.removesuffix(COMPLETE))
        if frame.empty:
            who = f" by assessor {assessor!r}" if assessor else ""
            raise EvaluationError(f"no judgments{who} in collection {collection.slug!r}: nothing to evaluate against")
        return _complete_topics_only(collection, frame) if policy.endswith(COMPLETE) else frame

    return cached(key, load)


def prepared_qrels(collection: Collection, *, policy: str = DEFAULT_POLICY, assessor: str | None = None,
                   topics: Sequence[str] | None = None) -> Qrels | None:
    """:func:`qrels_frame` prepared for the engine, once per version (every evaluation pass shares it); with
    ``topics``, those topics' only (a part of a job split by topic; None when they have none): their lines of
    the version's qrels where this process has them (a board job's parts read them whole: its other parts
    need them whole), else read alone."""
    policy = normalise_policy(policy)
    if topics is not None:
        whole = cache.get((version(collection), "qrels", policy, assessor))
        if whole is not None:  # the lines of the whole (sorted by topic then document), as read alone
            frame = whole[whole["qid"].isin(set(topics))].reset_index(drop=True)
        else:
            frame = judged_qrels(collection, assessor=assessor, policy=policy.removesuffix(COMPLETE), topics=topics)
            frame = _complete_topics_only(collection, frame) if policy.endswith(COMPLETE) and len(frame) else frame
        return _prepared(collection, frame) if len(frame) else None
    key = (version(collection), "prepared qrels", policy, assessor)
    return cached(key, lambda: _prepared(collection, qrels_frame(collection, policy=policy, assessor=assessor)))


def _prepared(collection: Collection, frame: pd.DataFrame) -> Qrels:
    """The engine's qrels; where the organizer gave each grade a gain (0.6, ...), the grades become those
    exact gains for the gain-based measures, and a grade >= ``relevant_from`` stays what is relevant."""
    gains = collection.grade_gains
    if gains is None:
        return Qrels.from_frame(frame)
    rel = frame["rel"].to_numpy()
    values = rel.astype(np.float64)
    for grade, gain in gains.items():
        values[rel == grade] = gain
    threshold = gains.get(collection.relevant_from, float(collection.relevant_from))
    return Qrels.from_frame({"qid": frame["qid"], "docno": frame["docno"], "rel": values},
                            fractional_from=threshold)


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


def ranked(collection: Collection, *, policy: str = DEFAULT_POLICY, assessor: str | None = None
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

    return rankings.get_or_compute(key, compute)


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


def combine(parts: list[dict[str, Scores]], tags: Sequence[str]) -> dict[str, Scores]:
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
    requests = list(registry.BASE_MEASURES)
    depth = snap.main_pool.depth if snap.main_pool is not None else None
    if depth and depth != 10:
        requests.append(f"judged.{depth}")
    return tuple(requests)


def evaluate(collection: Collection, requests: Iterable[str] = (), *, policy: str = DEFAULT_POLICY,
             assessor: str | None = None, tags: Sequence[str] | None = None,
             stored: dict[str, Scores] | None = None) -> dict[str, Scores]:
    """Scores of every run (or of ``tags``) for the base measures plus ``requests``, cached per version.

    Every run of the collection is evaluated at once (one engine pass, shared by every later request);
    requests outside the base set are evaluated in a separate pass, cached too. ``stored``: the base measures'
    scores of this version already (a stored board's, :func:`evaluation.scores.evaluate`), not computed again.
    """
    snap = snapshot(collection)
    policy = normalise_policy(policy)
    if tags is not None:
        unknown = [t for t in tags if t not in snap.teams]
        if unknown:
            raise EvaluationError(f"no run {unknown[0]!r} in collection {snap.slug!r}")
    if not snap.teams:
        raise EvaluationError(f"collection {snap.slug!r} has no runs to evaluate")
    parts = [] if stored is None else [stored]
    for batch in passes(snap, requests, base=stored is None):
        key = (snap.version, "scores", policy, assessor, batch)

        def compute(batch=batch) -> dict[str, Scores]:
            ranking, order = ranked(collection, policy=policy, assessor=assessor)
            return score_ranked(prepared_qrels(collection, policy=policy, assessor=assessor), ranking,
                                dict(enumerate(order)), batch, snap.relevant_from)

        parts.append(cached(key, compute))
    chosen = list(tags) if tags is not None else snap.tags
    return combine(parts, chosen)


def passes(snap: Snapshot, requests: Iterable[str], *, base: bool = True) -> list[tuple[str, ...]]:
    """The engine passes :func:`evaluate` makes for ``requests``: the base measures' (unless ``base`` is
    false: the version's board holds them), then those of the requests outside the base set."""
    requests = list(requests)
    known = set(_names(base_requests(snap)))
    extra = [r for r in requests if not set(_names([r])) <= known or not _names([r])]
    return [*(batches(base_requests(snap)) if base else []), *(batches(extra) if extra else [])]


def infap_scores(collection: Collection, *, policy: str = DEFAULT_POLICY, assessor: str | None = None
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

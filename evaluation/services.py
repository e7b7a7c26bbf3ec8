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

import functools
import itertools
import string
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from django.db.models import Count, Max
from scipy.stats import t as t_dist

from evaluation.engine import Evaluator, MeasureError, Qrels, parse_measures
from evaluation.engine.spec import CUT_DOUBLE, CUT_LONG
from judging.models import Judgment
from judging.selectors import qrels as judged_qrels
from pooling import strategies as S
from pooling.models import Pool, PoolEntry
from pooling.selectors import pool_entries
from workbench.models import Collection, Run
from workbench.selectors import run_frames

MAX_DEPTH = 1000
POLICIES = ("adjudicated", "majority")
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


def cached(key: Hashable, compute: Callable[[], object]):
    """Compute once per key (keys start with the collection's version)."""
    return cache.get_or_compute(key, compute)


def version(collection: Collection) -> tuple:
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
    def _loaded(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        return pool_entries(self.pool)

    @property
    def entries(self) -> pd.DataFrame:
        return self._loaded[0]

    @property
    def provenance(self) -> pd.DataFrame:
        return self._loaded[1]

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
        if self.main_pool is not None and self.main_pool.strategy == Pool.Strategy.SAMPLED:
            return self.main_pool
        return next((p for p in self.pools if p.strategy == Pool.Strategy.SAMPLED), None)

    def team_of(self, tag: str) -> str:
        return self.teams.get(tag) or tag


def _pool_info(pool: Pool) -> PoolInfo:
    depth = pool.params.get("depth") if pool.strategy == Pool.Strategy.DEPTH else None
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
    if policy not in POLICIES:
        raise EvaluationError(f"unknown qrels policy {policy!r} (current, {', '.join(POLICIES)}, or an assessor)")
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
@dataclass(frozen=True)
class Scores:
    """One run's scores: ``per_topic`` (index qid, one column per printed measure name) and ``aggregate``
    (trec_eval's "all" line)."""

    per_topic: pd.DataFrame
    aggregate: dict


def frames(collection: Collection, tags: Sequence[str] | None = None) -> dict[str, pd.DataFrame]:
    return run_frames(collection, tags=tags)


def evaluate_frames(qrels: pd.DataFrame, runs: dict[str, pd.DataFrame], requests: Sequence[str],
                    relevance_level: int) -> dict[str, Scores]:
    evaluator = Evaluator(Qrels.from_frame(qrels), list(requests), relevance_level=relevance_level,
                          max_depth=MAX_DEPTH)
    results = evaluator.evaluate_many(runs)
    return {tag: Scores(r.per_topic, r.aggregate) for tag, r in results.items()}


def _combine(parts: list[dict[str, Scores]], tags: Sequence[str]) -> dict[str, Scores]:
    out = {}
    for tag in tags:
        per_topic = pd.concat([p[tag].per_topic for p in parts], axis=1) if len(parts) > 1 else parts[0][tag].per_topic
        per_topic = per_topic.loc[:, ~per_topic.columns.duplicated()]
        aggregate: dict = {}
        for p in parts:
            aggregate.update(p[tag].aggregate)
        out[tag] = Scores(per_topic, aggregate)
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
            qrels = qrels_frame(collection, policy=policy, assessor=assessor)
            return evaluate_frames(qrels, frames(collection), batch, snap.relevant_from)

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


def competition_ranks(values: np.ndarray) -> np.ndarray:
    """1 + the number of strictly higher values (ties share the best rank)."""
    values = np.asarray(values, dtype=float)
    return 1 + (values[None, :] > values[:, None]).sum(axis=1)


# ------------------------------------------------------------------- statistics for leaderboards
def t_interval(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Student's t interval of the mean: ``mean +- t_{(1+c)/2, n-1} sd / sqrt(n)``; NaN for n < 2.

    >>> [round(v, 4) for v in t_interval(np.array([0.2, 0.4, 0.6]))]   # sd 0.2, t_{.975,2} = 4.3027
    [-0.0968, 0.8968]
    """
    values = np.asarray(values, dtype=float)
    n = values.size
    if n < 2:
        return (float("nan"), float("nan"))
    half = float(t_dist.ppf(0.5 + confidence / 2, n - 1) * values.std(ddof=1) / np.sqrt(n))
    mean = float(values.mean())
    return (mean - half, mean + half)


def pairwise_t(values: np.ndarray, confidence: float = 0.95) -> dict[str, np.ndarray]:
    """Paired t-tests of every pair of columns (runs) of ``values`` (topics x runs), vectorised.

    Pairs ``(i, j)``, ``i < j``, in ``itertools.combinations`` order; per pair: mean_a, mean_b, mean_diff,
    statistic ``t = mean(d) / (sd(d) / sqrt(n))``, two-sided p_value (n - 1 degrees of freedom),
    effect_size ``d_z = mean(d) / sd(d)`` and the t interval of mean(d). Differences are rounded to 12
    decimals and the edge cases are those of :func:`evaluation.engine.significance.paired_test` (every
    difference 0: t = 0, p = 1; a constant non-zero difference: t = +-inf, p = 0), whose p-values these equal.
    """
    n, k = values.shape
    parts: dict[str, list[np.ndarray]] = {key: [] for key in
                                           ("i", "j", "mean_a", "mean_b", "mean_diff", "statistic", "p_value",
                                            "effect_size", "ci_low", "ci_high")}
    means = values.mean(axis=0)
    critical = float(t_dist.ppf(0.5 + confidence / 2, n - 1))
    for i in range(k - 1):
        d = np.round(values[:, [i]] - values[:, i + 1:], 12)
        mean = d.mean(axis=0)
        sd = d.std(axis=0, ddof=1)
        zero = ~d.any(axis=0)
        constant = (d == d[:1]).all(axis=0) & ~zero
        with np.errstate(divide="ignore", invalid="ignore"):
            t = mean / (sd / np.sqrt(n))
            effect = mean / sd
        t = np.where(zero, 0.0, np.where(constant, np.copysign(np.inf, mean), t))
        effect = np.where(zero, 0.0, np.where(constant, np.copysign(np.inf, mean), effect))
        p = np.where(zero, 1.0, np.where(constant, 0.0, 2 * t_dist.sf(np.abs(t), n - 1)))
        half = critical * sd / np.sqrt(n)
        j = np.arange(i + 1, k)
        for key, value in (("i", np.full(j.size, i)), ("j", j), ("mean_a", np.full(j.size, means[i])),
                           ("mean_b", means[j]), ("mean_diff", mean), ("statistic", t), ("p_value", p),
                           ("effect_size", effect), ("ci_low", mean - half), ("ci_high", mean + half)):
            parts[key].append(value)
    return {key: (np.concatenate(v) if v else np.array([])) for key, v in parts.items()}


def compact_letters(means: np.ndarray, significant: np.ndarray, *, max_letters: int = 26
                    ) -> tuple[list[str], str]:
    """Letters per run (column order) from ``significant``: one boolean per pair ``(i, j)``, ``i < j``, in
    ``itertools.combinations`` order. Returns ``(letters, method)``; a shared letter always means "not
    significantly different", and the best run's letters start with "a".

    ``method = "piepho"``: the compact letter display of Piepho (2004, insert-and-absorb), exactly as
    :func:`evaluation.engine.significance.significance_letters` builds it (two runs share a letter iff they
    do not differ), when it needs at most ``max_letters`` letters. With many runs and many significant
    pairs it needs thousands (136 TREC-COVID runs: > 5,000 letters, minutes to compute); then
    ``method = "rank-intervals"``: one letter per maximal run of consecutive ranks with no significant
    pair inside (the classic underline display), at most k letters, computed in O(k^2). There,
    two runs without a common letter may still not differ, when a run ranked between them differs from one.
    """
    columns, method = letter_groups(means, significant, max_letters=max_letters)
    letters = [""] * len(means)
    for c, column in enumerate(columns):
        name = _letter(c)
        for run in np.flatnonzero(column):
            letters[run] += name
    return letters, method


def letter_groups(means: np.ndarray, significant: np.ndarray, *, max_letters: int = 26
                  ) -> tuple[np.ndarray, str]:
    """The groups behind :func:`compact_letters`: a boolean matrix (one row per letter, in letter order,
    one column per run) and the method.

    Piepho's insert-and-absorb ends with the maximal sets of runs with no significant pair inside (the
    maximal cliques of the "not different" graph); they are enumerated here directly (Bron-Kerbosch with
    pivoting on bitsets), stopping as soon as more than ``max_letters`` are found.
    """
    k = len(means)
    ranked = np.argsort(-np.asarray(means, dtype=float), kind="stable")
    pairs = np.array(list(itertools.combinations(range(k), 2)), dtype=np.int64).reshape(-1, 2)
    chosen = pairs[np.asarray(significant, dtype=bool)]
    differs = np.zeros((k, k), dtype=bool)
    differs[chosen[:, 0], chosen[:, 1]] = differs[chosen[:, 1], chosen[:, 0]] = True
    cliques = _maximal_cliques(~differs, max_letters)
    if cliques is None:
        return _rank_intervals(ranked, chosen), "rank-intervals"
    rank = np.empty(k, dtype=np.int64)
    rank[ranked] = np.arange(k)
    columns = np.array([[bool(c >> i & 1) for i in range(k)] for c in cliques], dtype=bool).reshape(-1, k)
    keys = [sorted(rank[columns[c]].tolist()) for c in range(len(columns))]
    return columns[sorted(range(len(columns)), key=keys.__getitem__)], "piepho"


class _TooMany(Exception):
    pass


def _maximal_cliques(together: np.ndarray, limit: int) -> list[int] | None:
    """Maximal cliques (as int bitsets) of the graph ``together`` (k x k, diagonal ignored); None when
    there are more than ``limit``. Bron and Kerbosch (1973) with Tomita's pivot."""
    k = len(together)
    neighbours = [sum(1 << int(j) for j in np.flatnonzero(together[i]) if j != i) for i in range(k)]
    found: list[int] = []

    def expand(clique: int, candidates: int, excluded: int) -> None:
        if not candidates and not excluded:
            found.append(clique)
            if len(found) > limit:
                raise _TooMany
            return
        pool = candidates | excluded
        pivot = max((u for u in range(k) if pool >> u & 1), key=lambda u: (candidates & neighbours[u]).bit_count())
        rest = candidates & ~neighbours[pivot]
        while rest:
            v = (rest & -rest).bit_length() - 1
            rest &= rest - 1
            expand(clique | 1 << v, candidates & neighbours[v], excluded & neighbours[v])
            candidates &= ~(1 << v)
            excluded |= 1 << v

    try:
        expand(0, (1 << k) - 1, 0)
    except _TooMany:
        return None
    return found


def _rank_intervals(ranked: np.ndarray, chosen: np.ndarray) -> np.ndarray:
    k = len(ranked)
    position = np.empty(k, dtype=np.int64)
    position[ranked] = np.arange(k)
    differs = np.zeros((k, k), dtype=bool)  # by rank position
    if len(chosen):
        a, b = position[chosen[:, 0]], position[chosen[:, 1]]
        differs[a, b] = differs[b, a] = True
    intervals, end = [], -1
    for start in range(k):
        stop = max(end, start)
        while stop + 1 < k and not differs[start:stop + 1, stop + 1].any():
            stop += 1
        if stop > end:
            intervals.append((start, stop))
            end = stop
    columns = np.zeros((len(intervals), k), dtype=bool)
    for c, (lo, hi) in enumerate(intervals):
        columns[c, ranked[lo:hi + 1]] = True
    return columns


def _letter(index: int) -> str:
    name, index = "", index + 1
    while index:
        index, rem = divmod(index - 1, 26)
        name = string.ascii_lowercase[rem] + name
    return name

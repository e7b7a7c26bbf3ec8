"""Stratified sampling below a fully judged depth, and the Horvitz-Thompson estimate of R.

Design (as in NIST's ``make-pools.pl``, isoboroff/testcoll-tools, and the inferred measures of
E. Yilmaz and J. A. Aslam, "Estimating average precision with incomplete and imperfect judgments",
CIKM 2006; E. Yilmaz, E. Kanoulas and J. A. Aslam, "A simple and efficient sampling method for estimating
AP and NDCG", SIGIR 2008, evaluated by NIST's ``sample_eval.pl``): every document of the depth-``D`` pool
(D = the deepest stratum's last rank) falls into the stratum that contains its ``min_depth``, the best
rank any contributing run gave it. Within stratum h of a topic, with N_h documents, a simple random sample
without replacement of n_h = max(1, round(rate_h * N_h)) documents is drawn, so every document of the
stratum has inclusion probability pi_h = n_h / N_h (recorded on the entry, exactly). A rate of 1 judges
the whole stratum. Documents whose min_depth falls in no stratum are not candidates.

Horvitz-Thompson (D. G. Horvitz and D. J. Thompson, JASA 47, 1952): R_hat = sum over judged sampled
documents of rel(d) / pi(d), unbiased for the number of relevant documents in the sampled population.
Variance under stratified SRSWOR (W. G. Cochran, *Sampling Techniques*, 3rd ed., 1977, eq. 5.6):
Var(R_hat) = sum_h N_h^2 (1 - n_h / N_h) s_h^2 / n_h with s_h^2 = n_h / (n_h - 1) * p_h (1 - p_h),
p_h = r_h / n_h. A normal-approximation interval R_hat +- z * sqrt(Var) is reported, its lower end raised
to the number of relevant documents actually found. A stratum with n_h = 1 < N_h has no variance
estimate (NaN).

Example: a stratum of N = 90 documents, n = 9 sampled (pi = 0.1), 3 found relevant -> R_hat = 30.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
import pandas as pd

from .depth import contributing_runs
from .ranking import Runs, ranked_entries, topic_rng
from .result import PoolResult, make_entries, restrict_provenance, union_of_lists

__all__ = ["DEFAULT_STRATA", "RelevantEstimate", "Stratum", "estimate_relevant", "stratified_pool"]


class Stratum(NamedTuple):
    """Documents whose min_depth is in [first, last] are sampled at ``rate`` (0 < rate <= 1)."""

    first: int
    last: int
    rate: float


DEFAULT_STRATA = (Stratum(1, 10, 1.0), Stratum(11, 100, 0.1))


def _check_strata(strata: Sequence[Stratum]) -> list[Stratum]:
    strata = [Stratum(int(a), int(b), float(r)) for a, b, r in strata]
    if not strata:
        raise ValueError("strata: at least one stratum is needed")
    previous = 0
    for s in strata:
        if not (1 <= s.first <= s.last):
            raise ValueError(f"strata: bad rank range {s.first}-{s.last}")
        if s.first <= previous:
            raise ValueError("strata: ranges must be increasing and must not overlap")
        if not (0 < s.rate <= 1):
            raise ValueError(f"strata: rate {s.rate} is not in (0, 1]")
        previous = s.last
    return strata


def stratified_pool(
    runs: Runs,
    strata: Sequence[Stratum] = DEFAULT_STRATA,
    *,
    seed: int = 0,
    tags: Iterable[str] | None = None,
    teams: Mapping[str, str] | None = None,
    priorities: Mapping[str, int] | None = None,
    runs_per_team: int | None = None,
) -> PoolResult:
    """Sample the pool stratum by stratum (see the module docstring); reproducible for a given seed.

    Entries carry ``stratum`` (1-based index into ``strata``) and ``inclusion_probability``;
    ``params["stratum_sizes"]`` holds N_h per topic ({qid: [N_1, N_2, ...]}), which inferred measures
    need. The sample of a topic depends only on (seed, qid) and the runs, not on the other topics.
    """
    strata = _check_strata(strata)
    chosen = contributing_runs(runs, tags=tags, teams=teams, priorities=priorities,
                               runs_per_team=runs_per_team)
    ranked = ranked_entries(chosen, strata[-1].last)
    union = union_of_lists(ranked)
    firsts = np.array([s.first for s in strata])
    lasts = np.array([s.last for s in strata])
    min_depth = union["min_depth"].to_numpy()
    h = np.searchsorted(lasts, min_depth)  # first stratum whose last rank >= min_depth
    h_clip = np.minimum(h, len(strata) - 1)
    inside = (h < len(strata)) & (min_depth >= firsts[h_clip])
    union = union[inside].reset_index(drop=True)
    h = h[inside]
    keep = np.zeros(len(union), dtype=bool)
    prob = np.ones(len(union))
    sizes: dict[str, list[int]] = {}
    qids = union["qid"].to_numpy(dtype=object)
    starts = np.flatnonzero(np.r_[True, qids[1:] != qids[:-1]]) if len(qids) else np.array([], dtype=int)
    for lo, hi in zip(starts, np.r_[starts[1:], len(qids)].astype(int)[:len(starts)], strict=True):
        qid = str(qids[lo])
        rng = topic_rng(seed, qid)
        sizes[qid] = []
        for index, stratum in enumerate(strata):
            members = lo + np.flatnonzero(h[lo:hi] == index)
            n_pop = len(members)
            sizes[qid].append(n_pop)
            if n_pop == 0:
                continue
            n_sample = min(n_pop, max(1, int(np.floor(stratum.rate * n_pop + 0.5))))
            picked = members if n_sample == n_pop else rng.choice(members, n_sample, replace=False)
            keep[picked] = True
            prob[members] = n_sample / n_pop
    entries = make_entries(union[keep], stratum=h[keep] + 1, inclusion_probability=prob[keep])
    params = {"strata": [list(s) for s in strata], "seed": seed, "runs": list(chosen),
              "stratum_sizes": sizes}
    return PoolResult("sampled", params, entries, restrict_provenance(ranked, entries))


class RelevantEstimate(NamedTuple):
    """Per-topic table (qid, judged, relevant_found, estimate, std_error, ci_low, ci_high) and totals."""

    per_topic: pd.DataFrame
    total: float
    std_error: float
    ci_low: float
    ci_high: float


def estimate_relevant(judged: pd.DataFrame, *, confidence: float = 0.95) -> RelevantEstimate:
    """Horvitz-Thompson estimate of the number of relevant documents, per topic and in total.

    Args:
        judged: one row per judged sampled document with columns ``qid``, ``inclusion_probability``,
            ``relevant`` (bool, or a grade: > 0 counts as relevant) and optionally ``stratum``; rows
            without a stratum are grouped by inclusion probability. Every sampled document must be judged
            (the estimator assumes the judged set is the sample).
        confidence: level of the normal-approximation interval.

    Totals add the topics' estimates and variances (topics are sampled independently).
    """
    missing = [c for c in ("qid", "inclusion_probability", "relevant") if c not in judged.columns]
    if missing:
        raise ValueError(f"estimate_relevant: missing column(s) {', '.join(missing)}")
    qids = judged["qid"].astype(str).to_numpy(dtype=object)
    pi_row = judged["inclusion_probability"].to_numpy(dtype=np.float64)
    rel_row = (judged["relevant"].to_numpy(dtype=np.float64) > 0).astype(np.float64)
    if ((pi_row <= 0) | (pi_row > 1)).any():
        raise ValueError("estimate_relevant: inclusion probabilities must be in (0, 1]")
    stratum = judged["stratum"] if "stratum" in judged.columns else pd.Series([pd.NA] * len(judged))
    labels = np.where(stratum.isna().to_numpy(), "pi=" + pd.Series(pi_row).astype(str).to_numpy(),
                      stratum.astype(str).to_numpy())
    topic_code, topic_names = pd.factorize(qids)
    cell, _ = pd.factorize(pd.MultiIndex.from_arrays([topic_code, labels]))
    cells = int(cell.max(initial=-1)) + 1
    n = np.bincount(cell, minlength=cells).astype(np.float64)
    r = np.bincount(cell, weights=rel_row, minlength=cells)
    pi = np.zeros(cells)
    pi[cell] = pi_row
    spread = np.zeros(cells)
    np.maximum.at(spread, cell, np.abs(pi_row - pi[cell]))
    if (spread > 1e-12).any():
        raise ValueError("estimate_relevant: inclusion probability differs within a stratum")
    cell_topic = np.zeros(cells, dtype=np.int64)
    cell_topic[cell] = topic_code
    big_n = n / pi
    p = r / n
    with np.errstate(divide="ignore", invalid="ignore"):
        s2 = np.where(n > 1, n / (n - 1) * p * (1 - p), np.nan)
        variance = np.where(pi >= 1, 0.0, big_n**2 * (1 - n / big_n) * s2 / n)
    topics = len(topic_names)
    per_topic = pd.DataFrame({
        "qid": [str(q) for q in topic_names],
        "judged": np.bincount(cell_topic, weights=n, minlength=topics).astype(np.int64),
        "relevant_found": np.bincount(cell_topic, weights=r, minlength=topics).astype(np.int64),
        "estimate": np.bincount(cell_topic, weights=r / pi, minlength=topics),
        "variance": np.bincount(cell_topic, weights=variance, minlength=topics),  # NaN propagates
    })
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    per_topic["std_error"] = np.sqrt(per_topic["variance"])
    per_topic["ci_low"] = np.maximum(per_topic["estimate"] - z * per_topic["std_error"],
                                     per_topic["relevant_found"])
    per_topic["ci_high"] = per_topic["estimate"] + z * per_topic["std_error"]
    per_topic = per_topic.drop(columns="variance")
    total = float(per_topic["estimate"].sum())
    std_error = float(np.sqrt((per_topic["std_error"] ** 2).sum(min_count=1)))
    if per_topic["std_error"].isna().any():
        std_error = float("nan")
    found = float(per_topic["relevant_found"].sum())
    return RelevantEstimate(per_topic, total, std_error, max(total - z * std_error, found),
                            total + z * std_error)

"""How many relevant documents does a topic have? Estimates of R beyond the ones found. Django-free.

Recall needs R, and a pool finds only part of it. Two estimators, chosen by how the pool was built:

**Horvitz-Thompson** (sampled pools; D. G. Horvitz and D. J. Thompson, JASA 47, 1952) -- see
:func:`pooling.strategies.estimate_relevant`. :func:`sampled_estimate` feeds it the judged part of each
stratum: a stratum of ``N_h`` candidates whose sample has ``j_h`` judgments so far is a simple random
sample of size ``j_h`` (assessors see the sample in a seeded random order), so each judged document stands
for ``N_h / j_h`` documents. Unbiased for the relevant documents of the sampled population.

**Accumulation curve over pool depth** (any other pool; the extrapolation of J. Zobel, "How reliable are
the results of large-scale information retrieval experiments?", SIGIR 1998, sec. 4: the number of new
relevant documents found at each further pool depth decays like a power of the depth). Per topic:

* ``D`` = the *complete depth*: the largest ``d`` such that every document some contributing run ranks
  within ``d`` is judged (a depth-k pool gives ``D >= k``);
* ``N_d`` = relevant documents whose best rank over the contributing runs (min_depth) is ``d``, d <= D;
* fit ``N_d ~ Poisson(mu_d)``, ``log mu_d = a + b log d`` with ``b <= 0`` by maximum likelihood;
* ``R_hat = max(known, sum_{d<=D} N_d + sum_{d=D+1}^{M} mu_d)`` with ``M`` the deepest rank the runs
  return for the topic (at most 1000).

Assumptions: the decay seen within ``D`` goes on to depth ``M`` (Zobel's observation on TREC pools), the
rate never grows with depth, and relevant documents no contributing run retrieves within ``M`` are not
counted (they cannot change any run's score either). The interval is ``R_hat +- z sqrt(g' C g + T)``:
the delta-method variance of the tail ``T`` from the fit's covariance ``C`` (inverse Fisher information)
plus the Poisson variance of the documents still to be found; its lower end is never below ``known``.

Example: ``N = [2, 1]`` (D = 2) fits ``mu_d = 2 / d`` exactly; runs to depth 10 give
``R_hat = 3 + 2 (1/3 + ... + 1/10) = 5.858``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
import pandas as pd

from pooling.strategies.sampling import estimate_relevant

__all__ = ["CurveEstimate", "depth_curves", "power_law_tail", "sampled_estimate"]


class CurveEstimate(NamedTuple):
    """Fit of the new-relevant-per-depth curve: ``tail`` = expected relevant documents below ``D``."""

    found: float        # sum_{d<=D} N_d
    tail: float
    std_error: float
    intercept: float    # a
    slope: float        # b (<= 0)


def _loglik(a: float, b: float, x: np.ndarray, n: np.ndarray) -> float:
    eta = a + b * x
    return float((n * eta - np.exp(eta)).sum())


def power_law_tail(new_relevant: Sequence[float], *, max_depth: int) -> CurveEstimate:
    """Fit ``N_d ~ Poisson(exp(a + b log d))`` (d = 1..D, ``b <= 0``) and sum the fitted curve over
    ``d = D + 1 .. max_depth``. Newton's method with step halving on the (concave) log-likelihood; a
    positive slope is replaced by the boundary solution ``b = 0``, a slope below -30 is cut there.

    >>> round(power_law_tail([2, 1], max_depth=10).tail, 4)   # 2 (1/3 + ... + 1/10)
    2.8579
    """
    n = np.asarray(new_relevant, dtype=np.float64)
    depth = n.size
    if depth < 2:
        raise ValueError("a depth curve needs at least 2 complete depths")
    x = np.log(np.arange(1, depth + 1, dtype=np.float64))
    found = float(n.sum())
    beyond = np.log(np.arange(depth + 1, max(max_depth, depth) + 1, dtype=np.float64))
    if found == 0:
        return CurveEstimate(0.0, 0.0, 0.0, -np.inf, 0.0)
    a, b = float(np.log(n.mean())), 0.0
    current = _loglik(a, b, x, n)
    for _ in range(100):  # the log-likelihood is concave: Newton with step halving converges
        mu = np.exp(a + b * x)
        grad = np.array([(n - mu).sum(), ((n - mu) * x).sum()])
        info = np.array([[mu.sum(), (mu * x).sum()], [(mu * x).sum(), (mu * x * x).sum()]])
        step = np.linalg.pinv(info) @ grad
        scale = 1.0
        while True:
            na, nb = a + scale * step[0], b + scale * step[1]
            candidate = _loglik(na, nb, x, n)
            if candidate >= current or scale < 1e-9:
                break
            scale /= 2
        gain = candidate - current
        a, b, current = na, nb, max(candidate, current)
        if gain <= 1e-12 * (1.0 + abs(current)) or b < -30.0:
            break
    if b >= 0.0:  # the maximum lies beyond b = 0: the constrained one is a constant rate, the mean count
        a, b = float(np.log(n.mean())), 0.0
    elif b < -30.0:  # everything found at depth 1: the curve drops to nothing
        b = -30.0
    mu = np.exp(a + b * x)
    info = np.array([[mu.sum(), (mu * x).sum()], [(mu * x).sum(), (mu * x * x).sum()]])
    tail_terms = np.exp(a + b * beyond)
    tail = float(tail_terms.sum())
    gradient = np.array([tail, float((tail_terms * beyond).sum())])
    variance = float(gradient @ np.linalg.pinv(info) @ gradient) + tail
    return CurveEstimate(found, tail, float(np.sqrt(max(variance, 0.0))), a, b)


def _grades(qrels: pd.DataFrame) -> pd.DataFrame:
    return qrels[["qid", "docno", "rel"]].astype({"qid": str, "docno": str})


def depth_curves(ranked: pd.DataFrame, qrels: pd.DataFrame, *, relevant_from: int = 1,
                 run_depth: Mapping[str, int] | None = None, confidence: float = 0.95) -> pd.DataFrame:
    """Accumulation-curve estimate of R for every topic of ``qrels`` (see the module docstring).

    Args:
        ranked: the contributing runs' rankings, ``qid, docno, rank`` (1-based; e.g. from
            :func:`pooling.strategies.ranked_entries`), to some depth cap (100 is plenty).
        qrels: ``qid, docno, rel``.
        run_depth: qid -> deepest rank the runs return (``M``); default: the deepest rank in ``ranked``.

    Returns one row per qrels topic: qid, known_relevant, complete_depth, found_within, estimate, ci_low,
    ci_high, slope, method ("accumulation curve", or why it does not apply: then estimate = known).
    """
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    grades = _grades(qrels)
    known = (grades["rel"] >= relevant_from).groupby(grades["qid"]).sum()
    best = (ranked.astype({"qid": str, "docno": str}).groupby(["qid", "docno"], sort=False)["rank"].min()
            .reset_index())
    best = best.merge(grades, on=["qid", "docno"], how="left")
    judged = best["rel"].notna().to_numpy()
    relevant = (best["rel"].fillna(-1).to_numpy() >= relevant_from)
    first_unjudged = best[~judged].groupby("qid")["rank"].min()
    deepest = best.groupby("qid")["rank"].max()
    rows = []
    for qid in known.index:
        r_known = int(known[qid])
        if qid not in deepest.index:
            rows.append(_known_only(qid, r_known, "no contributing run retrieved this topic"))
            continue
        complete = int(first_unjudged[qid]) - 1 if qid in first_unjudged.index else int(deepest[qid])
        in_topic = (best["qid"] == qid).to_numpy()
        if complete < 2:
            rows.append(_known_only(qid, r_known, f"complete depth {complete} < 2: nothing to fit"))
            continue
        ranks = best["rank"].to_numpy()[in_topic & relevant]
        counts = np.bincount(ranks[ranks <= complete], minlength=complete + 1)[1:]
        if counts.sum() == 0:
            rows.append(_known_only(qid, r_known, f"no relevant document within the complete depth {complete}"))
            continue
        m = int(run_depth[qid]) if run_depth is not None and qid in run_depth else int(deepest[qid])
        fit = power_law_tail(counts, max_depth=m)
        estimate = max(float(r_known), fit.found + fit.tail)
        rows.append({"qid": qid, "known_relevant": r_known, "complete_depth": complete,
                     "found_within": int(fit.found), "estimate": estimate,
                     "ci_low": max(float(r_known), fit.found + fit.tail - z * fit.std_error),
                     "ci_high": max(float(r_known), fit.found + fit.tail + z * fit.std_error),
                     "slope": fit.slope, "method": "accumulation curve"})
    return pd.DataFrame(rows, columns=["qid", "known_relevant", "complete_depth", "found_within", "estimate",
                                       "ci_low", "ci_high", "slope", "method"])


def _known_only(qid: str, known: int, why: str) -> dict:
    return {"qid": qid, "known_relevant": known, "complete_depth": np.nan, "found_within": np.nan,
            "estimate": float(known), "ci_low": float(known), "ci_high": np.nan, "slope": np.nan,
            "method": f"known only ({why})"}


def sampled_estimate(entries: pd.DataFrame, qrels: pd.DataFrame, stratum_sizes: Mapping[str, Sequence[int]],
                     *, relevant_from: int = 1, confidence: float = 0.95) -> pd.DataFrame:
    """Horvitz-Thompson estimate per topic from a stratified sampled pool (see the module docstring).

    Args:
        entries: the pool's entries, ``qid, docno, stratum`` (1-based), ``inclusion_probability``.
        qrels: ``qid, docno, rel``; only the pool's documents are used.
        stratum_sizes: qid -> ``[N_1, N_2, ...]`` (the pool's ``params["stratum_sizes"]``).

    Returns per sampled topic: qid, judged, relevant_found, estimate, std_error, ci_low, ci_high,
    complete (False when some non-empty stratum has no judgment yet: the estimate is then NaN).
    """
    grades = _grades(qrels)
    sample = entries[["qid", "docno", "stratum", "inclusion_probability"]].astype({"qid": str, "docno": str})
    judged = sample.merge(grades, on=["qid", "docno"], how="inner")
    judged = judged.assign(relevant=judged["rel"].to_numpy() >= relevant_from)
    counts = judged.groupby(["qid", "stratum"]).size()
    sizes = []
    for (qid, stratum), j in counts.items():
        listed = stratum_sizes.get(qid)
        big_n = listed[int(stratum) - 1] if listed is not None and int(stratum) - 1 < len(listed) else None
        sizes.append((qid, stratum, float(j) / big_n if big_n else np.nan))
    pi = pd.DataFrame(sizes, columns=["qid", "stratum", "pi_judged"])
    judged = judged.merge(pi, on=["qid", "stratum"], how="left")
    # no recorded stratum size: the probability the pool recorded for the whole sample
    judged["pi_judged"] = judged["pi_judged"].fillna(judged["inclusion_probability"]).clip(upper=1.0)
    frame = judged.rename(columns={"pi_judged": "p"})[["qid", "stratum", "relevant", "p"]]
    frame = frame.rename(columns={"p": "inclusion_probability"})
    columns = ["qid", "judged", "relevant_found", "estimate", "std_error", "ci_low", "ci_high", "complete"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    per_topic = estimate_relevant(frame, confidence=confidence).per_topic
    missing = set()
    for qid, listed in stratum_sizes.items():
        for h, big_n in enumerate(listed, start=1):
            if big_n and (qid, h) not in counts.index:
                missing.add(str(qid))
    per_topic["complete"] = ~per_topic["qid"].isin(missing)
    for column in ("estimate", "std_error", "ci_low", "ci_high"):
        per_topic.loc[~per_topic["complete"], column] = np.nan
    return per_topic[columns]

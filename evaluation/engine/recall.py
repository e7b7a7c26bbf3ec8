"""How many relevant documents does a topic have? Estimates of R beyond the ones found. Django-free.

Recall needs R, and a pool finds only part of it. Two estimators, chosen by how the pool was built:

**Horvitz-Thompson** (sampled pools; D. G. Horvitz and D. J. Thompson, JASA 47, 1952) -- see
:func:`pooling.strategies.estimate_relevant`. :func:`sampled_estimate` feeds it the judged part of each
stratum: a stratum of ``N_h`` candidates whose sample has ``j_h`` judgments so far is a simple random
sample of size ``j_h`` (assessors see the sample in a seeded random order), so each judged document stands
for ``N_h / j_h`` documents. Unbiased for the relevant documents of the sampled population.

**Accumulation curve over pool depth** (any other pool; after J. Zobel, "How reliable are the results of
large-scale information retrieval experiments?", SIGIR 1998, sec. 4: the rate at which deeper pools find
new relevant documents decays like a power of the depth). Per topic:

* ``D`` = the *complete depth*: the largest ``d`` such that every document some contributing run ranks
  within ``d`` is judged (a depth-k pool gives ``D >= k``);
* ``n_d`` = documents whose best rank over the contributing runs (min_depth) is ``d``: what a depth-d pool
  adds to a depth-(d-1) pool, known from the runs without any judgment (counted to depth 100; deeper, the
  mean of depths 91-100 is assumed);
* ``N_d`` = the relevant ones among them, d <= D;
* fit ``N_d ~ Poisson(n_d p_d)`` with ``p_d = exp(a + b log d)``, ``b <= 0``, by maximum likelihood: the
  share of newly pooled documents that are relevant decays as a power of the depth;
* ``R_hat = max(known, sum_{d<=D} N_d + sum_{d=D+1}^{M} n_d p_d)`` with ``M`` the deepest rank the runs
  return for the topic (at most 1000).

Assumptions: the decay seen within ``D`` goes on to depth ``M``, the share never grows with depth, and
relevant documents no contributing run retrieves within ``M`` are not counted (they cannot change any
run's score either). With few complete depths (TREC-COVID round 2: 7) the extrapolation is weak, and the
interval says so: ``R_hat +- z sqrt(g' C g + T)``, the delta-method variance of the tail ``T`` from the
fit's covariance ``C`` (inverse Fisher information) plus the Poisson variance of the documents still to
be found; its lower end is never below ``known``.

Example: two runs adding two new documents at every depth (``n_d = 2``), ``N = [2, 1]`` (D = 2) fits
``p_d = 1 / d`` exactly; runs to depth 10 give ``R_hat = 3 + 2 (1/3 + ... + 1/10) = 5.858``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
import pandas as pd

from pooling.strategies.sampling import estimate_relevant

__all__ = ["CurveEstimate", "curves_from_best", "depth_curves", "power_law_tail", "sampled_estimate"]


class CurveEstimate(NamedTuple):
    """Fit of the new-relevant-per-depth curve: ``tail`` = expected relevant documents below ``D``."""

    found: float        # sum_{d<=D} N_d
    tail: float
    std_error: float
    intercept: float    # a
    slope: float        # b (<= 0)


def _loglik(a: float, b: float, x: np.ndarray, n: np.ndarray, offset: np.ndarray) -> float:
    eta = offset + a + b * x
    return float((n * eta - np.exp(eta)).sum())


def power_law_tail(new_relevant: Sequence[float], *, max_depth: int,
                   new_documents: Sequence[float] | None = None) -> CurveEstimate:
    """Fit ``N_d ~ Poisson(n_d exp(a + b log d))`` (d = 1..D, ``b <= 0``) and sum the fitted curve over
    ``d = D + 1 .. max_depth``. ``new_documents`` gives ``n_d`` for d = 1..max_depth (default 1 at every
    depth: then the curve models ``N_d`` itself). Newton's method with step halving on the (concave)
    log-likelihood; a positive slope is replaced by the boundary solution ``b = 0``, a slope below -30 is
    cut there.

    >>> round(power_law_tail([2, 1], max_depth=10, new_documents=[2] * 10).tail, 4)   # 2 (1/3 + ... + 1/10)
    2.8579
    """
    n = np.asarray(new_relevant, dtype=np.float64)
    depth = n.size
    if depth < 2:
        raise ValueError("a depth curve needs at least 2 complete depths")
    last = max(max_depth, depth)
    exposure = np.ones(last) if new_documents is None else np.asarray(new_documents, dtype=np.float64)[:last]
    if exposure.size < last:
        raise ValueError(f"new_documents needs a count for every depth up to {last}")
    offset = np.log(np.maximum(exposure[:depth], 1e-300))
    x = np.log(np.arange(1, depth + 1, dtype=np.float64))
    seen = exposure[:depth] > 0
    n, x, offset = n[seen], x[seen], offset[seen]
    found = float(n.sum())
    beyond = np.log(np.arange(depth + 1, last + 1, dtype=np.float64))
    beyond_exposure = exposure[depth:last]
    if found == 0:
        return CurveEstimate(0.0, 0.0, 0.0, -np.inf, 0.0)
    constant = float(np.log(found / np.exp(offset).sum()))
    a, b = constant, 0.0
    current = _loglik(a, b, x, n, offset)
    for _ in range(100):  # the log-likelihood is concave: Newton with step halving converges
        mu = np.exp(offset + a + b * x)
        grad = np.array([(n - mu).sum(), ((n - mu) * x).sum()])
        step = np.linalg.pinv(_information(mu, x)) @ grad
        scale = 1.0
        while True:
            na, nb = a + scale * step[0], b + scale * step[1]
            candidate = _loglik(na, nb, x, n, offset)
            if candidate >= current or scale < 1e-9:
                break
            scale /= 2
        gain = candidate - current
        a, b, current = na, nb, max(candidate, current)
        if gain <= 1e-12 * (1.0 + abs(current)) or b < -30.0:
            break
    if b >= 0.0:  # the maximum lies beyond b = 0: the constrained one is a constant share
        a, b = constant, 0.0
    elif b < -30.0:  # everything found at depth 1: the curve drops to nothing
        b = -30.0
    info = _information(np.exp(offset + a + b * x), x)
    tail_terms = beyond_exposure * np.exp(a + b * beyond)
    tail = float(tail_terms.sum())
    gradient = np.array([tail, float((tail_terms * beyond).sum())])
    variance = float(gradient @ np.linalg.pinv(info) @ gradient) + tail
    return CurveEstimate(found, tail, float(np.sqrt(max(variance, 0.0))), a, b)


def _information(mu: np.ndarray, x: np.ndarray) -> np.ndarray:
    return np.array([[mu.sum(), (mu * x).sum()], [(mu * x).sum(), (mu * x * x).sum()]])


def _grades(qrels: pd.DataFrame) -> pd.DataFrame:
    return qrels[["qid", "docno", "rel"]].astype({"qid": str, "docno": str})


def _best_ranks(ranked: pd.DataFrame, grades: pd.DataFrame) -> pd.DataFrame:
    """qid, docno, rank (the best any run gives the document), rel (its grade, NaN if unjudged): one row
    per distinct (qid, docno) of ``ranked``, found on integer codes (a string group-by and merge over
    every run's lines cost ten times more)."""
    n = len(ranked)
    qid_codes, qids = pd.factorize(pd.concat([ranked["qid"].astype(str), grades["qid"]], ignore_index=True))
    doc_codes, docnos = pd.factorize(pd.concat([ranked["docno"].astype(str), grades["docno"]], ignore_index=True))
    keys = qid_codes.astype(np.int64) * max(len(docnos), 1) + doc_codes
    rank = ranked["rank"].to_numpy(dtype=np.int64)
    order = np.lexsort((rank, keys[:n]))
    first = order[np.concatenate(([True], keys[:n][order][1:] != keys[:n][order][:-1]))] if n else order
    graded = pd.Series(grades["rel"].to_numpy(dtype=float), index=keys[n:])
    rel = graded.reindex(keys[first]).to_numpy() if len(graded) else np.full(first.size, np.nan)
    return pd.DataFrame({"qid": qids[qid_codes[first]].astype(str), "docno": docnos[doc_codes[first]].astype(str),
                         "rank": rank[first], "rel": rel})


def depth_curves(ranked: pd.DataFrame, qrels: pd.DataFrame, *, relevant_from: int = 1,
                 run_depth: Mapping[str, int] | None = None, confidence: float = 0.95) -> pd.DataFrame:
    """Accumulation-curve estimate of R for every topic of ``qrels`` (see the module docstring).

    Args:
        ranked: the contributing runs' rankings, ``qid, docno, rank`` (1-based; e.g. from
            :func:`pooling.strategies.ranked_entries`), to some depth cap (100 is plenty).
        qrels: ``qid, docno, rel``.
        run_depth: qid -> deepest rank the runs return (``M``); default: the deepest rank in ``ranked``.

    Returns one row per qrels topic: qid, known_relevant, complete_depth, found_within, estimate, ci_low,
    ci_high, slope, method ("accumulation curve", or why it does not apply: then estimate = known), note
    (what the fit rests on).
    """
    grades = _grades(qrels)
    known = (grades["rel"] >= relevant_from).groupby(grades["qid"]).sum()
    best = _best_ranks(ranked, grades)
    codes, topics = pd.factorize(best["qid"], sort=False)
    return curves_from_best(list(map(str, topics)), codes, best["rank"].to_numpy(dtype=np.int64),
                            best["rel"].to_numpy(dtype=float), known, relevant_from=relevant_from,
                            run_depth=run_depth, confidence=confidence)


def curves_from_best(topics: Sequence[str], topic: np.ndarray, rank: np.ndarray, rel: np.ndarray,
                     known: Mapping[str, int] | pd.Series, *, relevant_from: int = 1,
                     run_depth: Mapping[str, int] | None = None, confidence: float = 0.95) -> pd.DataFrame:
    """:func:`depth_curves` on arrays, one element per distinct pooled-or-not document of the runs' tops:
    ``topic`` (index into ``topics``), ``rank`` (the best any contributing run gives it, 1-based) and
    ``rel`` (its grade, NaN when unjudged). ``known``: qid -> known relevant documents, for every qrels
    topic (the rows of the result, in that order)."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    topic = np.asarray(topic, dtype=np.int64)
    rank = np.asarray(rank, dtype=np.int64)
    rel = np.asarray(rel, dtype=float)
    judged = ~np.isnan(rel)
    relevant = judged & (np.nan_to_num(rel, nan=-1.0) >= relevant_from)
    order = np.argsort(topic, kind="stable")  # each topic's rows together (no scan per topic)
    bounds = np.searchsorted(topic[order], np.arange(len(topics) + 1))
    position = {str(q): i for i, q in enumerate(topics)}
    rows = []
    for qid, r_known in (known.items() if hasattr(known, "items") else known):
        r_known = int(r_known)
        code = position.get(str(qid))
        in_topic = order[bounds[code]:bounds[code + 1]] if code is not None else order[:0]
        if not in_topic.size:
            rows.append(_known_only(qid, r_known, "no contributing run retrieved this topic"))
            continue
        all_ranks = rank[in_topic]
        deepest = int(all_ranks.max())
        unjudged = all_ranks[~judged[in_topic]]
        complete = int(unjudged.min()) - 1 if unjudged.size else deepest
        if complete < 2:
            rows.append(_known_only(qid, r_known, f"complete depth {complete} < 2: nothing to fit"))
            continue
        ranks = all_ranks[relevant[in_topic]]
        counts = np.bincount(ranks[ranks <= complete], minlength=complete + 1)[1:]
        if counts.sum() == 0:
            rows.append(_known_only(qid, r_known, f"no relevant document within the complete depth {complete}"))
            continue
        m = max(int(run_depth[qid]) if run_depth is not None and qid in run_depth else deepest, complete)
        added = np.bincount(all_ranks, minlength=deepest + 1)[1:].astype(np.float64)
        if m > added.size:  # below the ranks given: as many new documents per depth as in the last ten
            added = np.concatenate([added, np.full(m - added.size, added[-10:].mean())])
        fit = power_law_tail(counts, max_depth=m, new_documents=added)
        estimate = max(float(r_known), fit.found + fit.tail)
        rows.append({"qid": qid, "known_relevant": r_known, "complete_depth": complete,
                     "found_within": int(fit.found), "estimate": estimate,
                     "ci_low": max(float(r_known), fit.found + fit.tail - z * fit.std_error),
                     "ci_high": max(float(r_known), fit.found + fit.tail + z * fit.std_error),
                     "slope": fit.slope, "method": "accumulation curve",
                     "note": f"fitted on {complete} complete depths, extrapolated to depth {m}"
                             + (" (few depths: a weak extrapolation)" if complete < 20 else "")})
    return pd.DataFrame(rows, columns=["qid", "known_relevant", "complete_depth", "found_within", "estimate",
                                       "ci_low", "ci_high", "slope", "method", "note"])


def _known_only(qid: str, known: int, why: str) -> dict:
    return {"qid": qid, "known_relevant": known, "complete_depth": np.nan, "found_within": np.nan,
            "estimate": float(known), "ci_low": float(known), "ci_high": np.nan, "slope": np.nan,
            "method": f"known only ({why})", "note": ""}


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

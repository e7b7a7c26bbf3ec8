"""Measures the workbench adds to trec_eval, each under its own name (``-m all_ext`` lists them).

``judged.k`` (prints ``judged_k``)
    Fraction of the top ``k`` ranks holding a judged document (grade >= 0): ``|{i <= k: judged_i}| / k``;
    like ``P_k``, missing ranks count as not judged. The usual check that a run was pooled deeply enough
    (Sakai's "condensed list" caveat; Voorhees & Harman). Default ``k = 10``.
``rbp.p=0.8`` (prints ``rbp_p=0.8``; plain ``rbp`` uses ``p = 0.9``, trec_eval 10's default)
    Rank-biased precision (Moffat & Zobel, TOIS 2008), binary relevance at the ``-l`` level:
    ``RBP = (1 - p) sum_{i>=1} rel_i p^(i-1)``. Unjudged documents count as non-relevant.
``rbp_graded.p=0.8`` (prints ``rbp_graded_p=0.8``; plain ``rbp_graded`` uses ``p = 0.9``)
    Rank-biased precision with graded gains, as NIST's trec_eval computes its ``rbp`` (``m_rbp.c``, Ian
    Soboroff 2016, "normalize gains to [0,1], per email conversation with Alistair Moffat"; the figure TREC
    reports as ``rbp_p5``, e.g. TREC-COVID's ``RBP(p=.5)``): ``RBP = (1 - p) sum_{i>=1} g_i p^(i-1)`` with
    ``g_i = grade_i / max grade`` of the topic (trec_eval's gains ``0 .. max grade`` scaled to [0, 1] when
    the largest exceeds 1), 0 for unjudged, unpooled and negative grades; ``-l`` plays no part. The base
    only, no residual. With binary qrels it equals ``rbp``.
``rbp_resid.p=0.8``
    Its residual: the most RBP could grow if every unjudged retrieved document and every rank below the
    run were relevant, ``p^n + (1 - p) sum_{i<=n, unjudged_i} p^(i-1) = 1 - (1 - p) sum_{judged_i} p^(i-1)``
    ("unjudged" = no grade >= 0). Always reported (trec_eval 10 reports it only when an unjudged document
    was retrieved, and fixes ``p = 0.9``).
``ndcg_exp``, ``ndcg_exp_cut.k``
    nDCG with exponential gains ``2**grade - 1`` (Burges et al., ICML 2005), ideal from every judged
    document; see :mod:`~evaluation.engine.kernels_gain`.
``set_Fbeta.b1,b2`` (prints ``set_Fbeta_0.50``)
    ``F_beta = (1 + b^2) P R / (b^2 P + R)`` over the retrieved set (van Rijsbergen). trec_eval's
    ``set_F.x`` computes ``(x + 1) P R / (x P + R)``, i.e. ``x = beta^2``. 0 when nothing relevant is
    retrieved. Default ``beta = 1``.
``map_condensed``, ``ndcg_condensed``, ``ndcg_cut_condensed.k``
    AP and nDCG on the condensed list (Sakai, SIGIR 2007): unjudged documents are removed from the
    ranking first (what ``-J`` does to every measure), only for these measures.

>>> round((1 - 0.5) * (1 + 0.5 ** 2), 4)   # rbp.p=0.5 with relevant documents at ranks 1 and 3
0.625
>>> round((1 - 0.5) * (2 / 2 + 1 / 2 * 0.5 ** 2), 4)   # rbp_graded.p=0.5, grades 2 and 1 (max 2) there
0.5625
"""

from __future__ import annotations

import numpy as np

from evaluation.engine.context import Ctx, row_sum, safe_div
from evaluation.engine.spec import Measure, MeasureError


def rbp_p(m: Measure) -> float:
    p = 0.9
    for key, value in m.params:
        if key != "p":
            raise MeasureError(f"{m.name}: unknown parameter '{key}' (only p=...)")
        p = value
    if not 0.0 < p < 1.0:
        raise MeasureError(f"{m.name}: persistence p must be in (0, 1), not {p}")
    return p


def K_JUDGED(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    judged = ctx.cached("judged_cum", lambda: np.cumsum(ctx.valid & (ctx.rel >= 0), axis=1))
    return [ctx.prefix_at(judged, k) / float(k) for k in m.params]


def K_RBP(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    p = rbp_p(m)
    weight = np.where(ctx.valid, np.power(p, np.where(ctx.valid, ctx.pos, 0).astype(np.float64)), 0.0)
    if m.name == "rbp":
        return [(1.0 - p) * np.cumsum(np.where(ctx.isrel, weight, 0.0), axis=1)[:, -1]]
    judged = np.cumsum(np.where(ctx.rel >= 0, weight, 0.0), axis=1)[:, -1]
    return [1.0 - (1.0 - p) * judged]


def K_RBP_GRADED(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    p = rbp_p(m)
    if ctx.qrels is None:
        raise MeasureError(f"{m.name}: needs the qrels (the topics' highest grades)")
    top = ctx.cached("max_grade", lambda: ctx.qrels.highest_grades())[ctx.stat("topic")]
    grades = ctx.grade_gains
    gains = grades / top[:, None].astype(np.float64)
    # p^i as trec_eval builds it (cur_p = cur_p * p, left to right), so the sums match it bit for bit
    last = int(np.where(ctx.valid, ctx.pos, 0).max(initial=0))
    powers = np.concatenate(([1.0], np.cumprod(np.full(last, p))))
    weight = np.where(ctx.valid, powers[np.where(ctx.valid, ctx.pos, 0)], 0.0)
    return [(1.0 - p) * row_sum(np.where(gains != 0, gains * weight, 0.0))]


def K_FBETA(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    nrr = ctx.nrr.astype(np.float64)
    p, r = safe_div(nrr, ctx.n), safe_div(nrr, ctx.R)
    out = []
    for beta in m.params:
        b2 = beta * beta
        with np.errstate(divide="ignore", invalid="ignore"):
            f = (1.0 + b2) * p * r / (b2 * p + r)
        out.append(np.where(nrr > 0, f, 0.0))
    return out


KERNELS = {"judged": K_JUDGED, "rbp": K_RBP, "rbp_graded": K_RBP_GRADED, "rbp_resid": K_RBP,
           "set_Fbeta": K_FBETA}

#: condensed-list measures: computed by the kernel of the named trec_eval measure on the judged-only list
CONDENSED = {"map_condensed": "map", "ndcg_condensed": "ndcg", "ndcg_cut_condensed": "ndcg_cut"}

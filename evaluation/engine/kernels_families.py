"""Measure families the peers have and users ask for, each under its own name.

``rr_cut.k`` (MRR@k as the mean)
    ``1 / rank`` of the first relevant document within the top ``k``, else 0 (trec_eval issue 31; ranx's
    ``mrr@k``, ir_measures' ``RR@k``).
``err_cut.k``, ``nerr_cut.k``
    Expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009):
    ``ERR@k = sum_{r<=k} (1/r) R_r prod_{i<r} (1 - R_i)`` with ``R_i = (2^g_i - 1) / 2^g_max``, ``g_max`` the
    highest grade in the qrels (unjudged and non-positive grades: ``R = 0``). ``nERR@k`` divides by the
    ideal ranking's ERR@k.
``err_gdeval_cut.k``
    ERR@k as the TREC Web track's ``gdeval.pl`` (and ir_measures' ``ERR@k``, which runs it) computes it:
    ``g_max`` fixed at 4, its 0..4 scale, whatever the qrels' grades (binary qrels: ``R = 1/16``).
``f_cut.k`` and ``f_minkr_cut.k``
    ``F@k = 2 P@k Rec@k / (P@k + Rec@k)``: ``f_cut`` with ``Rec@k = rel_k / R`` (ranx's ``f1@k``),
    ``f_minkr_cut`` with ``Rec@k = rel_k / min(k, R)`` (the recall a ranking of ``k`` can reach).
``ap_minkr_cut.k``
    ``AP@k = sum_{r<=k, rel_r} P@r / min(k, R)`` (the textbook form that a perfect top ``k`` scores 1);
    ``map_cut.k`` (trec_eval, and ranx's ``map@k``) divides by ``R``.
``judged_min.k``
    Judged documents in the top ``k`` divided by ``min(k, retrieved)``: ir_measures' ``Judged@k`` (0.4.3;
    equal in ``tests/engine/test_vs_ir_measures.py``, except that ir_measures puts tied scores in ascending
    docno order where trec_eval's ranking takes descending) and Pyserini's ``judged.k`` (which pools the counts
    of all topics instead of averaging per topic). ``judged.k`` divides by ``k``: a rank a short run leaves
    empty counts as unjudged (the leaderboard's judged@10).

>>> round(1 / 1 * 0.4375 + 1 / 2 * 0.1875 * (1 - 0.4375), 6)   # ERR@2 of grades 2, 1 (g_max 2)
0.490234
"""

from __future__ import annotations

import numpy as np

from evaluation.engine.context import Ctx, safe_div
from evaluation.engine.gains import gain_model


def K_RR_CUT(ctx: Ctx, m) -> list[np.ndarray]:
    first = ctx.cached("fam_first_rel", lambda: np.where(
        ctx.isrel.any(axis=1), np.where(ctx.isrel, ctx.pos, np.iinfo(np.int64).max).min(axis=1) + 1, 0))
    return [np.where((first > 0) & (first <= k), 1.0 / np.maximum(first, 1), 0.0) for k in m.params]


def _g_max(ctx: Ctx) -> float:
    """The highest grade of the qrels (1 if none is positive)."""
    if getattr(ctx.qrels, "values", None) is not None:
        return float(max(ctx.qrels.values.max(initial=0.0), 0.0)) or 1.0
    levels = getattr(ctx.qrels, "levels", None)
    return float(max(int(np.max(levels)), 1)) if levels is not None and len(levels) else 1.0


def _err_terms(grades: np.ndarray, ranks: np.ndarray, g_max: float) -> np.ndarray:
    """Per entry: ``(1/r) R_r prod_{earlier} (1 - R_i)`` (rows left to right)."""
    stop = np.where(grades > 0, (np.exp2(grades) - 1.0) / np.exp2(g_max), 0.0)
    go_on = np.cumprod(1.0 - stop, axis=1)
    before = np.concatenate([np.ones((stop.shape[0], 1)), go_on[:, :-1]], axis=1) if stop.shape[1] else go_on
    return stop * before / ranks


#: gdeval's highest grade (``$MAX_JUDGMENT = 4``)
GDEVAL_G_MAX = 4.0


def K_ERR(ctx: Ctx, m) -> list[np.ndarray]:
    gdeval = m.name == "err_gdeval_cut"
    g_max = GDEVAL_G_MAX if gdeval else _g_max(ctx)
    grades = ctx.grade_gains
    run = ctx.cached("fam_err_gdeval" if gdeval else "fam_err",
                     lambda: np.cumsum(_err_terms(grades, ctx.rank, g_max), axis=1))
    out = []
    for k in m.params:
        err = ctx.prefix_at(run, k)
        if m.name != "nerr_cut":
            out.append(err)
            continue
        model = gain_model(ctx.qrels, ())
        ideal = model.ideal[ctx.stat("topic")]
        width = min(ideal.shape[1], k)
        ranks = np.broadcast_to(np.arange(1, width + 1, dtype=np.float64), (ideal.shape[0], width))
        best = _err_terms(ideal[:, :width], ranks, g_max).sum(axis=1) if width else np.zeros(ideal.shape[0])
        out.append(safe_div(err, best))
    return out


def K_F_CUT(ctx: Ctx, m) -> list[np.ndarray]:
    out = []
    for k in m.params:
        found = ctx.count_rel_before(k).astype(np.float64)
        precision = found / k
        recall = safe_div(found, ctx.R if m.name == "f_cut" else np.minimum(ctx.R, k))
        out.append(safe_div(2 * precision * recall, precision + recall))
    return out


def K_AP_MINKR(ctx: Ctx, m) -> list[np.ndarray]:
    return [safe_div(ctx.prefix_at(ctx.ap_cum, k), np.minimum(ctx.R, k)) for k in m.params]


def K_JUDGED_MIN(ctx: Ctx, m) -> list[np.ndarray]:
    judged = ctx.cached("judged_cum", lambda: np.cumsum(ctx.valid & (ctx.rel >= 0), axis=1))
    return [safe_div(ctx.prefix_at(judged, k), np.minimum(ctx.n, k)) for k in m.params]


KERNELS = {"rr_cut": K_RR_CUT, "err_cut": K_ERR, "nerr_cut": K_ERR, "err_gdeval_cut": K_ERR, "f_cut": K_F_CUT,
           "f_minkr_cut": K_F_CUT,
           "ap_minkr_cut": K_AP_MINKR, "judged_min": K_JUDGED_MIN}

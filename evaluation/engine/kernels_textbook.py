"""The textbook forms of the gain measures, and fallout and ROC, each under its own name.

Notation: rank ``i = 1, 2, ...``; ``g_i`` the grade of the document at rank ``i`` when positive, else 0
(unjudged and non-positive grades gain nothing); the *ideal* ranking holds every judged document with a
positive grade, best first.

``dcg``, ``dcg_cut.k``
    ``DCG@k = sum_{i<=k} g_i / log2(i + 1)`` (Järvelin & Kekäläinen's discount as Burges et al. and
    trec_eval 10 write it; trec_eval 9.0.8's ``ndcg_cut`` is this divided by ``ideal_dcg_cut``);
    ``dcg`` runs over the whole ranking.
``ideal_dcg``, ``ideal_dcg_cut.k``
    The same sum over the ideal ranking (every ideal document; its top ``k``).
``dcg_exp``, ``dcg_exp_cut.k``
    Exponential gains ``2^g_i - 1`` (Burges et al., ICML 2005), discount ``log2(i + 1)``.
``dcg_jk_cut.k``, ``ndcg_jk_cut.k`` (``dcg_jk_cut.10,b=3``: another log base)
    Järvelin & Kekäläinen's original DCG (TOIS 2002): ranks below the base ``b`` (default 2) are not
    discounted, the others by ``log_b i``: ``DCG_jk@k = sum_{i<=k, i<b} g_i + sum_{b<=i<=k} g_i / log_b i``;
    with ``b = 2``, ``g_1 + sum_{2<=i<=k} g_i / log2 i``. ``ndcg_jk_cut`` divides by the ideal ranking's.
``cg_cut.k``, ``ncg_cut.k``
    Cumulative gain ``CG@k = sum_{i<=k} g_i`` and ``NCG@k = CG@k / ideal CG@k`` (Järvelin &
    Kekäläinen 2002; the NCG TREC Deep Learning reports).
``fallout_cut.k``
    ``|{i <= k: judged non-relevant}| / |judged non-relevant of the topic|`` (relevance at the ``-l``
    level; Salton & McGill): the share of the known non-relevant documents the run shows by rank ``k``.
``roc_auc``
    The area under the ROC curve of the ranking over the judged documents: the share of (relevant,
    non-relevant) pairs the run orders correctly, judged documents it did not retrieve coming after all it
    retrieved and tying among themselves (a tie counts 1/2). Unjudged documents play no part.

Each is 0 when its denominator is (no ideal gain, no judged non-relevant or no relevant document).

>>> # ranks 1..4 with grades 3, 2, 0, 1: DCG@4 = 3/1 + 2/log2 3 + 0 + 1/log2 5
>>> round(3 + 2 / 1.584962500721156 + 1 / 2.321928094887362, 4)
4.6926
"""

from __future__ import annotations

import numpy as np

from evaluation.engine.context import Ctx, log2_table, row_sum, safe_div
from evaluation.engine.gains import gain_model
from evaluation.engine.kernels_gain import _ideal_at


def _grades(ctx: Ctx) -> np.ndarray:
    return ctx.grade_gains


def _exp_gains(ctx: Ctx) -> np.ndarray:
    return ctx.cached("tb_exp", lambda: np.where(_grades(ctx) > 0, np.exp2(_grades(ctx)) - 1.0, 0.0))


def _running(ctx: Ctx, key: str, gains: np.ndarray, discount) -> np.ndarray:
    return ctx.cached(key, lambda: np.cumsum(np.where(gains != 0, gains / discount, 0.0), axis=1))


def K_DCG(ctx: Ctx, m) -> list[np.ndarray]:
    exp = m.name.startswith("dcg_exp")
    run = _running(ctx, "tb_dcg_exp" if exp else "tb_dcg", _exp_gains(ctx) if exp else _grades(ctx), ctx.discount)
    if m.spec.kind == "single":
        return [run[:, -1] if run.shape[1] else np.zeros(ctx.rows)]
    return [ctx.prefix_at(run, k) for k in m.params]


def K_IDEAL_DCG(ctx: Ctx, m) -> list[np.ndarray]:
    model = gain_model(ctx.qrels, ())
    topic = ctx.stat("topic")
    if m.spec.kind == "single":
        return [_ideal_at(model, topic, model.n_ideal[topic])]
    return [_ideal_at(model, topic, k) for k in m.params]


def _jk_discount(ranks: np.ndarray, base: float) -> np.ndarray:
    """1 below the base, ``log_b(rank)`` from it on (``log2`` from libm's table, as everywhere)."""
    logs = log2_table(int(ranks.max(initial=1)) + 1)[ranks.astype(np.int64)]
    return np.where(ranks < base, 1.0, logs / np.log2(base))


def _ideal_cum(ctx: Ctx, key: str, discount) -> tuple[np.ndarray, np.ndarray]:
    """(running sum over each row's ideal ranking, its length) for a discount of the 1-based ideal ranks."""
    def make():
        model = gain_model(ctx.qrels, ())
        topic = ctx.stat("topic")
        ideal = model.ideal[topic]
        ranks = np.broadcast_to(np.arange(1, ideal.shape[1] + 1, dtype=np.float64), ideal.shape)
        return np.cumsum(np.where(ideal != 0, ideal / discount(ranks), 0.0), axis=1), model.n_ideal[topic]
    return ctx.cached(key, make)


def _at(cum: np.ndarray, length: np.ndarray, k: int) -> np.ndarray:
    upto = np.minimum(length, k)
    if cum.shape[1] == 0:
        return np.zeros(cum.shape[0])
    return np.where(upto > 0, cum[np.arange(cum.shape[0]), np.clip(upto - 1, 0, cum.shape[1] - 1)], 0.0)


def K_DCG_JK(ctx: Ctx, m) -> list[np.ndarray]:
    base, cuts = m.params[0], m.params[1:]
    run = _running(ctx, ("tb_jk", base), _grades(ctx), _jk_discount(ctx.rank, base))
    out = []
    for k in cuts:
        dcg = ctx.prefix_at(run, k)
        if m.name == "dcg_jk_cut":
            out.append(dcg)
        else:
            ideal = _at(*_ideal_cum(ctx, ("tb_jk_ideal", base), lambda r: _jk_discount(r, base)), k)
            out.append(safe_div(dcg, ideal))
    return out


def K_CG(ctx: Ctx, m) -> list[np.ndarray]:
    run = ctx.cached("tb_cg", lambda: np.cumsum(_grades(ctx), axis=1))
    out = []
    for k in m.params:
        cg = ctx.prefix_at(run, k)
        if m.name == "cg_cut":
            out.append(cg)
        else:
            out.append(safe_div(cg, _at(*_ideal_cum(ctx, "tb_cg_ideal", np.ones_like), k)))
    return out


def K_FALLOUT(ctx: Ctx, m) -> list[np.ndarray]:
    nonrel = ctx.cached("tb_nonrel_cum", lambda: np.cumsum(
        ctx.valid & (ctx.rel >= 0) & (ctx.rel < ctx.level), axis=1))
    return [safe_div(ctx.prefix_at(nonrel, k), ctx.stat("num_nonrel")) for k in m.params]


def K_ROC_AUC(ctx: Ctx, m) -> list[np.ndarray]:
    judged_rel = ctx.valid & (ctx.rel >= 0) & (ctx.rel >= ctx.level)
    judged_nonrel = ctx.valid & (ctx.rel >= 0) & (ctx.rel < ctx.level)
    R = ctx.R.astype(np.float64)
    N = ctx.stat("num_nonrel").astype(np.float64)
    nonrel_so_far = np.cumsum(judged_nonrel, axis=1)
    # each retrieved relevant document is above every non-relevant one not yet seen (retrieved or not)
    above = row_sum(np.where(judged_rel, N[:, None] - nonrel_so_far, 0.0))
    rel_missed = R - np.count_nonzero(judged_rel, axis=1)
    nonrel_missed = N - (nonrel_so_far[:, -1] if nonrel_so_far.shape[1] else 0)
    return [safe_div(above + 0.5 * rel_missed * nonrel_missed, R * N)]


KERNELS = {"dcg": K_DCG, "dcg_cut": K_DCG, "dcg_exp": K_DCG, "dcg_exp_cut": K_DCG, "ideal_dcg": K_IDEAL_DCG,
           "ideal_dcg_cut": K_IDEAL_DCG, "dcg_jk_cut": K_DCG_JK, "ndcg_jk_cut": K_DCG_JK, "cg_cut": K_CG,
           "ncg_cut": K_CG, "fallout_cut": K_FALLOUT, "roc_auc": K_ROC_AUC}

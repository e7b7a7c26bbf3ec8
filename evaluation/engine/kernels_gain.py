"""trec_eval 9.0.8's graded measures: ndcg, ndcg_cut, ndcg_rel, Rndcg, G (and the exponential-gain nDCG).

With ``g_i`` the gain of the document at 0-based rank ``i`` (see :mod:`~evaluation.engine.gains`),
``DCG_k = sum_{i<k} g_i / log2(i + 2)`` and ``IDCG`` the same over the ideal ranking (every judged document
with a positive gain, best first; ``-l`` is ignored):

- ``ndcg = DCG_n / IDCG_all`` (Järvelin & Kekäläinen, TOIS 2002) — the ideal is *not* cut at ``n``.
- ``ndcg_cut_k = DCG_k / IDCG_k`` (grades as gains, no parameters).
- ``ndcg_rel``: mean over the ideal's documents of ``DCG_i / IDCG_min(i+1, |ideal|)`` at each retrieved
  positive-gain document, the missing ones counting ``DCG_n / IDCG_all``.
- ``Rndcg``: mean of ``DCG / IDCG`` at the ranks where the ideal gain changes (and at ``n``).
- ``G``: ``sum g_i / log2(2 + cost_i - gain_so_far_i) / sum(ideal gains)``, ``cost_i`` summing
  ``max(ideal gain, 1)``.
- ``ndcg_exp``, ``ndcg_exp_cut_k``: same as ndcg / ndcg_cut with gains ``2**grade - 1`` (Burges et al. 2005).

>>> # two relevant documents (grades 2 and 1) retrieved at ranks 2 and 1: DCG = 1/1 + 2/log2(3)
>>> round((1 + 2 / 1.584962500721156) / (2 + 1 / 1.584962500721156), 4)
0.8597
"""

from __future__ import annotations

import numpy as np

from evaluation.engine.context import Ctx, libm_log2, row_sum, safe_div
from evaluation.engine.gains import GainModel, exp_gain_model, gain_model
from evaluation.engine.spec import Measure, MeasureError


def _model(ctx: Ctx, m: Measure) -> GainModel:
    if m.name.startswith("ndcg_exp"):
        return exp_gain_model(ctx.qrels)
    pairs = m.params if m.spec.kind == "pairs" else ()
    model = gain_model(ctx.qrels, pairs)
    if np.any(model.lookup[:, 1] != 0):
        raise MeasureError(f"{m.name}: a gain for grade -1 (documents not in the qrels) is not supported")
    return model


def _dcg(ctx: Ctx, model: GainModel, key) -> tuple[np.ndarray, np.ndarray]:
    """(gains, running DCG) over the block's entries under ``model``."""
    def make():
        gains = model.entry_gains(ctx)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.where(gains != 0, gains / ctx.discount, 0.0)
        return gains, np.cumsum(terms, axis=1)
    return ctx.cached(key, make)


def _ideal_at(model: GainModel, topic: np.ndarray, k) -> np.ndarray:
    """IDCG of the first ``min(k, |ideal|)`` ideal documents (``k`` scalar, per row or (rows, m))."""
    k = np.asarray(k)
    if k.ndim == 2:
        k = np.minimum(k, model.n_ideal[topic][:, None])
        vals = model.ideal_dcg[topic[:, None], np.clip(k - 1, 0, model.ideal_dcg.shape[1] - 1)]
    else:
        k = np.minimum(k, model.n_ideal[topic])
        vals = model.ideal_dcg[topic, np.clip(k - 1, 0, model.ideal_dcg.shape[1] - 1)]
    return np.where(k > 0, vals, 0.0)


def K_NDCG(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    model = _model(ctx, m)
    _, run = _dcg(ctx, model, ("dcg", m.name, m.params))
    topic = ctx.stat("topic")
    ideal = _ideal_at(model, topic, model.n_ideal[topic])
    return [np.where(ideal > 0, safe_div(run[:, -1], ideal), 0.0)]


def K_NDCG_CUT(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    if m.name.startswith("ndcg_exp"):
        model = exp_gain_model(ctx.qrels)
        _, run = _dcg(ctx, model, ("dcg", "exp"))
    else:  # grades themselves are the gains, whatever the parameters of ndcg
        model = gain_model(ctx.qrels, ())
        run = ctx.cached("dcg-grade", lambda: np.cumsum(ctx.grade_gains / ctx.discount, axis=1))
    topic = ctx.stat("topic")
    out = []
    for k in m.params:
        dcg = ctx.prefix_at(run, k)
        ideal = _ideal_at(model, topic, k)
        out.append(np.where(ideal > 0, safe_div(dcg, ideal), dcg))
    return out


def K_NDCG_REL(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    model = _model(ctx, m)
    gains, run = _dcg(ctx, model, ("dcg", m.name, m.params))
    topic = ctx.stat("topic")
    n_ideal = model.n_ideal[topic]
    k = np.minimum(np.where(ctx.valid, ctx.pos + 1, 1), n_ideal[:, None])
    ideal = _ideal_at(model, topic, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = row_sum(np.where(gains > 0, run / ideal, 0.0))
        found = np.count_nonzero(gains > 0, axis=1)
        last = run[:, -1] if run.shape[1] else np.zeros(ctx.rows)
        total = total + (n_ideal - found).astype(np.float64) * last / _ideal_at(model, topic, n_ideal)
        value = total / n_ideal
    return [np.where(total > 0, value, 0.0)]


def K_RNDCG(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    model = _model(ctx, m)
    _, run = _dcg(ctx, model, ("dcg", m.name, m.params))
    topic = ctx.stat("topic")
    n, n_ideal = ctx.n, model.n_ideal[topic]
    width = model.ideal.shape[1]
    seq = np.concatenate([model.ideal[topic], np.zeros((topic.size, 1))], axis=1)
    seq[np.arange(topic.size), n_ideal] = model.after[topic]
    i = np.broadcast_to(np.arange(1, width + 1)[None, :], (topic.size, width))
    change = (i <= n_ideal[:, None]) & (seq[:, 1:] != seq[:, :-1])
    ideal = _ideal_at(model, topic, i)
    use = change & (ideal > 0)
    dcg = ctx.prefix_at(run, np.minimum(i, n[:, None]))
    with np.errstate(divide="ignore", invalid="ignore"):
        total = row_sum(np.where(use, dcg / ideal, 0.0))
        count = np.count_nonzero(use, axis=1)
        loop1_end = np.where(model.first[topic] > 0, np.minimum(n, n_ideal + 1), 0)
        full = _ideal_at(model, topic, n_ideal)
        extra = (loop1_end < n) & (full > 0)
        last = run[:, -1] if run.shape[1] else np.zeros(ctx.rows)
        total = np.where(extra, total + last / np.where(full > 0, full, 1.0), total)
        value = total / (count + extra)
    return [np.where(ctx.R == 0, 0.0, value)]


def K_G(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    model = _model(ctx, m)
    gains, _ = _dcg(ctx, model, ("dcg", m.name, m.params))
    topic = ctx.stat("topic")
    n_ideal = model.n_ideal[topic]
    cost = np.where(np.arange(model.ideal.shape[1])[None, :] < n_ideal[:, None],
                    np.maximum(model.ideal[topic], 1.0), 0.0)
    cost_cum = np.concatenate([np.zeros((topic.size, 1)), np.cumsum(cost, axis=1)], axis=1)
    upto = np.where(ctx.valid, ctx.pos + 1, 0)  # ranks 1..i covered when the entry is added
    within = np.minimum(upto, n_ideal[:, None])
    spent = np.take_along_axis(cost_cum, within, axis=1)
    if np.all(model.ideal == np.floor(model.ideal)):
        spent = spent + (upto - within)  # then + 1.0 per rank past the ideal: exact on integers
    else:
        spent = _sequential_cost(spent, upto - within)
    arg = (2 + spent) - np.cumsum(gains, axis=1)
    hit = gains != 0
    terms = np.zeros(gains.shape)
    terms[hit] = gains[hit] / libm_log2(arg[hit])
    sum_ideal = np.cumsum(model.ideal[topic], axis=1)[:, -1]
    return [np.where(sum_ideal > 0, safe_div(row_sum(terms), sum_ideal), 0.0)]


def _sequential_cost(start: np.ndarray, ones: np.ndarray) -> np.ndarray:
    """``start + 1.0 + 1.0 + ...`` (``ones`` times), added one at a time as trec_eval's loop does."""
    out = start.copy()
    todo = ones.copy()
    while (todo > 0).any():
        step = todo > 0
        out[step] += 1.0
        todo[step] -= 1
    return out


KERNELS = {"ndcg": K_NDCG, "ndcg_cut": K_NDCG_CUT, "ndcg_rel": K_NDCG_REL, "Rndcg": K_RNDCG, "G": K_G,
           "ndcg_exp": K_NDCG, "ndcg_exp_cut": K_NDCG_CUT}

"""trec_eval 9.0.8's binary-relevance measures, one vectorised kernel per ``m_*.c`` file.

Notation per topic: ``n`` documents ranked, ``R`` relevant in the qrels (grade >= level), ``rel_i`` whether
the document at rank ``i`` (1-based) is relevant, ``c_i = sum_{j<=i} rel_j``. Values trec_eval leaves at 0
on a division by zero are 0 here too.

- ``P_k = c_k / k`` (missing ranks count as non-relevant); ``recall_k = c_k / R``;
  ``relative_P_k = c_k / min(k, R)``; ``success_k = [c_k > 0]``.
- ``map = sum_{rel_i} (c_i / i) / R``; ``map_cut_k`` stops the sum at rank ``k``; ``Rprec = c_R / R``.
- ``recip_rank = 1 / (rank of the first relevant)``.
- ``bpref = sum_{rel_i} (1 - min(nr_i, R) / min(N, R)) / R``, ``nr_i`` judged non-relevant above ``i``, ``N``
  judged non-relevant in the qrels (Buckley & Voorhees, SIGIR 2004; pooled-unjudged and unpooled ignored).
- ``infAP`` (Yilmaz & Aslam, CIKM 2006) with 9.0.8's epsilon ``1e-5``; ``binG = sum 1/log2(2 + nonrel above)
  / R``.
- ``iprec_at_recall_f`` = max precision at or below the rank of the ``(long)(f R + 0.9)``-th relevant
  document; ``11pt_avg`` averages them; ``Rprec_mult_f = c_m / m`` with ``m = (long)(f R + 0.9)``.
- ``set_*`` over the whole retrieved set; ``utility = a*rel_ret + b*nonrel_ret + c*rel_missed + d*(rest)``.

>>> import numpy as np
>>> from evaluation.engine.ranking import Block
>>> from evaluation.engine.context import Ctx
>>> block = Block(np.array([0]), np.array([3]), np.array([[0, 2]]), np.array([[1, 1]], np.int32))
>>> round(float(K_MAP(Ctx(block, {"num_rel": np.array([4])}, 1), None)[0][0]), 6)  # (1/1 + 2/3) / 4
0.416667
"""

from __future__ import annotations

import numpy as np

from evaluation.engine.context import Ctx, log2_table, row_sum, safe_div
from evaluation.engine.ranking import UNJUDGED
from evaluation.engine.spec import Measure

INFAP_EPSILON = 0.00001


def K_COUNTS(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    name = m.name
    if name == "num_ret":
        return [ctx.n.astype(np.int64)]
    if name == "num_rel":
        return [ctx.R.astype(np.int64)]
    if name == "num_rel_ret":
        return [ctx.nrr.astype(np.int64)]
    judged = np.count_nonzero(ctx.valid & (ctx.rel >= 0), axis=1)
    return [(judged - ctx.nrr).astype(np.int64)]  # num_nonrel_judged_ret


def K_MAP(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    return [np.where(ctx.total_rel > 0, safe_div(ctx.ap_cum[:, -1], ctx.R), 0.0)]


def K_RPREC(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    k = np.minimum(ctx.n, ctx.R)
    return [np.where(k > 0, safe_div(ctx.count_rel_before(k), ctx.R), 0.0)]


def K_RECIP_RANK(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    first = np.argmax(ctx.isrel, axis=1)
    rank = ctx.rank[np.arange(ctx.rows), first]
    return [np.where(ctx.total_rel > 0, 1.0 / rank, 0.0)]


def _judged_nonrel(ctx: Ctx) -> np.ndarray:
    return ctx.cached("jnr", lambda: ctx.valid & (ctx.rel >= 0) & (ctx.rel < ctx.level))


def _pref_rel(ctx: Ctx) -> np.ndarray:
    """bpref/infAP's relevant documents: judged and not judged non-relevant."""
    return ctx.cached("pref_rel", lambda: ctx.valid & (ctx.rel >= 0) & ~_judged_nonrel(ctx))


def K_BPREF(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    nonrel_above = np.cumsum(_judged_nonrel(ctx), axis=1)
    R = ctx.R[:, None]
    big_n = ctx.stat("num_nonrel")[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = 1.0 - np.minimum(nonrel_above, R) / np.minimum(big_n, R)
    terms = np.where(_pref_rel(ctx), np.where(nonrel_above > 0, frac, 1.0), 0.0)
    total = row_sum(terms)
    return [np.where(ctx.R != 0, safe_div(total, ctx.R), total)]


def K_INFAP(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    rel = _pref_rel(ctx)
    r1 = np.cumsum(rel, axis=1) - 1
    nonrel = np.cumsum(_judged_nonrel(ctx), axis=1)
    unjudged = np.cumsum(ctx.valid & (ctx.rel == UNJUDGED), axis=1)
    j = ctx.rank - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r1 + nonrel + unjudged) / j) \
            * ((r1 + INFAP_EPSILON) / ((r1 + nonrel) + 2 * INFAP_EPSILON))
    term = np.where(j == 0, 1.0, term)
    total = row_sum(np.where(rel, term, 0.0))
    return [np.where(ctx.R != 0, safe_div(total, ctx.R), total)]


def K_BING(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    arg = np.where(ctx.isrel, 2 + ctx.rank - ctx.krel, 2).astype(np.int64)  # 3 + i - c_i, i 0-based
    table = log2_table(int(arg.max(initial=2)) + 1)
    total = row_sum(np.where(ctx.isrel, 1.0 / table[arg], 0.0))
    return [np.where(ctx.total_rel > 0, safe_div(total, ctx.R), 0.0)]


def K_CUTS(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    """P, recall, relative_P, success, map_cut at their integer cut-offs."""
    out = []
    for k in m.params:
        if m.name == "map_cut":
            out.append(np.where(ctx.R != 0, safe_div(ctx.prefix_at(ctx.ap_cum, k), ctx.R), 0.0))
            continue
        c = ctx.count_rel_before(k)
        if m.name == "P":
            out.append(c / float(k))
        elif m.name == "recall":
            out.append(safe_div(c, ctx.R))
        elif m.name == "relative_P":
            out.append(safe_div(c, np.minimum(k, ctx.R)))
        else:  # success
            out.append((c > 0).astype(np.float64))
    return out


def K_RPREC_MULT(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    out = []
    for frac in m.params:
        cut = np.trunc(frac * ctx.R + 0.9).astype(np.int64)
        c = ctx.count_rel_before(np.maximum(cut, 0))
        out.append(np.where(cut >= 1, safe_div(c, cut), 0.0))
    return out


def _interpolated(ctx: Ctx, fracs) -> list[np.ndarray]:
    """9.0.8's backward pass of m_iprec_at_recall.c / m_11pt_avg.c, for cut-offs in the given order.

    A cut-off ``c`` (in relevant documents) gets the maximum precision at or below the rank of the c-th
    relevant document (precision peaks at relevant ranks, and at rank ``n`` where the pass starts);
    cut-offs above the relevant retrieved get 0; ``c <= 0``, and any cut-off the pass cannot reach when
    the list is not ascending, get the value left at the end of the pass.
    """
    rows = np.arange(ctx.rows)
    total = ctx.total_rel
    with np.errstate(divide="ignore", invalid="ignore"):
        start = ctx.nrr / ctx.n.astype(np.float64)
    prec = np.where(ctx.isrel, ctx.krel / ctx.rank, -np.inf)
    suffix = np.maximum.accumulate(prec[:, ::-1], axis=1)[:, ::-1]
    _, rel_cols = np.nonzero(ctx.isrel)
    offsets = np.concatenate(([0], np.cumsum(total)[:-1]))

    def at_rel(k: np.ndarray) -> np.ndarray:
        ok = (k >= 1) & (k <= total)
        idx = np.where(ok, offsets + k - 1, 0)
        col = rel_cols[idx] if rel_cols.size else np.zeros_like(idx)
        return np.where(ok, np.maximum(suffix[rows, col], start), 0.0)

    final = np.where(total > 0, at_rel(np.ones_like(total)), start)
    started = np.zeros(ctx.rows, dtype=bool)
    stuck = np.zeros(ctx.rows, dtype=bool)
    last = total.copy()
    values: list = [None] * len(fracs)
    for j in range(len(fracs) - 1, -1, -1):
        cut = np.trunc(fracs[j] * ctx.R + 0.9).astype(np.int64)
        started |= cut <= total
        match = started & ~stuck & (cut >= 1) & (cut <= last)
        values[j] = np.where(match, at_rel(cut), np.where(started, final, 0.0))
        stuck |= started & ~match
        last = np.where(match, cut, last)
    return values


def K_IPREC(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    return _interpolated(ctx, m.params)


def K_11PT(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    values = _interpolated(ctx, m.params)
    total = np.zeros(ctx.rows)
    for v in reversed(values):  # trec_eval adds from the last cut-off down
        total = total + v
    return [total / float(len(m.params))]


def K_SETS(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    n = ctx.n.astype(np.float64)
    nrr = ctx.nrr.astype(np.float64)
    R = ctx.R.astype(np.float64)
    name = m.name
    if name == "set_P":
        return [safe_div(nrr, n)]
    if name == "set_relative_P":
        return [np.where((n > 0) & (R > 0), safe_div(nrr, np.minimum(n, R)), 0.0)]
    if name == "set_recall":
        return [safe_div(nrr, R)]
    if name == "set_map":
        return [np.where((n > 0) & (R > 0), safe_div(nrr * nrr, n * R), 0.0)]
    x = m.params[0]  # set_F
    p, r = safe_div(nrr, n), safe_div(nrr, R)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = (x + 1.0) * p * r / (x * p + r)
    return [np.where(nrr > 0, f, 0.0)]


def K_UTILITY(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    a, b, c, d = m.params
    n, nrr, R = ctx.n.astype(np.float64), ctx.nrr.astype(np.float64), ctx.R.astype(np.float64)
    return [a * nrr + b * (n - nrr) + c * (R - nrr) + d * (ctx.coll_size + nrr - n - R)]


_CHARS = np.frombuffer(b"0123456789", dtype=np.uint8)


def K_RELSTRING(ctx: Ctx, m: Measure) -> list[np.ndarray]:
    """First N rel values as characters: digit, '>' above 9, '-' not pooled, '.' pooled unjudged."""
    width = max(int(m.params[0]), 0)
    if width == 0:
        return [np.array([""] * ctx.rows, dtype=object)]
    shown = np.minimum(ctx.n, width)
    chars = np.where(np.arange(width)[None, :] < shown[:, None], ord("-"), 0).astype(np.uint8)
    inside = ctx.valid & (ctx.pos < width)
    r, col = np.nonzero(inside)
    rel = ctx.rel[r, col]
    code = np.full(rel.shape, ord("<"), dtype=np.uint8)
    code[rel > 9] = ord(">")
    digit = (rel >= 0) & (rel <= 9)
    code[digit] = _CHARS[rel[digit]]
    code[rel == UNJUDGED] = ord(".")
    chars[r, ctx.pos[r, col]] = code
    strings = np.ascontiguousarray(chars).view(f"S{width}").ravel()
    return [np.array([s.decode("latin-1") for s in strings], dtype=object)]


KERNELS = {
    "num_ret": K_COUNTS, "num_rel": K_COUNTS, "num_rel_ret": K_COUNTS, "num_nonrel_judged_ret": K_COUNTS,
    "map": K_MAP, "gm_map": K_MAP, "Rprec": K_RPREC, "bpref": K_BPREF, "gm_bpref": K_BPREF,
    "recip_rank": K_RECIP_RANK, "iprec_at_recall": K_IPREC, "P": K_CUTS, "relstring": K_RELSTRING,
    "recall": K_CUTS, "infAP": K_INFAP, "Rprec_mult": K_RPREC_MULT, "utility": K_UTILITY,
    "11pt_avg": K_11PT, "binG": K_BING, "map_cut": K_CUTS, "relative_P": K_CUTS, "success": K_CUTS,
    "set_P": K_SETS, "set_relative_P": K_SETS, "set_recall": K_SETS, "set_map": K_SETS, "set_F": K_SETS,
}

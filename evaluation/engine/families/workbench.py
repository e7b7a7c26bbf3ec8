"""The measures the workbench adds to trec_eval's, under names of their own that never clash with trec_eval's
(``-m all_ext`` requests them all), in output order: each family declared once, with its label and meaning.
Computed by :mod:`evaluation.engine.kernels_ext`, :mod:`~evaluation.engine.kernels_textbook` and
:mod:`~evaluation.engine.kernels_families` (formulas and references in their docstrings).
"""

from __future__ import annotations

from evaluation.engine.declaration import CUT_BASE, CUT_DOUBLE, CUT_LONG, CUTS, PAIRS, SINGLE, MeasureSpec

#: the workbench"s own measures: its additions, the textbook forms, then the peers" families
MEASURES = (
    MeasureSpec("judged", CUT_LONG, (10,), trec=False, label="Judged at k",
                help="Fraction of the top `k` ranks holding a judged document (grade >= 0): `|{i <= k: judged_i}| "
                     "/ k`; like `P_k`, missing ranks count as not judged."),
    MeasureSpec("rbp", PAIRS, trec=False, label="RBP",
                help="Rank-biased precision (Moffat & Zobel, TOIS 2008), binary relevance at the `-l` level: `RBP "
                     "= (1 - p) sum_{i>=1} rel_i p^(i-1)`."),
    MeasureSpec("rbp_resid", PAIRS, trec=False, label="RBP residual",
                help="RBP's residual: the most RBP could grow if every unjudged retrieved document and every rank "
                     "below the run were relevant, `p^n + (1 - p) sum_{i<=n, unjudged_i} p^(i-1) = 1 - (1 - p) "
                     'sum_{judged_i} p^(i-1)` ("unjudged" = no grade >= 0).'),
    MeasureSpec("rbp_graded", PAIRS, trec=False, label="Graded RBP",
                help="Rank-biased precision with graded gains, as NIST's trec_eval computes its `rbp` (`m_rbp.c`; "
                     "TREC-COVID's `RBP(p=.5)`): `RBP = (1 - p) sum_{i>=1} g_i p^(i-1)` with `g_i = grade_i / max "
                     "grade` of the topic, 0 for unjudged, unpooled and negative grades."),
    MeasureSpec("ndcg_exp", SINGLE, trec=False, label="nDCG, exponential gains",
                help="nDCG with exponential gains `2**grade - 1` (Burges et al., ICML 2005), ideal from every "
                     "judged document; see `evaluation.engine.kernels_gain`."),
    MeasureSpec("ndcg_exp_cut", CUT_LONG, CUTS, trec=False, label="nDCG at k, exponential gains",
                help="nDCG at `k` with exponential gains `2**grade - 1` (Burges et al., ICML 2005), ideal from "
                     "every judged document."),
    MeasureSpec("set_Fbeta", CUT_DOUBLE, (1.0,), trec=False, label="Set F-beta",
                help="`F_beta = (1 + b^2) P R / (b^2 P + R)` over the retrieved set (van Rijsbergen)."),
    MeasureSpec("map_condensed", SINGLE, trec=False, label="AP, condensed list",
                help="AP on the condensed list (Sakai, SIGIR 2007): unjudged documents are removed from the "
                     "ranking first (what `-J` does to every measure), only for this measure."),
    MeasureSpec("ndcg_condensed", SINGLE, trec=False, label="nDCG, condensed list",
                help="nDCG on the condensed list (Sakai, SIGIR 2007): unjudged documents are removed from the "
                     "ranking first (what `-J` does to every measure), only for this measure."),
    MeasureSpec("ndcg_cut_condensed", CUT_LONG, CUTS, trec=False, label="nDCG at k, condensed list",
                help="nDCG at `k` on the condensed list (Sakai, SIGIR 2007): unjudged documents are removed from "
                     "the ranking first (what `-J` does to every measure), only for this measure."),
    MeasureSpec("dcg", SINGLE, trec=False, label="DCG",
                help="`DCG = sum_i g_i / log2(i + 1)` over the whole ranking (Järvelin & Kekäläinen's discount as "
                     "Burges et al. and trec_eval 10 write it)."),
    MeasureSpec("dcg_cut", CUT_LONG, CUTS, trec=False, label="DCG at k",
                help="`DCG@k = sum_{i<=k} g_i / log2(i + 1)` (Järvelin & Kekäläinen's discount as Burges et al. "
                     "and trec_eval 10 write it; trec_eval 9.0.8's `ndcg_cut` is this divided by `ideal_dcg_cut`);"
                     " `dcg` runs over the whole ranking."),
    MeasureSpec("ideal_dcg", SINGLE, trec=False, label="Ideal DCG",
                help="DCG of the ideal ranking (every ideal document)."),
    MeasureSpec("ideal_dcg_cut", CUT_LONG, CUTS, trec=False, label="Ideal DCG at k",
                help="DCG of the ideal ranking's top `k`."),
    MeasureSpec("dcg_exp", SINGLE, trec=False, label="DCG, exponential gains",
                help="DCG with exponential gains `2^g_i - 1` (Burges et al., ICML 2005), discount `log2(i + 1)`, "
                     "over the whole ranking."),
    MeasureSpec("dcg_exp_cut", CUT_LONG, CUTS, trec=False, label="DCG at k, exponential gains",
                help="DCG at `k` with exponential gains `2^g_i - 1` (Burges et al., ICML 2005), discount `log2(i +"
                     " 1)`."),
    MeasureSpec("dcg_jk_cut", CUT_BASE, CUTS, trec=False, label="DCG at k (Järvelin & Kekäläinen)",
                help="Järvelin & Kekäläinen's original DCG (TOIS 2002): ranks below the base `b` (default 2) are "
                     "not discounted, the others by `log_b i`: `DCG_jk@k = sum_{i<=k, i<b} g_i + sum_{b<=i<=k} g_i"
                     " / log_b i`; with `b = 2`, `g_1 + sum_{2<=i<=k} g_i / log2 i`."),
    MeasureSpec("ndcg_jk_cut", CUT_BASE, CUTS, trec=False, label="nDCG at k (Järvelin & Kekäläinen)",
                help="Järvelin & Kekäläinen's original DCG (TOIS 2002) at `k`, divided by the ideal ranking's: "
                     "ranks below the base `b` (default 2) are not discounted, the others by `log_b i`."),
    MeasureSpec("cg_cut", CUT_LONG, CUTS, trec=False, label="CG at k",
                help="Cumulative gain `CG@k = sum_{i<=k} g_i` (Järvelin & Kekäläinen 2002)."),
    MeasureSpec("ncg_cut", CUT_LONG, CUTS, trec=False, label="NCG at k",
                help="Normalised cumulative gain `NCG@k = CG@k / ideal CG@k` (Järvelin & Kekäläinen 2002; the NCG "
                     "TREC Deep Learning reports)."),
    MeasureSpec("fallout_cut", CUT_LONG, CUTS, trec=False, label="Fallout at k",
                help="`|{i <= k: judged non-relevant}| / |judged non-relevant of the topic|` (relevance at the "
                     "`-l` level; Salton & McGill): the share of the known non-relevant documents the run shows by"
                     " rank `k`."),
    MeasureSpec("roc_auc", SINGLE, trec=False, label="ROC AUC",
                help="The area under the ROC curve of the ranking over the judged documents: the share of "
                     "(relevant, non-relevant) pairs the run orders correctly, judged documents it did not "
                     "retrieve coming after all it retrieved and tying among themselves (a tie counts 1/2)."),
    MeasureSpec("rr_cut", CUT_LONG, (1, 5, 10, 20, 100), trec=False, label="Reciprocal rank at k",
                help="`1 / rank` of the first relevant document within the top `k`, else 0 (trec_eval issue 31; "
                     "ranx's `mrr@k`, ir_measures' `RR@k`)."),
    MeasureSpec("err_cut", CUT_LONG, (5, 10, 20), trec=False, label="ERR at k",
                help="Expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan, CIKM 2009): `ERR@k = "
                     "sum_{r<=k} (1/r) R_r prod_{i<r} (1 - R_i)` with `R_i = (2^g_i - 1) / 2^g_max`, `g_max` the "
                     "highest grade in the qrels (unjudged and non-positive grades: `R = 0`)."),
    MeasureSpec("nerr_cut", CUT_LONG, (5, 10, 20), trec=False, label="nERR at k",
                help="ERR@k (Chapelle et al., CIKM 2009; `R_i = (2^g_i - 1) / 2^g_max`) divided by the ideal "
                     "ranking's ERR@k."),
    MeasureSpec("err_gdeval_cut", CUT_LONG, (5, 10, 20), trec=False, label="ERR at k (gdeval)",
                help="ERR@k as the TREC Web track's `gdeval.pl` (and ir_measures' `ERR@k`, which runs it) computes"
                     " it: `g_max` fixed at 4, its 0..4 scale, whatever the qrels' grades (binary qrels: `R = "
                     "1/16`)."),
    MeasureSpec("f_cut", CUT_LONG, CUTS, trec=False, label="F at k",
                help="`F@k = 2 P@k Rec@k / (P@k + Rec@k)` with `Rec@k = rel_k / R` (ranx's `f1@k`)."),
    MeasureSpec("f_minkr_cut", CUT_LONG, CUTS, trec=False, label="F at k, recall over min(k, R)",
                help="`F@k = 2 P@k Rec@k / (P@k + Rec@k)` with `Rec@k = rel_k / min(k, R)` (the recall a ranking "
                     "of `k` can reach)."),
    MeasureSpec("ap_minkr_cut", CUT_LONG, CUTS, trec=False, label="AP at k over min(k, R)",
                help="`AP@k = sum_{r<=k, rel_r} P@r / min(k, R)` (the textbook form that a perfect top `k` scores "
                     "1); `map_cut.k` (trec_eval, and ranx's `map@k`) divides by `R`."),
    MeasureSpec("judged_min", CUT_LONG, (10,), trec=False, label="Judged at k over min(k, retrieved)",
                help="Judged documents in the top `k` divided by `min(k, retrieved)`: ir_measures' `Judged@k` "
                     "(0.4.3; equal in `tests/engine/test_vs_ir_measures.py`, except that ir_measures puts tied "
                     "scores in ascending docno order where trec_eval's ranking takes descending) and Pyserini's "
                     "`judged.k` (which pools the counts of all topics instead of averaging per topic)."),
)

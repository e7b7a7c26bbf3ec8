"""trec_eval 9.0.8's measures (``measures.c``), in its table order, which is the output order: each family
declared once, with its label and meaning (the docs' measures reference and the leaderboard's choices read them).
Parameter syntax and defaults as ``meas_init.c`` has them; computed by the engine's kernels
(:mod:`evaluation.engine.kernels_trec`).
"""

from __future__ import annotations

from evaluation.engine.declaration import (
    CUT_DOUBLE,
    CUT_LONG,
    CUTS,
    LONG,
    PAIRS,
    PARAMS_DOUBLE,
    RECALL_POINTS,
    SINGLE,
    STRING,
    MeasureSpec,
)

#: trec_eval's measures in its table order
MEASURES = (
    MeasureSpec("runid", SINGLE, value=STRING, summary="runid", per_topic=False, nicknames=("official", "set"),
                label="Run id",
                help="The run's tag, as trec_eval prints it."),
    MeasureSpec("num_q", SINGLE, value=LONG, summary="num_q", per_topic=False, nicknames=("official", "set"),
                label="Topics",
                help="Number of topics evaluated."),
    MeasureSpec("num_ret", SINGLE, value=LONG, summary="sum", nicknames=("official", "set"),
                label="Retrieved",
                help="Number of documents retrieved (at most `-M` per topic)."),
    MeasureSpec("num_rel", SINGLE, value=LONG, summary="num_rel", nicknames=("official", "set"),
                label="Relevant",
                help="Number of relevant documents in the qrels."),
    MeasureSpec("num_rel_ret", SINGLE, value=LONG, summary="sum", nicknames=("official", "set"),
                label="Relevant retrieved",
                help="Number of relevant documents retrieved."),
    MeasureSpec("map", SINGLE, nicknames=("official",), label="Mean average precision",
                help="Average precision: the precision at each relevant document retrieved, summed and divided by "
                     "R (relevant documents not retrieved count 0)."),
    MeasureSpec("gm_map", SINGLE, summary="gm", per_topic=False, nicknames=("official",),
                label="Geometric mean AP",
                help="Average precision's geometric mean over the topics (each value floored at 0.00001)."),
    MeasureSpec("Rprec", SINGLE, nicknames=("official",), label="R-precision",
                help="Precision after R documents retrieved, R the number of relevant documents."),
    MeasureSpec("bpref", SINGLE, nicknames=("official",), label="bpref",
                help="Binary preference (Buckley & Voorhees, SIGIR 2004): how few judged non-relevant documents "
                     "come before each relevant one; unjudged documents play no part."),
    MeasureSpec("recip_rank", SINGLE, nicknames=("official",), label="Reciprocal rank",
                help="`1 / rank` of the first relevant document retrieved, 0 when there is none."),
    MeasureSpec("iprec_at_recall", CUT_DOUBLE, RECALL_POINTS, nicknames=("official",),
                label="Interpolated precision at recall",
                help="Interpolated precision at each recall level (the highest precision at that recall or "
                     "beyond)."),
    MeasureSpec("P", CUT_LONG, CUTS, nicknames=("official",), label="Precision at k",
                help="Relevant documents in the top `k` divided by `k` (missing ranks count as not relevant)."),
    MeasureSpec("relstring", PARAMS_DOUBLE, (10.0,), value=STRING, summary="none", label="Relevance string",
                help="The grades of the first `k` documents retrieved, as a string (per topic only)."),
    MeasureSpec("recall", CUT_LONG, CUTS, label="Recall at k",
                help="Relevant documents in the top `k` divided by R."),
    MeasureSpec("infAP", SINGLE, label="Inferred AP",
                help="Inferred average precision (Yilmaz & Aslam, CIKM 2006): AP estimated from sampled judgments,"
                     " unsampled documents graded -1."),
    MeasureSpec("gm_bpref", SINGLE, summary="gm", per_topic=False, label="Geometric mean bpref",
                help="bpref's geometric mean over the topics (each value floored at 0.00001)."),
    MeasureSpec("Rprec_mult", CUT_DOUBLE, (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
                label="Precision at multiples of R",
                help="Precision after `m R` documents retrieved, for each multiplier `m`."),
    MeasureSpec("utility", PARAMS_DOUBLE, (1.0, -1.0, 0.0, 0.0), nicknames=("set",), label="Utility",
                help="Linear utility `a rel_ret + b nonrel_ret + c rel_nonret + d nonrel_nonret`, coefficients "
                     "`a,b,c,d`."),
    MeasureSpec("11pt_avg", PARAMS_DOUBLE, RECALL_POINTS, label="11-point average precision",
                help="Interpolated precision averaged over the recall levels given (default the 11 points 0, 0.1, "
                     "..., 1)."),
    MeasureSpec("binG", SINGLE, label="Binary G",
                help="trec_eval's experimental G with binary gains."),
    MeasureSpec("G", PAIRS, label="G",
                help="trec_eval's experimental gain measure: cumulative gain with a log discount, normalised by "
                     "the ideal, gains per grade given as `grade=gain` pairs."),
    MeasureSpec("ndcg", PAIRS, label="nDCG",
                help="Normalised discounted cumulative gain over the whole ranking (Järvelin & Kekäläinen), the "
                     "grade as gain unless `grade=gain` pairs are given."),
    MeasureSpec("ndcg_rel", PAIRS, label="nDCG over relevant ranks",
                help="nDCG averaged over the ranks of the relevant documents."),
    MeasureSpec("Rndcg", PAIRS, label="nDCG at R",
                help="nDCG at rank R, R the number of relevant documents."),
    MeasureSpec("ndcg_cut", CUT_LONG, CUTS, label="nDCG at k",
                help="nDCG of the top `k` documents (trec_eval's log2 discount, the grade as gain)."),
    MeasureSpec("map_cut", CUT_LONG, CUTS, label="AP at k",
                help="Average precision of the top `k` documents, divided by R."),
    MeasureSpec("relative_P", CUT_LONG, CUTS, label="Relative precision at k",
                help="Precision at `k` divided by the best precision possible at `k`, `min(k, R) / k`."),
    MeasureSpec("success", CUT_LONG, (1, 5, 10), label="Success at k",
                help="1 when a relevant document is in the top `k`, else 0."),
    MeasureSpec("set_P", SINGLE, nicknames=("set",), label="Set precision",
                help="Relevant retrieved divided by retrieved."),
    MeasureSpec("set_relative_P", SINGLE, nicknames=("set",), label="Relative set precision",
                help="Set precision divided by the best possible, relevant retrieved over `min(retrieved, R)`."),
    MeasureSpec("set_recall", SINGLE, nicknames=("set",), label="Set recall",
                help="Relevant retrieved divided by R."),
    MeasureSpec("set_map", SINGLE, nicknames=("set",), label="Set MAP",
                help="Set precision times set recall."),
    MeasureSpec("set_F", PARAMS_DOUBLE, (1.0,), nicknames=("set",), label="Set F",
                help="F measure of the retrieved set, its beta as parameter (default 1)."),
    MeasureSpec("num_nonrel_judged_ret", SINGLE, value=LONG, summary="sum",
                label="Judged non-relevant retrieved",
                help="Number of judged non-relevant documents retrieved."),
)

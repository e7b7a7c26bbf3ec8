"""Evaluation engine: every trec_eval 9.0.8 measure, vectorised, plus the workbench's own measures.

Django-free. Usage::

    from evaluation.engine import Qrels, Evaluator, parse_measures
    qrels = Qrels.from_frame(qrels_frame)                       # qid, docno, rel
    ev = Evaluator(qrels, measures=["map", "ndcg_cut.10", "P.5,10"], relevance_level=1,
                   judged_only=False, max_depth=None, complete=False)   # trec_eval -l -J -M -c
    res = ev.evaluate(run_frame)                                # qid, docno, score
    res.per_topic      # DataFrame, index qid, columns "map", "ndcg_cut_10", "P_5", "P_10"
    res.aggregate      # {"map": ..., ...} as trec_eval prints for "all"
    ev.evaluate_many({"runA": frame_a, "runB": frame_b})       # {tag: EvalResult}, one pass

The command line twin of trec_eval is :func:`evaluation.engine.cli.main`. Modules: ``spec`` (measure
names and parameters), ``qrels``, ``ranking`` (ordering and blocks), ``kernels_trec``/``kernels_gain``/
``kernels_ext`` (the measures), ``evaluator`` (averaging), ``significance`` (paired tests), ``small_files``
(the command line's small files read and ranked without pyarrow).
"""

from evaluation.engine.evaluator import EvalResult, Evaluator
from evaluation.engine.qrels import Qrels
from evaluation.engine.spec import Measure, MeasureError, parse_measures

__all__ = ["EvalResult", "Evaluator", "Measure", "MeasureError", "Qrels", "parse_measures"]

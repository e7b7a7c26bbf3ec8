"""The registry of the measures the workbench's pages show: one place to add a leaderboard column.

Every evaluation of a collection computes ``BASE_MEASURES`` in one engine pass that every page shares
(leaderboards, run and topic reports, curves, flags). A leaderboard shows ``DEFAULT_MEASURES`` unless
the user asks for others, and ``ROBUST_MEASURES`` beside them (measures robust to unjudged documents;
infAP too where the pool was sampled). Measures are named as trec_eval's ``-m`` requests; any measure
the engine knows (``evaluation.engine.spec``) can be added here. Adding one to a list is all it takes:
the base pass grows to include it.
"""

from __future__ import annotations

__all__ = ["BASE_MEASURES", "DEFAULT_MEASURES", "PAGE_MEASURES", "ROBUST_MEASURES"]

#: the columns of a leaderboard when the user asks for none
DEFAULT_MEASURES = ["map", "ndcg_cut.10", "P.10", "bpref", "recall.1000"]

#: shown beside the chosen measures: robust to unjudged documents (Buckley & Voorhees 2004; Sakai 2007)
ROBUST_MEASURES = ["bpref", "map_condensed", "ndcg_cut_condensed.10"]

#: what the other pages read: reports' choices, precision-recall curves, R, judged@10 flags
PAGE_MEASURES = ["map", "ndcg_cut.5,10,20", "P.5,10,20", "bpref", "recall.100,1000", "Rprec", "recip_rank",
                 "iprec_at_recall", "num_rel", "num_rel_ret", "judged.10", "map_condensed", "ndcg_cut_condensed.10"]

#: measures every evaluation computes, so that leaderboards, reports and plots share one engine pass
BASE_MEASURES = tuple(dict.fromkeys([*PAGE_MEASURES, *DEFAULT_MEASURES, *ROBUST_MEASURES]))

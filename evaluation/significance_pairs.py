"""Every pair of runs on one measure, from the runs' per-topic scores: what the significance page shows
(:func:`evaluation.selectors.significance_matrix`, in a request) and what the board job stores for its first
visit (:func:`evaluation.board_extras.store_significance`). One computation both call, so that the board job
(store) does not import the pages' reads (serve)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from evaluation.engine.leaderboard_stats import pairwise_t
from evaluation.engine.significance import pairwise_tests
from evaluation.leaderboard import adjust, topic_matrix, topics_of
from evaluation.scoring import Scores

COLUMNS = ["run_a", "run_b", "mean_a", "mean_b", "mean_diff", "statistic", "p_value", "p_adjusted", "significant",
           "effect_size", "ci_low", "ci_high"]


def significance_pairs(scores: Scores, name: str, *, test: str, correction: str, alpha: float) -> pd.DataFrame:
    """Columns :data:`COLUMNS`, run_a ranked above run_b by mean ``name``; ``test`` and ``correction`` already
    parsed (``TEST_CHOICES``, ``CORRECTION_CHOICES``); no rows under two runs or two topics."""
    matrix = topic_matrix(scores, name, topics_of(scores))
    order = np.argsort(-matrix.mean(axis=0).to_numpy(), kind="stable")
    matrix = matrix.iloc[:, order]
    if matrix.shape[1] < 2 or len(matrix) < 2:
        return pd.DataFrame(columns=COLUMNS)
    if test == "t":
        pairs = pairwise_t(matrix.to_numpy(dtype=float))
        tags = list(matrix.columns)
        out = pd.DataFrame({"run_a": [tags[i] for i in pairs["i"]], "run_b": [tags[j] for j in pairs["j"]],
                            **{k: pairs[k] for k in ("mean_a", "mean_b", "mean_diff", "statistic", "p_value")}})
        out["p_adjusted"] = adjust(pairs["p_value"], correction)
        out["effect_size"], out["ci_low"], out["ci_high"] = pairs["effect_size"], pairs["ci_low"], pairs["ci_high"]
    else:
        results = pairwise_tests(matrix, test=test, correction=correction, n_resamples=2000)
        out = pd.DataFrame([r.__dict__ for r in results]).drop(columns=["test", "n"])
    out.insert(out.columns.get_loc("p_adjusted") + 1, "significant", out["p_adjusted"] < alpha)
    return out[COLUMNS]

"""The answer leaderboard's significance column: every answer run against the best one on the order's measure,
a paired t-test over the topics every shown run answered (``evaluation.engine.significance.compare_to_best``),
p-values adjusted with Holm's method. Reads only; nothing when fewer than two runs or two shared topics."""

from __future__ import annotations

import pandas as pd

from evaluation.engine.significance import compare_to_best

__all__ = ["ALPHA", "versus_best"]

ALPHA = 0.05
#: the bootstrap interval of each comparison is not shown: a small resample keeps the page quick
RESAMPLES = 1000


def versus_best(frame: pd.DataFrame, measure: str) -> tuple[dict[str, dict], int]:
    """``({run: {"best", "p", "worse"}}, topics)``: each run against the best by mean ``measure`` on the topics
    every run was scored on (``p`` Holm-adjusted, None for the best; ``worse``: p < :data:`ALPHA`), and how
    many topics that is."""
    if frame.empty or frame["run"].nunique() < 2:
        return {}, 0
    table = frame.pivot(index="qid", columns="run", values=measure).astype(float).dropna()
    if len(table) < 2:
        return {}, len(table)
    found = compare_to_best(table, test="t", correction="holm", alpha=ALPHA, n_resamples=RESAMPLES)
    return {run: {"best": row.is_best, "p": None if row.result is None else row.result.p_adjusted,
                  "worse": row.significantly_worse} for run, row in found.items()}, len(table)

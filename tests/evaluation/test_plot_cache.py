"""Plots drawn once per content: a page shown again reuses the drawing, a changed report is drawn anew."""

import pandas as pd

from evaluation import plots


def _report(score: float) -> pd.DataFrame:
    return pd.DataFrame({"qid": ["1", "2"], "score": [score, 0.25], "best": [0.9, 0.8], "median": [0.4, 0.3],
                         "worst": [0.0, 0.1], "best_run": ["a", "b"], "has_results": [True, True]})


def test_the_same_report_is_drawn_once_and_a_changed_one_anew(monkeypatch):
    first = plots.participant_plot(_report(0.5), "mine", "map")
    drawn = []
    monkeypatch.setattr(plots, "_svg", lambda fig: drawn.append(fig) or "<svg>new</svg>")
    assert plots.participant_plot(_report(0.5), "mine", "map") == first  # shown again: not drawn
    assert plots.participant_plot(_report(0.5), "mine", "ndcg") == "<svg>new</svg>"  # another measure: drawn
    assert plots.participant_plot(_report(0.7), "mine", "map") == "<svg>new</svg>"  # another score: drawn
    assert len(drawn) == 2

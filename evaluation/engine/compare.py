"""Comparing runs on several measures at once, as ranx's ``compare`` does, with this workbench's tests.

Every run is scored on the same topics (the qrels' topics; a topic a run has no result for scores 0, as
trec_eval's ``-c``). For each measure, every pair of runs is tested (paired t, Wilcoxon signed-rank, sign
or randomisation, p-values adjusted over the pairs with Holm, Bonferroni, Benjamini-Hochberg or not at
all), or all pairs at once with Tukey's HSD on the two-way (run x topic) ANOVA, the form Carterette
recommends for IR experiments (TOIS 2012): ``q = |mean_i - mean_j| / sqrt(MSE / n)`` against the
studentized range with ``k`` runs and ``(k - 1)(n - 1)`` degrees of freedom (scipy).
A cell shows a run's mean and the letters of the runs it is significantly better than.
"""

from __future__ import annotations

import itertools
import json
import string
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from evaluation.engine.significance import pairwise_tests
from workbench.formats.spreadsheet import frame_csv

__all__ = ["COMPARE_TESTS", "Comparison", "compare", "tukey_hsd"]

COMPARE_TESTS = ("t", "wilcoxon", "sign", "randomization", "tukey")


def tukey_hsd(scores: pd.DataFrame) -> dict[tuple[str, str], float]:
    """p-value of every pair of runs (columns; rows are topics) under Tukey's HSD with topics as blocks."""
    from scipy.stats import studentized_range

    values = scores.to_numpy(dtype=float)
    n, k = values.shape
    residual = values - values.mean(axis=0) - values.mean(axis=1, keepdims=True) + values.mean()
    df = (k - 1) * (n - 1)
    mse = float((residual ** 2).sum() / df) if df else 0.0
    means = values.mean(axis=0)
    out = {}
    for i, j in itertools.combinations(range(k), 2):
        diff = abs(means[i] - means[j])
        if mse == 0:
            p = 0.0 if diff > 0 else 1.0
        else:
            p = float(studentized_range.sf(diff / np.sqrt(mse / n), k, df))
        out[(str(scores.columns[i]), str(scores.columns[j]))] = p
    return out


def _better_than(scores: pd.DataFrame, test: str, correction: str, alpha: float, seed: int) -> dict[str, set[str]]:
    """For each run, the runs it is significantly better than."""
    means = scores.mean()
    if test == "tukey":
        pairs = tukey_hsd(scores)
    else:
        pairs = {(r.run_a, r.run_b): r.p_adjusted
                 for r in pairwise_tests(scores, test=test, correction=correction, seed=seed)}
    better: dict[str, set[str]] = {str(c): set() for c in scores.columns}
    for (a, b), p in pairs.items():
        if p is not None and p < alpha and means[a] != means[b]:
            winner, loser = (a, b) if means[a] > means[b] else (b, a)
            better[winner].add(loser)
    return better


@dataclass
class Comparison:
    runs: list[str]
    measures: list[str]
    means: dict[str, dict[str, float]]            # measure -> run -> mean
    better: dict[str, dict[str, set[str]]]        # measure -> run -> runs it beats
    test: str
    correction: str
    alpha: float
    topics: int
    letters: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        alphabet = string.ascii_lowercase
        self.letters = {run: (alphabet[i] if i < 26 else f"r{i}") for i, run in enumerate(self.runs)}

    def _marks(self, measure: str, run: str) -> str:
        return "".join(sorted(self.letters[r] for r in self.better[measure][run]))

    def rows(self) -> list[dict]:
        return [{"run": run, "letter": self.letters[run],
                 **{m: {"mean": self.means[m][run], "better_than": self._marks(m, run)} for m in self.measures}}
                for run in self.runs]

    def as_text(self) -> str:
        head = ["#", "run", *self.measures]
        body = [[self.letters[r], r, *(f"{self.means[m][r]:.4f}" + (f" {self._marks(m, r)}" if self._marks(m, r)
                                                                         else "") for m in self.measures)]
                for r in self.runs]
        widths = [max(len(str(row[i])) for row in [head, *body]) for i in range(len(head))]
        lines = ["  ".join(str(v).ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
                 for row in [head, *body]]
        note = (f"letters: better than that run, {self._test_words()}, alpha {self.alpha}, "
                f"{self.topics} topics")
        return "\n".join([*lines, "", note]) + "\n"

    def _test_words(self) -> str:
        if self.test == "tukey":
            return "Tukey's HSD (two-way ANOVA, topics as blocks)"
        return f"paired {self.test} test, {self.correction} correction"

    def as_csv(self) -> str:
        frame = pd.DataFrame([{"letter": self.letters[r], "run": r,
                               **{m: self.means[m][r] for m in self.measures},
                               **{f"{m} better than": self._marks(m, r) for m in self.measures}} for r in self.runs])
        return frame_csv(frame, index=False)

    def as_json(self) -> str:
        return json.dumps({"test": self.test, "correction": self.correction, "alpha": self.alpha,
                           "topics": self.topics, "measures": self.measures, "runs": self.rows()}, indent=1) + "\n"

    def as_latex(self) -> str:
        def cell(m: str, r: str) -> str:
            marks = self._marks(m, r)
            best = self.means[m][r] == max(self.means[m].values())
            value = f"{self.means[m][r]:.4f}"
            value = f"\\textbf{{{value}}}" if best else value
            return value + (f"$^{{{marks}}}$" if marks else "")
        escape = str.maketrans({"_": r"\_", "&": r"\&", "%": r"\%", "#": r"\#"})
        lines = ["\\begin{tabular}{ll" + "r" * len(self.measures) + "}", "\\toprule",
                 " & Run & " + " & ".join(m.translate(escape) for m in self.measures) + " \\\\", "\\midrule"]
        lines += [f"{self.letters[r]} & {r.translate(escape)} & " + " & ".join(cell(m, r) for m in self.measures)
                  + " \\\\" for r in self.runs]
        lines += ["\\bottomrule", "\\end{tabular}",
                  f"% superscripts: significantly better than that run ({self._test_words()}, alpha {self.alpha})"]
        return "\n".join(lines) + "\n"


def compare(per_topic: dict[str, pd.DataFrame], topics: list[str], measures: list[str], *, test: str = "t",
            correction: str = "holm", alpha: float = 0.05, seed: int = 0) -> Comparison:
    """``per_topic``: run -> frame (index qid, a column per printed measure name); ``topics``: the topics
    every run is scored on (missing ones count 0)."""
    if test not in COMPARE_TESTS:
        raise ValueError(f"unknown test {test!r}; choose one of {', '.join(COMPARE_TESTS)}")
    if len(per_topic) < 2:
        raise ValueError("compare needs at least two runs")
    runs = list(per_topic)
    means, better = {}, {}
    for measure in measures:
        scores = pd.DataFrame({run: frame[measure].reindex(topics).fillna(0.0) if measure in frame
                               else pd.Series(0.0, index=topics) for run, frame in per_topic.items()})
        means[measure] = {run: float(scores[run].mean()) for run in runs}
        better[measure] = _better_than(scores, test, correction, alpha, seed)
    return Comparison(runs=runs, measures=measures, means=means, better=better, test=test, correction=correction,
                      alpha=alpha, topics=len(topics))

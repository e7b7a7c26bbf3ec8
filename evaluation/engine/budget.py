"""Budget planning: how many judgments a collection needs for a stable run ranking (Django-free).

From the judgments so far, the qrels are subsampled by pool depth (a judged document counts at depth d when
some contributing run ranks it within d; Moffat, Webber & Zobel's pooling-cost curves), and the runs are ranked
by MAP at each depth. Kendall's τ (tau-b) of each ranking with the current one, τ of the current top 10, and
whether the top run stays the top, are plotted against the judgments each depth needs.

To predict beyond the judgments so far, the distance of the ranking after n judgments from the final one is
modelled as a power law, 1 - τ(n, final) = c·(n^-b - N^-b) for a final budget N (the distances along one path
of growing qrels add up), fitted to the observed 1 - τ(n, now) = c·(n^-b - n_now^-b). The judgments to
τ ≥ 0.9 then solve c·(n^-b - N^-b) = 0.1. The interval is the 5th-95th percentile of the same prediction over
bootstrap resamples of the topics (Sakai's topic-set-size view: topics are the unit of variation).

    >>> predict_judgments(0.5, 0.5, target=0.9, final=10_000)  # c = 0.5, b = 0.5
    23
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

__all__ = ["BudgetPlan", "average_precision", "fit_path", "plan_budget", "predict_judgments"]

TARGET_TAU = 0.9
BOOTSTRAP = 200


@dataclass(frozen=True)
class BudgetPlan:
    judgments: int                 # judgments so far (in the qrels)
    planned: int                   # the final budget the prediction is relative to
    tau_now: float                 # predicted τ of the ranking now with the one at the planned budget
    judgments_to_tau: int | None   # predicted total judgments for τ ≥ target (None: no fit)
    interval: tuple[int, int] | None
    more: int | None               # judgments still to make: judgments_to_tau - judgments (at least 0)
    curve: pd.DataFrame            # depth, judgments, tau, tau_top10, top_same
    topics_curve: pd.DataFrame     # topics, tau (mean over random subsets), tau_low, tau_high
    sample_curve: pd.DataFrame     # share, judgments, tau: a random share of each topic's judgments kept
    next_topics: list[str] = field(default_factory=list)  # topics to judge next (still finding relevant ones)
    fit: tuple[float, float] | None = None  # (c, b)
    target: float = TARGET_TAU

    def as_json(self) -> dict:
        return {"judgments": self.judgments, "planned": self.planned, "tau_now": _round(self.tau_now),
                f"judgments_to_tau_{str(self.target).replace('.', '_')}": self.judgments_to_tau,
                "interval": list(self.interval) if self.interval else None, "more_judgments": self.more,
                "next_topics": self.next_topics,
                "fit": {"c": _round(self.fit[0]), "b": _round(self.fit[1])} if self.fit else None,
                "curve": [{k: _round(v) for k, v in row.items()} for row in self.curve.to_dict("records")],
                "topics_curve": [{k: _round(v) for k, v in row.items()}
                                 for row in self.topics_curve.to_dict("records")],
                "sample_curve": [{k: _round(v) for k, v in row.items()}
                                 for row in self.sample_curve.to_dict("records")]}


def _round(value):
    if isinstance(value, float | np.floating):
        return None if math.isnan(value) else round(float(value), 4)
    if isinstance(value, np.integer | np.bool_):
        return value.item()
    return value


@dataclass(frozen=True)
class _Entries:
    """Ranked entries of every run on the judged topics, as arrays in (run, topic, rank) order."""

    group: np.ndarray      # run * n_topics + topic
    rank: np.ndarray       # 1-based
    relevant: np.ndarray   # bool: judged relevant in the qrels
    depth: np.ndarray      # the judged document's pool depth (inf: unjudged)
    n_runs: int
    n_topics: int


def _entries(ranked: pd.DataFrame, qrels: pd.DataFrame, topics: list[str], tags: list[str]) -> _Entries:
    topic_code = {q: i for i, q in enumerate(topics)}
    tag_code = {t: i for i, t in enumerate(tags)}
    frame = ranked[ranked["qid"].isin(topic_code)]
    judged = qrels.set_index(["qid", "docno"])
    keys = pd.MultiIndex.from_arrays([frame["qid"], frame["docno"]])
    where = judged.index.get_indexer(keys)
    hit = where >= 0
    relevant = np.zeros(len(frame), dtype=bool)
    relevant[hit] = judged["relevant"].to_numpy()[where[hit]]
    depth = np.full(len(frame), np.inf)
    depth[hit] = judged["depth"].to_numpy(dtype=float)[where[hit]]
    group = frame["tag"].map(tag_code).to_numpy() * len(topics) + frame["qid"].map(topic_code).to_numpy()
    order = np.lexsort((frame["rank"].to_numpy(), group))
    return _Entries(group[order].astype(np.int64), frame["rank"].to_numpy()[order].astype(np.int64),
                    relevant[order], depth[order], len(tags), len(topics))


def average_precision(entries: _Entries, judged_relevant: np.ndarray, cutoff: float) -> np.ndarray:
    """AP [runs, topics] with only the relevant documents at pool depth <= ``cutoff`` counted as relevant;
    ``judged_relevant[t]`` is how many there are for topic t (AP is 0 where there are none)."""
    rel = entries.relevant & (entries.depth <= cutoff)
    cum = np.cumsum(rel)
    starts = np.flatnonzero(np.concatenate(([True], entries.group[1:] != entries.group[:-1])))
    before = np.repeat(np.concatenate(([0], cum[starts[1:] - 1])), np.diff(np.concatenate((starts, [len(rel)]))))
    precision = (cum - before) / entries.rank
    sums = np.bincount(entries.group, weights=np.where(rel, precision, 0.0),
                       minlength=entries.n_runs * entries.n_topics).reshape(entries.n_runs, entries.n_topics)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(judged_relevant > 0, sums / judged_relevant, 0.0)


def _tau(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) < 2 or np.all(a == a[0]) or np.all(b == b[0]):
        return float("nan")
    # scipy.stats weighs 50 MB: imported by the planner, not by every web worker at start
    from scipy.stats import kendalltau

    return float(kendalltau(a, b).statistic)


def _path(n, c, b, now):
    return c * (np.power(n, -b) - now ** -b)


def fit_path(judgments: np.ndarray, taus: np.ndarray, now: int) -> tuple[float, float] | None:
    """(c, b) of 1 - τ(n, now) = c·(n^-b - now^-b), least squares over the points with n < now."""
    keep = (judgments < now) & np.isfinite(taus) & (judgments > 0)
    if keep.sum() < 2:
        return None
    from scipy.optimize import curve_fit

    try:
        (c, b), _ = curve_fit(lambda n, c, b: _path(n, c, b, now), judgments[keep].astype(float),
                              1 - taus[keep], p0=(1.0, 0.5), bounds=([1e-6, 0.01], [1e6, 3.0]), maxfev=5000)
    except (RuntimeError, ValueError):
        return None
    return float(c), float(b)


def predict_judgments(c: float, b: float, *, target: float = TARGET_TAU, final: int) -> int:
    """Judgments n with c·(n^-b - final^-b) = 1 - target (at most ``final``)."""
    n = (((1 - target) / c) + final ** -b) ** (-1 / b)
    return int(math.ceil(min(n, final)))


def _levels(depths: np.ndarray, n: int = 16) -> np.ndarray:
    finite = np.unique(depths[np.isfinite(depths)])
    if not len(finite):
        return finite
    grid = np.unique(np.round(np.geomspace(1, finite.max(), n)))
    return np.unique(np.concatenate((grid[grid < finite.max()], [finite.max()])))


def _curve(entries: _Entries, qrels: pd.DataFrame, topics: list[str], levels: np.ndarray, topic_rows: np.ndarray
           ) -> tuple[pd.DataFrame, list[np.ndarray]]:
    """Per depth: judgments, and the AP matrix (for the bootstrap); τ columns are filled by the caller."""
    aps, counts = [], []
    for level in levels:
        inside = qrels["depth"] <= level
        rel_counts = (qrels["relevant"] & inside).groupby(qrels["qid"]).sum()
        judged_relevant = rel_counts.reindex(topics).fillna(0).to_numpy()
        aps.append(average_precision(entries, judged_relevant, level)[:, topic_rows])
        counts.append(int(inside.sum()))
    return pd.DataFrame({"depth": levels.astype(int), "judgments": counts}), aps


def _taus(aps: list[np.ndarray], columns: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    means = [ap[:, columns].mean(axis=1) for ap in aps]
    now = means[-1]
    top10 = np.argsort(-now, kind="stable")[:10]
    tau = np.array([_tau(m, now) for m in means])
    tau10 = np.array([_tau(m[top10], now[top10]) for m in means])
    top = np.array([int(np.argmax(m) == np.argmax(now)) for m in means])
    return tau, tau10, top


def _next_topics(qrels: pd.DataFrame, k: int = 5) -> list[str]:
    """Topics whose deepest quarter of judgments still found the most relevant documents per judgment."""
    rows = []
    for qid, group in qrels.groupby("qid", sort=False):
        deep = group[group["depth"] >= group["depth"].quantile(0.75)]
        rows.append((-float(deep["relevant"].mean()) if len(deep) else 0.0, str(qid)))
    return [qid for score, qid in sorted(rows) if score < 0][:k]


def _topics_curve(aps_now: np.ndarray, rng: np.random.Generator, repeats: int = 20) -> pd.DataFrame:
    n = aps_now.shape[1]
    now = aps_now.mean(axis=1)
    rows = []
    for k in sorted(k for k in {max(2, round(n * f)) for f in (0.1, 0.2, 0.3, 0.5, 0.7, 0.85)} if k < n):
        taus = [_tau(aps_now[:, rng.choice(n, k, replace=False)].mean(axis=1), now) for _ in range(repeats)]
        rows.append({"topics": k, "tau": float(np.nanmean(taus)), "tau_low": float(np.nanpercentile(taus, 5)),
                     "tau_high": float(np.nanpercentile(taus, 95))})
    return pd.DataFrame(rows, columns=["topics", "tau", "tau_low", "tau_high"])


def _sample_curve(ranked: pd.DataFrame, qrels: pd.DataFrame, topics: list[str], tags: list[str],
                  rng: np.random.Generator) -> pd.DataFrame:
    """τ with the ranking now when only a random share of each topic's judgments is kept (judgments per topic)."""
    sampled = qrels.assign(depth=rng.random(len(qrels)), qid=qrels["qid"].astype(str),
                           docno=qrels["docno"].astype(str))
    entries = _entries(ranked, sampled, topics, tags)
    shares = np.array([0.1, 0.25, 0.5, 0.75, 1.0])
    curve, aps = _curve(entries, sampled, topics, shares, np.arange(len(topics)))
    tau, _, _ = _taus(aps, np.arange(len(topics)))
    return pd.DataFrame({"share": shares, "judgments": curve["judgments"], "tau": tau})


def plan_budget(ranked: pd.DataFrame, qrels: pd.DataFrame, *, relevant_from: int = 1, planned: int | None = None,
                target: float = TARGET_TAU, bootstrap: int = BOOTSTRAP, seed: int = 1,
                max_depth: int | None = None) -> BudgetPlan:
    """The budget plan of a collection.

    Args:
        ranked: ranked entries ``tag, qid, docno, rank`` of every run to rank (rank 1-based, the evaluation order).
        qrels: the judgments so far, ``qid, docno, rel, depth`` (depth: the document's pool depth, the best rank a
            contributing run gave it; inf or NaN for a document no contributing run retrieved: judged last).
        planned: the final number of judgments (e.g. the pool's size); default: the judgments so far.
        max_depth: the pool's depth: the curve ends there (a document ranked deeper counts at this depth).
    """
    qrels = qrels.assign(relevant=qrels["rel"].to_numpy() >= relevant_from,
                         depth=qrels["depth"].astype(float).fillna(np.inf))
    finite = qrels["depth"][np.isfinite(qrels["depth"])]
    # a judged document no contributing run retrieved counts at the deepest depth (judged with the last ones),
    # so that the curve ends at the pool's depth, not one past it
    deepest = min(finite.max(), max_depth or np.inf) if len(finite) else float(max_depth or 1)
    qrels["depth"] = qrels["depth"].clip(upper=deepest)
    judgments = len(qrels)
    planned = max(planned or judgments, judgments)
    topics = sorted(qrels.loc[qrels["relevant"], "qid"].astype(str).unique())
    tags = sorted(ranked["tag"].unique())
    empty = pd.DataFrame(columns=["depth", "judgments", "tau", "tau_top10", "top_same"])
    if len(tags) < 2 or not topics:
        return BudgetPlan(judgments, planned, float("nan"), None, None, None, empty,
                          pd.DataFrame(columns=["topics", "tau", "tau_low", "tau_high"]),
                          pd.DataFrame(columns=["share", "judgments", "tau"]), target=target)
    entries = _entries(ranked.astype({"qid": str, "docno": str}), qrels.astype({"qid": str, "docno": str}),
                       topics, tags)
    curve, aps = _curve(entries, qrels, topics, _levels(qrels["depth"].to_numpy()), np.arange(len(topics)))
    all_topics = np.arange(len(topics))
    curve["tau"], curve["tau_top10"], curve["top_same"] = _taus(aps, all_topics)
    fit = fit_path(curve["judgments"].to_numpy(), curve["tau"].to_numpy(), judgments)
    predicted = predict_judgments(*fit, target=target, final=planned) if fit else None
    rng = np.random.default_rng(seed)
    samples = []
    for _ in range(bootstrap if fit else 0):
        columns = rng.choice(len(topics), len(topics), replace=True)
        tau, _, _ = _taus(aps, columns)
        f = fit_path(curve["judgments"].to_numpy(), tau, judgments)
        if f:
            samples.append(predict_judgments(*f, target=target, final=planned))
    interval = (int(np.percentile(samples, 5)), int(np.percentile(samples, 95))) if samples else None
    # τ of the ranking now with the final one at the planned budget (1 when nothing more is planned: the fit
    # cannot tell how far the ranking is from one of a budget never observed)
    tau_now = 1.0 if planned <= judgments else (1 - _path(judgments, *fit, planned) if fit else math.nan)
    return BudgetPlan(
        judgments=judgments, planned=planned, tau_now=float(tau_now), judgments_to_tau=predicted,
        interval=interval, more=max(0, predicted - judgments) if predicted is not None else None, curve=curve,
        topics_curve=_topics_curve(aps[-1], rng),
        sample_curve=_sample_curve(ranked.astype({"qid": str, "docno": str}), qrels, topics, tags, rng),
        next_topics=_next_topics(qrels), fit=fit, target=target)

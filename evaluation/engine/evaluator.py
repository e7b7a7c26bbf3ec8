"""Evaluate runs against prepared qrels: per-topic values and trec_eval's summary line ("all").

Averaging follows trec_eval 9.0.8 (``meas_avg.c``): a topic counts when it is both in the run and in the
qrels; the mean is over those topics, or with ``complete=True`` (``-c``) over every qrels topic, a missing
topic adding 0 (the geometric means add ``log(0.00001)`` for it). ``num_ret``, ``num_rel_ret`` and
``num_nonrel_judged_ret`` are sums; ``num_rel`` too, except that under ``-c`` 9.0.8 counts every qrels line
with a positive grade, whatever ``-l``. ``gm_map`` and ``gm_bpref`` are ``exp(mean(log(max(v, 1e-5))))``.
Sums over topics are added in topic order, as trec_eval adds them.

>>> import pandas as pd
>>> qrels = Qrels.from_frame(pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [1, 0]}))
>>> run = pd.DataFrame({"qid": ["1", "1"], "docno": ["b", "a"], "score": [2.0, 1.0]})
>>> Evaluator(qrels, measures=["map", "P.1"]).evaluate(run).aggregate
{'map': 0.5, 'P_1': 0.0}
"""

from __future__ import annotations

import functools
import math
from collections import ChainMap
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from evaluation.engine import (
    kernels_ext,
    kernels_families,
    kernels_gain,
    kernels_textbook,
    kernels_trec,
    measure_families,
)
from evaluation.engine.context import Ctx
from evaluation.engine.qrels import Qrels
from evaluation.engine.ranking import Ranked, blocks, rank_runs
from evaluation.engine.spec import LONG, SPECS, STRING, Measure, parse_measures

if TYPE_CHECKING:  # pandas is imported only when a caller asks for a frame
    import pandas as pd

MIN_GEO_MEAN = 0.00001
#: the engine's kernels, then those of the families declared in modules of their own (measure_families)
KERNELS = ChainMap({**kernels_trec.KERNELS, **kernels_gain.KERNELS, **kernels_ext.KERNELS, **kernels_textbook.KERNELS,
                    **kernels_families.KERNELS}, measure_families.KERNELS)


@dataclass(frozen=True)
class EvalResult:
    """Scores of one run: ``per_topic`` (index ``qid``, one column per printed measure name, topics in
    ``strcmp`` order, only topics in both run and qrels) and ``aggregate`` (what trec_eval prints for
    ``all``). ``measures`` are the parsed requests, in output order. The same per-topic values without
    pandas: ``qids`` (that order) and ``values`` (``{name: array aligned with qids}``)."""

    qids: list[str]
    values: dict
    aggregate: dict
    measures: tuple[Measure, ...]
    tag: str | None = None

    @functools.cached_property
    def per_topic(self) -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(self.values, index=pd.Index(self.qids, name="qid", dtype=object))

    def column(self, name: str, topics, fill: float = np.nan) -> np.ndarray:
        """The values of ``name`` on ``topics`` (float), ``fill`` where the run has none (no results for
        the topic, or no per-topic value of that name): a row of a topics x runs table, without pandas."""
        out = np.full(len(topics), fill, dtype=float)
        values = self.values.get(name)
        if values is None or not len(topics):
            return out
        if list(self.qids) == list(topics):
            return np.asarray(values, dtype=float).copy()
        where = {q: i for i, q in enumerate(self.qids)}
        index = np.fromiter((where.get(q, -1) for q in topics), dtype=np.int64, count=len(topics))
        have = index >= 0
        out[have] = np.asarray(values, dtype=float)[index[have]]
        return out


class Evaluator:
    """Evaluate runs against one :class:`Qrels` with trec_eval's options.

    ``measures``: trec_eval ``-m`` requests (``"P.5,10"``, ``"ndcg.1=3,2=9"``, ``"all_trec"``; default
    ``official``); ``relevance_level`` = ``-l``; ``judged_only`` = ``-J``; ``max_depth`` = ``-M`` (``None``:
    no limit, trec_eval's default); ``complete`` = ``-c``; ``num_docs_in_coll`` = ``-N`` (utility only).
    Build once per qrels and configuration; :meth:`evaluate_many` ranks many runs in one pass.
    """

    def __init__(self, qrels: Qrels, measures=None, *, relevance_level: int = 1, judged_only: bool = False,
                 max_depth: int | None = None, complete: bool = False, num_docs_in_coll: int = 0) -> None:
        self.qrels = qrels
        self.measures = tuple(parse_measures(measures))
        for m in self.measures:
            if m.name in ("rbp", "rbp_resid", "rbp_graded"):
                kernels_ext.rbp_p(m)
        # fractional grades were made relevant (1) or not (0) by their own level when the qrels were read
        self.level = 1 if qrels.values is not None else int(relevance_level)
        if self.level < 0:  # trec_eval would then count unpooled documents as relevant
            raise ValueError("relevance_level must be >= 0")
        self.judged_only = judged_only
        self.max_depth = max_depth
        self.complete = complete
        self.coll_size = num_docs_in_coll
        self._num_rel = qrels.num_rel(self.level)
        self._num_nonrel = qrels.num_nonrel(self.level)

    def evaluate(self, frame, tag: str | None = None) -> EvalResult:
        """Evaluate one run: a frame (``qid``, ``docno``, ``score``; any order; rank column ignored) or a
        :class:`workbench.formats.RunArrays` (:func:`workbench.formats.read_run_arrays`)."""
        return self.evaluate_many({tag: frame})[tag]

    def evaluate_many(self, runs: dict) -> dict:
        """Evaluate ``{tag: frame or RunArrays}`` in one batch; returns ``{tag: EvalResult}``."""
        tags = list(runs)
        return self.score(self.rank([runs[t] for t in tags]), dict(enumerate(tags)))

    def rank(self, runs: list) -> Ranked:
        """The runs ranked against the qrels with this evaluator's ``-M`` and ``-J``: what
        :meth:`score` takes, reusable by every evaluator of the same qrels and options (and, through
        :meth:`Ranked.without`, of qrels made by :meth:`Qrels.without`)."""
        return rank_runs(self.qrels, runs, max_depth=self.max_depth, judged_only=self.judged_only)

    def score(self, ranked: Ranked, tags: dict[int, object]) -> dict:
        """``{tag: EvalResult}`` of the runs ``tags`` names (run index in ``ranked`` -> tag)."""
        values = self._compute(ranked)
        return {tag: self._result(ranked, values, r, tag) for r, tag in tags.items()}

    # -- computing ---------------------------------------------------------------------------------
    def _compute(self, ranked: Ranked) -> dict:
        n_seg = len(ranked.lengths)
        plain = [m for m in self.measures if m.name in KERNELS]
        condensed = [m for m in self.measures if m.name in kernels_ext.CONDENSED]
        values: dict[str, np.ndarray] = {}
        self._run_kernels(ranked, plain, values, n_seg)
        if condensed:
            self._run_kernels(ranked if self.judged_only else ranked.judged_only(), condensed, values, n_seg)
        return values

    def _run_kernels(self, ranked: Ranked, measures: list, values: dict, n_seg: int) -> None:
        for m in measures:
            for name in m.names:
                kind = object if m.spec.value == STRING else (np.int64 if m.spec.value == LONG else np.float64)
                values[name] = np.zeros(n_seg, dtype=kind)
        topic = ranked.seg_topic
        for block in blocks(ranked):
            t = topic[block.rows]
            stats = {"topic": t, "num_rel": self._num_rel[t], "num_nonrel": self._num_nonrel[t]}
            ctx = Ctx(block, stats, self.level, self.coll_size, self.qrels)
            for m in measures:
                kernel = KERNELS[kernels_ext.CONDENSED.get(m.name, m.name)]
                base = m if m.name not in kernels_ext.CONDENSED else _as_base(m)
                for name, v in zip(m.names, kernel(ctx, base), strict=True):
                    values[name][block.rows] = v

    def topic_values(self, ranked: Ranked, tags: dict[int, object]) -> dict:
        """``{tag: (qids, {name: per-topic values})}`` of the runs ``tags`` names, every value a topic has
        (also those of measures only summarised, such as ``gm_map``): what :meth:`joined` takes, for a
        ranking of a slice of the topics."""
        values = self._compute(ranked)
        out = {}
        for r, tag in tags.items():
            segs = np.flatnonzero(ranked.seg_run == r)
            out[tag] = ([self.qrels.topics[t] for t in ranked.seg_topic[segs]],
                        {name: v[segs] for name, v in values.items()})
        return out

    # -- assembling --------------------------------------------------------------------------------
    def _result(self, ranked: Ranked, values: dict, run: int, tag) -> EvalResult:
        segs = np.flatnonzero(ranked.seg_run == run)
        qids = [self.qrels.topics[t] for t in ranked.seg_topic[segs]]
        summary = _Summary(self.complete, len(self.qrels.topics), self.qrels.positive_total)
        return _assembled(self.measures, qids, {name: v[segs] for name, v in values.items()}, tag, summary)


@dataclass(frozen=True)
class _Summary:
    """What summarising a run's values needs beyond them: ``-c``, and the qrels' topics and positive lines."""

    complete: bool = False
    n_topics: int = 0
    positive_total: int = 0


def joined(measures, slices: list[tuple[list, dict]], tag=None) -> EvalResult:
    """One run's result from its :meth:`Evaluator.topic_values` on slices of the topics (in topic order,
    trec_eval's averaging without ``-c``): per-topic values depend on their topic only, so this is the result
    of one evaluation over every topic, its summary added in the same order."""
    qids = [q for s in slices for q in s[0]]
    names = dict.fromkeys(n for s in slices for n in s[1])
    values = {n: np.concatenate([np.asarray(s[1][n]) for s in slices if n in s[1]]) for n in names}
    return _assembled(tuple(parse_measures(measures)), qids, values, tag, _Summary())


def _assembled(measures: tuple, qids: list, values: dict, tag, ev: _Summary) -> EvalResult:
    n_eval = len(qids)
    divisor = ev.n_topics if ev.complete else n_eval
    columns, aggregate = {}, {}
    for m in measures:
        spec = m.spec
        if spec.summary == "runid":
            if tag is not None:
                aggregate["runid"] = str(tag)
            continue
        if spec.summary == "num_q":
            aggregate["num_q"] = divisor
            continue
        for name in m.names:
            v = values[name] if name in values else np.zeros(0, dtype=np.float64)
            if spec.per_topic:
                columns[name] = v
            aggregate.update(_summarise(spec.summary, name, v, divisor, n_eval, ev))
    return EvalResult(qids=qids, values=columns, aggregate=aggregate, measures=measures, tag=tag)


def _as_base(m: Measure) -> Measure:
    base = SPECS[kernels_ext.CONDENSED[m.name]]
    return Measure(base, m.params, m.names, m.raw)


def _seq_sum(v: np.ndarray) -> float:
    return float(np.add.accumulate(v.astype(np.float64))[-1]) if v.size else 0.0


def _summarise(kind: str, name: str, v: np.ndarray, divisor: int, n_eval: int, ev: _Summary) -> dict:
    if kind == "none":
        return {}
    if kind == "sum":
        return {name: int(v.sum())}
    if kind == "num_rel":
        return {name: ev.positive_total if ev.complete else int(v.sum())}
    if kind == "gm":
        total = 0.0
        for x in v:
            total += math.log(max(float(x), MIN_GEO_MEAN))
        if ev.complete:
            total += (divisor - n_eval) * math.log(MIN_GEO_MEAN)
        return {name: math.exp(total / divisor) if divisor else 0.0}
    total = _seq_sum(v)
    return {name: total / divisor if divisor else total}

"""Gains of relevance grades and the ideal ranking, as trec_eval 9.0.8's ``setup_gains`` builds them.

For ``ndcg``, ``ndcg_rel``, ``Rndcg`` and ``G`` (``-m ndcg.1=3,2=9``): the gain list of a topic is every
``level=gain`` parameter (``atol`` of the level) then every grade ``0 .. max grade`` of the topic not named
by a parameter (gain = grade), each with its number of judged documents; it is sorted by increasing gain
with glibc's merge sort and the comparator ``(int)(g1 - g2)`` (so gains closer than 1 compare equal and keep
their order). A document's gain is that of the first entry with its grade (0 if none, e.g. unjudged).
The ideal ranking walks the sorted list from the top gain down, skipping empty levels, and stops at the
first non-empty level whose gain is <= 0.

With integer gains (the default) this is the textbook ideal: every judged document with a positive gain,
best first. Only the grades present in a topic change the list, so orders are computed once per
``num_rel_levels`` value, not per topic.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from evaluation.engine.context import log2_table
from evaluation.engine.qrels import Qrels
from evaluation.engine.ranking import sorted_distinct
from evaluation.engine.spec import MeasureError, _strtol


def _glibc_msort(items: list, cmp) -> list:
    """glibc ``msort_with_tmp``: top-down merge sort, left half first, ``cmp(a, b) <= 0`` keeps a first."""
    n = len(items)
    if n <= 1:
        return list(items)
    n1 = n // 2
    left, right = _glibc_msort(items[:n1], cmp), _glibc_msort(items[n1:], cmp)
    out, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if cmp(left[i], right[j]) <= 0:
            out.append(left[i])
            i += 1
        else:
            out.append(right[j])
            j += 1
    return out + left[i:] + right[j:]


def _cmp_gain(a, b) -> int:
    return int(a[1] - b[1])  # C: (int)(double - double), truncation toward zero


def ordered_levels(pairs: tuple, n_levels: int) -> list[tuple[int, float, bool]]:
    """Sorted gain list for a topic with ``n_levels`` grades: (level, gain, gets_count) per entry."""
    entries: list[tuple[int, float, bool]] = [(_strtol(k), float(v), False) for k, v in pairs]
    for level in range(n_levels):
        j = next((j for j, e in enumerate(entries) if e[0] == level), None)
        if j is None:
            entries.append((level, float(level), True))
        elif not entries[j][2]:
            entries[j] = (entries[j][0], entries[j][1], True)
    return _glibc_msort(entries, _cmp_gain)


@dataclass(frozen=True)
class GainModel:
    """Per-topic gains for one parameter list: result gain lookup and ideal ranking.

    ``lookup[g, v + 2]`` is the gain of rel value ``v`` (>= -2) for topics of group ``g``;
    ``ideal`` holds each topic's ideal gains (row per topic, padded with 0), ``n_ideal`` their count,
    ``after`` the gain value the walk stops on (<= 0), ``first`` the initial top gain,
    ``ideal_dcg`` the running ideal DCG (``sum gain_i / log2(i + 2)``, left to right).
    """

    group: np.ndarray
    lookup: np.ndarray
    ideal: np.ndarray
    n_ideal: np.ndarray
    after: np.ndarray
    first: np.ndarray
    ideal_dcg: np.ndarray
    transform: Callable[[np.ndarray], np.ndarray] | None = None  # fractional grades: grade -> gain

    def entry_gains(self, ctx) -> np.ndarray:
        """The gain of each entry of a block (:class:`~evaluation.engine.context.Ctx`), 0 for padding."""
        if self.transform is not None:
            grades = ctx.grade_gains
            return np.where(grades > 0, self.transform(grades), 0.0)
        return np.where(ctx.valid, self.gains(ctx.stat("topic"), ctx.rel), 0.0)

    def gains(self, rows_topic: np.ndarray, rel: np.ndarray) -> np.ndarray:
        """Gain of each rel value (matrix), 0 for padding."""
        idx = np.clip(rel.astype(np.int64) + 2, 0, self.lookup.shape[1] - 1)
        g = self.lookup[self.group[rows_topic][:, None], idx]
        return np.where(rel >= -2, g, 0.0)


def _gain_lookup(distinct: np.ndarray, pairs: tuple, top: int) -> tuple[np.ndarray, list]:
    """Gain of each rel value (column rel + 2) for each group of topics with the same number of levels,
    and each group's ordered levels."""
    lookup = np.zeros((max(len(distinct), 1), top + 3))
    orders = []
    for g, nl in enumerate(distinct):
        order = ordered_levels(pairs, int(nl))
        orders.append(order)
        for level, gain, _ in reversed(order):  # the first entry with a level wins
            if -2 <= level <= top:
                lookup[g, level + 2] = gain
    return lookup, orders


def _ideal_gains(gains: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, float]:
    """One topic's ideal gains (best level first, while gains are positive) and the gain that stopped it."""
    seq, stop = [], 0.0
    if len(gains) and gains[-1] > 0:
        for e in range(len(gains) - 1, -1, -1):
            if counts[e] == 0:
                continue
            if gains[e] <= 0:
                stop = gains[e]
                break
            seq.append(np.full(counts[e], gains[e]))
    return (np.concatenate(seq) if seq else np.zeros(0)), stop


def _group_ideals(qrels: Qrels, order: list, members: np.ndarray) -> tuple[float, list[tuple[np.ndarray, float]]]:
    """The first gain of a group of topics and each member's (ideal gains, stop)."""
    counts = np.stack([qrels.count_at(level)[members] if real else np.zeros(members.size, np.int64)
                       for level, _, real in order], axis=1) if order else np.zeros((members.size, 0), int)
    gains = np.array([gain for _, gain, _ in order])
    first = gains[-1] if order else 0.0
    return first, [_ideal_gains(gains, counts[row]) for row in range(members.size)]


def _linear(grades: np.ndarray) -> np.ndarray:
    return grades


def _exponential(grades: np.ndarray) -> np.ndarray:
    return np.exp2(grades) - 1.0


def fractional_model(qrels: Qrels, transform) -> GainModel:
    """Gains of fractional grades: ``transform(grade)`` of every positive grade, the ideal ranking every
    judged document with a positive grade, highest first (cached on ``qrels``)."""
    key = ("gains-fractional", transform.__name__)
    if key in qrels._cache:
        return qrels._cache[key]
    n_topics = len(qrels.topics)
    positive = qrels.values > 0
    topic = (qrels.keys // qrels.n_docs)[positive]
    gains = transform(qrels.values[positive])
    order = np.lexsort((-gains, topic))
    topic, gains = topic[order], gains[order]
    n_ideal = np.bincount(topic, minlength=n_topics).astype(np.int64)
    ideal = np.zeros((n_topics, max(int(n_ideal.max(initial=0)), 1)))
    ideal[topic, np.arange(topic.size) - (np.cumsum(n_ideal) - n_ideal)[topic]] = gains
    disc = log2_table(ideal.shape[1] + 2)[2:]
    model = GainModel(group=np.zeros(n_topics, dtype=np.int64), lookup=np.zeros((1, 3)), ideal=ideal,
                      n_ideal=n_ideal, after=np.zeros(n_topics), first=ideal[:, 0],
                      ideal_dcg=np.cumsum(ideal / disc, axis=1), transform=transform)
    qrels._cache[key] = model
    return model


def gain_model(qrels: Qrels, pairs: tuple = ()) -> GainModel:
    """Build (and cache on ``qrels``) the gain model of ``pairs`` (``(("1", 3.0), ...)``)."""
    if qrels.values is not None:
        if pairs:
            raise MeasureError("gains per grade (e.g. ndcg.1=3,2=9) need integer grades, not fractional ones")
        return fractional_model(qrels, _linear)
    key = ("gains", pairs)
    if key in qrels._cache:
        return qrels._cache[key]
    n_rel_levels = qrels.num_rel_levels()
    n_topics = len(qrels.topics)
    distinct = sorted_distinct(n_rel_levels) if n_topics else np.zeros(0, np.int64)
    group = np.searchsorted(distinct, n_rel_levels)
    top = int(max(qrels.levels.max(initial=0), max((_strtol(k) for k, _ in pairs), default=0)))
    lookup, orders = _gain_lookup(distinct, pairs, top)
    sequences: list[np.ndarray] = [np.zeros(0)] * n_topics
    after, first = np.zeros(n_topics), np.zeros(n_topics)
    for g, order in enumerate(orders):
        members = np.flatnonzero(group == g)
        if not members.size:
            continue
        first[members], ideals = _group_ideals(qrels, order, members)
        for topic, (seq, stop) in zip(members, ideals, strict=True):
            sequences[topic], after[topic] = seq, stop
    n_ideal = np.array([seq.size for seq in sequences], dtype=np.int64)
    ideal = np.zeros((n_topics, max(int(n_ideal.max(initial=0)), 1)))
    for topic, seq in enumerate(sequences):
        ideal[topic, : seq.size] = seq
    disc = log2_table(ideal.shape[1] + 2)[2:]
    ideal_dcg = np.cumsum(np.where(ideal > 0, ideal / disc, 0.0), axis=1)
    model = GainModel(group=group, lookup=lookup, ideal=ideal, n_ideal=n_ideal, after=after, first=first,
                      ideal_dcg=ideal_dcg)
    qrels._cache[key] = model
    return model


def exp_gain_model(qrels: Qrels) -> GainModel:
    """Exponential gains ``2**grade - 1`` (Burges et al., ICML 2005) with the textbook ideal."""
    if qrels.values is not None:
        return fractional_model(qrels, _exponential)
    key = ("gains-exp",)
    if key in qrels._cache:
        return qrels._cache[key]
    top = int(qrels.levels.max(initial=0))
    grades = np.arange(-2, top + 1)
    lookup = np.where(grades > 0, np.exp2(np.maximum(grades, 0)) - 1.0, 0.0)[None, :]
    positive = qrels.levels > 0
    lv = qrels.levels[positive][::-1]
    counts = qrels.level_counts[:, positive][:, ::-1]
    n_ideal = counts.sum(axis=1)
    width = max(int(n_ideal.max(initial=0)), 1)
    ideal = np.zeros((len(qrels.topics), width))
    col = np.arange(width)[None, :]
    ends = np.cumsum(counts, axis=1)
    for j in range(lv.size):
        start = ends[:, j] - counts[:, j]
        mask = (col >= start[:, None]) & (col < ends[:, j][:, None])
        ideal[mask] = 2.0 ** lv[j] - 1.0
    disc = log2_table(width + 2)[2:]
    model = GainModel(group=np.zeros(len(qrels.topics), dtype=np.int64), lookup=lookup, ideal=ideal,
                      n_ideal=n_ideal, after=np.zeros(len(qrels.topics)), first=ideal[:, 0],
                      ideal_dcg=np.cumsum(ideal / disc, axis=1))
    qrels._cache[key] = model
    return model

"""How much of a pool is judged (:class:`JudgedFigures`), computed from the judgments; the pages read the figures
the board job stored (:func:`evaluation.selectors.judged_figures`)."""

from __future__ import annotations

from dataclasses import dataclass

from evaluation import scoring, snapshot
from pooling import strategies as S
from workbench.models import Collection

__all__ = ["JudgedFigures", "joined_figures", "main_pool_figures", "pool_figures"]


@dataclass(frozen=True)
class JudgedFigures:
    """How much of a pool is judged, per topic and in all: the one source of every "judged" figure the
    pages show (overview, pool page, leaderboard, topic pages).

    A (topic, document) is *judged* when it has a judgment record: a grade or "cannot judge", by any
    assessor, imported qrels included (what makes a topic fully judged, :mod:`judging.completeness`).

    - ``judged_in_pool``: pooled documents judged; ``percent_in_pool`` = judged_in_pool / pooled;
    - ``judgments``: judged documents of the topics, pooled or not (earlier qrels often judge documents
      outside this pool).
    """

    pool: str | None
    topics: dict[str, dict]   # qid -> {"pooled", "judged_in_pool", "judgments"}, topics in natural order
    pooled: int
    judged_in_pool: int
    judgments: int

    @property
    def percent_in_pool(self) -> int:
        return round(100 * self.judged_in_pool / self.pooled) if self.pooled else 0


def pool_figures(collection: Collection, pool, topics: list[str] | None = None) -> JudgedFigures:
    """The figures of the pool (of ``topics`` only, if given: a slice a part of a split job reads alone)."""
    counts = scoring.judged_counts(collection, [] if pool is None else [pool.pk], topics)
    figures = {q: {"pooled": c.pooled, "judged_in_pool": c.judged_in_pool, "judgments": c.judged}
               for q, c in counts.items()}
    return JudgedFigures(pool=None if pool is None else pool.name,
                         topics={q: figures[q] for q in S.sorted_topics(figures)},
                         pooled=sum(c.pooled for c in counts.values()),
                         judged_in_pool=sum(c.judged_in_pool for c in counts.values()),
                         judgments=sum(c.judged for c in counts.values()))


def main_pool_figures(collection: Collection, topics: list[str] | None = None) -> JudgedFigures:
    """The figures of the main pool (the leaderboard's), on ``topics`` alone if given (:func:`joined_figures`
    puts slices together)."""
    info = snapshot.snapshot(collection).main_pool
    return pool_figures(collection, None if info is None else info.pool, topics)


def joined_figures(parts: list[JudgedFigures]) -> JudgedFigures:
    """The figures of every topic from their values on slices of the topics (each topic in one)."""
    topics = {q: v for part in parts for q, v in part.topics.items()}
    return JudgedFigures(pool=parts[0].pool, topics={q: topics[q] for q in S.sorted_topics(topics)},
                         pooled=sum(p.pooled for p in parts), judged_in_pool=sum(p.judged_in_pool for p in parts),
                         judgments=sum(p.judgments for p in parts))

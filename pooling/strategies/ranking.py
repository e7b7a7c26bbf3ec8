"""The ranking rule every strategy shares, and the choice of contributing runs.

Ranking rule (NIST's pools): within each (run, topic), documents are ordered by score descending and
documents with equal scores keep the order in which they appear in the submitted file. The rank column
of a run is never read: it is often inconsistent with the scores in real submissions, and pooling by it
does not reproduce the official pools (checked on TREC-COVID round 2, see
``tests/benchmarks/simulate_pooling.py --check-nist``).

Each run is ranked with numpy on its own arrays (they stay in cache): a run that lists each topic in one
block in score order -- as the run store keeps them (``workbench.collections.runstore``) -- is only checked, in O(n),
and the top k of a topic is a prefix of its block; out-of-order blocks are sorted, and a file that
interleaves topics takes one stable ``np.lexsort``. Only the rows kept are gathered: document identifiers
are only touched within the depth, so a depth-100 pool over 25 M entries never hashes 25 M docno strings.
The kept rows of every run come back as codes (:class:`Ranked`: topic, run and document codes, the
document codes in docno order, and the rows sorted by (topic, document)), which the union of the pool
strategies works on; :func:`ranked_entries` turns them into a DataFrame.

Tiny example::

    >>> import pandas as pd
    >>> run = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["a", "b", "c"],
    ...                     "score": [1.0, 2.0, 2.0], "rank": [1, 2, 3]})
    >>> ranked_entries({"r": run}, depth=2)[["docno", "rank"]].to_numpy().tolist()
    [['b', 1], ['c', 2]]
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from workbench.formats.arrays import as_arrow_strings
from workbench.formats.ids import sorted_topics

__all__ = [
    "Depth",
    "Ranked",
    "Runs",
    "TopRows",
    "depth_array",
    "rank_rows",
    "rank_runs",
    "ranked_entries",
    "select_runs",
    "sorted_topics",
    "team_key",
    "top_rows",
    "topic_rng",
]

Runs = Mapping[str, pd.DataFrame]
Depth = int | Mapping[str, int] | None

PROVENANCE_COLUMNS = ["qid", "docno", "tag", "rank", "score"]
_STR = pd.StringDtype("pyarrow", na_value=np.nan)


def topic_rng(seed: int, qid: str) -> np.random.Generator:
    """A generator that depends only on (seed, qid): a topic's draws do not change when topics are added."""
    return np.random.default_rng(np.random.SeedSequence([int(seed) % 2**63, zlib.crc32(str(qid).encode())]))


def _check_run(tag: str, frame: pd.DataFrame) -> None:
    missing = [c for c in ("qid", "docno", "score") if c not in frame.columns]
    if missing:
        raise ValueError(f"run {tag!r}: missing column(s) {', '.join(missing)}")


def _factorize_topics(column: pd.Series) -> tuple[np.ndarray, list[str], np.ndarray]:
    """(codes, names, present): the code of each row's topic, the names the codes index, and which of
    them occur. A categorical column (how stored runs come back from the run store) is read from its
    codes, without hashing a string."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        codes = column.array.codes
        categories = column.array.categories
        starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]]) if len(codes) else np.zeros(0, np.int64)
        seen = codes[starts]
        if not len(seen) or seen.min() >= 0:
            present = np.zeros(len(categories), dtype=bool)
            present[seen] = True
            return codes, [str(q) for q in np.asarray(categories, dtype=object)], present
    codes, uniques = pd.factorize(column, sort=False)
    return codes, [str(q) for q in np.asarray(uniques)], np.ones(len(uniques), dtype=bool)


def _topic_codes(runs: Runs) -> tuple[list[str], list[np.ndarray]]:
    """Per run, the code of each row's topic in one shared, naturally sorted topic list."""
    factorized = [_factorize_topics(frame["qid"]) for frame in runs.values()]
    topics = sorted_topics(q for _, names, present in factorized for q, p in zip(names, present, strict=True) if p)
    position = {q: i for i, q in enumerate(topics)}
    per_run = []
    for codes, names, present in factorized:
        mapping = np.array([position[q] if p else -1 for q, p in zip(names, present, strict=True)], dtype=np.int32)
        per_run.append(mapping[codes] if len(mapping) else codes.astype(np.int32))
    return topics, per_run


def _rank_order(group: np.ndarray, neg_score: np.ndarray) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """Order each group's rows by score descending, ties in input order.

    Returns (order, starts, block_group): ``order`` is the permutation of rows (None for the identity),
    ``starts`` the first sorted position of each group and ``block_group`` its group code. Real runs list
    each topic contiguously and mostly in score order, so the common case costs O(n): only the blocks
    that are out of order are sorted, in place. Interleaved topics fall back to one stable
    ``np.lexsort`` over everything.
    """
    n = len(group)
    change = np.flatnonzero(group[1:] != group[:-1]) + 1
    starts = np.concatenate([[0], change]).astype(np.int64)
    block_group = group[starts]
    if len(np.unique(block_group)) != len(starts):
        order = np.lexsort((neg_score, group))
        sorted_group = group[order]
        starts = np.flatnonzero(np.r_[True, sorted_group[1:] != sorted_group[:-1]])
        return order, starts, sorted_group[starts]
    descending = neg_score[1:] < neg_score[:-1]  # the score goes up: out of order
    descending[change - 1] = False  # a block boundary is not a violation
    if not descending.any():
        return None, starts, block_group
    order = np.arange(n, dtype=np.int64)
    lengths = np.diff(np.concatenate([starts, [n]]))
    bad_blocks = np.unique(np.searchsorted(starts, np.flatnonzero(descending), side="right") - 1)
    rows = np.concatenate([np.arange(starts[b], starts[b] + lengths[b]) for b in bad_blocks])
    block_of = np.repeat(np.arange(len(bad_blocks)), lengths[bad_blocks])
    order[rows] = rows[np.lexsort((neg_score[rows], block_of))]
    return order, starts, block_group


def depth_array(depth: Depth, topics: Sequence[str]) -> np.ndarray:
    """Depth per topic code; ``None`` means unlimited, a mapping must name every topic."""
    if depth is None:
        return np.full(len(topics), np.iinfo(np.int32).max, dtype=np.int64)
    if isinstance(depth, Mapping):
        given = {str(q): int(k) for q, k in depth.items()}
        missing = [q for q in topics if q not in given]
        if missing:
            raise ValueError(f"depth: no depth given for topic(s) {', '.join(missing[:10])}")
        values = np.array([given[q] for q in topics], dtype=np.int64)
    else:
        values = np.full(len(topics), int(depth), dtype=np.int64)
    if (values < 0).any():
        raise ValueError("depth: a depth must be >= 0")
    return values


@dataclass(frozen=True)
class Ranked:
    """What :func:`ranked_entries` returns, as codes: one element per kept row, the rows ordered by run (in
    the order given), topic (natural order), rank. The pooling strategies work on these codes; only the
    rows they keep are turned back into strings.

    Attributes:
        topics, tags: the names the codes ``topic`` and ``run`` index.
        docs: the distinct docnos, sorted, so that ``doc`` codes compare like the docnos themselves.
        docno: the docno of every row (the strings of ``docs[doc]``).
        by_pair: a stable permutation of the rows ordering them by (topic, doc): a document's rows come
            together, in run order.
    """

    topics: list[str]
    tags: list[str]
    topic: np.ndarray
    run: np.ndarray
    doc: np.ndarray
    docs: pa.Array
    docno: pa.Array
    rank: np.ndarray
    score: np.ndarray
    by_pair: np.ndarray

    def __len__(self) -> int:
        return len(self.rank)

    def frame(self, *, score: bool = True) -> pd.DataFrame:
        """The rows as a DataFrame ``qid, docno, tag, rank[, score]`` (strings pyarrow-backed)."""
        data = {
            "qid": pd.Series(pa.array(self.topics, pa.string()).take(self.topic), dtype=_STR),
            "docno": pd.Series(self.docno, dtype=_STR),
            "tag": pd.Series(pa.array(self.tags, pa.string()).take(self.run), dtype=_STR),
            "rank": self.rank,
        }
        if score:
            data["score"] = self.score
        return pd.DataFrame(data)


def _empty_ranked(tags: list[str]) -> Ranked:
    none = np.zeros(0, dtype=np.int64)
    return Ranked([], tags, none, none, none, pa.array([], pa.string()), pa.array([], pa.string()), none,
                  np.zeros(0), none)


def _top_of_run(topic: np.ndarray, score: np.ndarray, depths: np.ndarray):
    """One run: (positions, topic, rank) of its rows ranked within the depth of their topic, ordered by
    topic code then rank."""
    order, starts, block_topic = _rank_order(topic, np.negative(score))
    block_length = np.diff(np.r_[starts, len(topic)])
    take = np.minimum(block_length, depths[block_topic])
    by_topic = np.argsort(block_topic, kind="stable")
    take, starts, block_topic = take[by_topic], starts[by_topic], block_topic[by_topic]
    ranks = np.arange(int(take.sum()), dtype=np.int64) - np.repeat(np.cumsum(take) - take, take) + 1
    positions = np.repeat(starts, take) + ranks - 1
    if order is not None:
        positions = order[positions]
    return positions, np.repeat(block_topic.astype(np.int64), take), ranks


@dataclass(frozen=True)
class TopRows:
    """The rows every run ranks within the depth, as codes, before documents are coded: ``topic``
    (index into ``topics``), ``run`` (into ``tags``), ``rank`` (1-based), ``score`` and ``docno``; ordered
    by run, topic (natural order), rank."""

    topics: list[str]
    tags: list[str]
    topic: np.ndarray
    run: np.ndarray
    rank: np.ndarray
    score: np.ndarray
    docno: pa.Array

    def only(self, topics: Iterable[str]) -> TopRows:
        """These rows on ``topics`` alone: what :func:`top_rows` gives for the runs cut to those topics' rows (a
        topic's rows do not depend on another's), without ranking the runs again (a piece of a pool built by
        topic, :func:`.depth.depth_pools`)."""
        wanted = {str(q) for q in topics}
        kept = [i for i, q in enumerate(self.topics) if q in wanted]
        code = np.full(len(self.topics), -1, dtype=np.int64)
        code[kept] = np.arange(len(kept), dtype=np.int64)
        rows = np.flatnonzero(code[self.topic] >= 0)
        return TopRows([self.topics[i] for i in kept], self.tags, code[self.topic[rows]], self.run[rows],
                       self.rank[rows], self.score[rows], self.docno.take(pa.array(rows, pa.int64())))


def top_rows(runs: Runs, depth: Depth = None) -> TopRows:
    """Each run's rows ranked within ``depth`` of their topic (the rule of :func:`ranked_entries`).

    Each run is ranked on its own (its arrays stay in cache); a run stored in the canonical order
    (topic blocks, score descending) is only checked, not sorted, and only its kept rows are copied.
    """
    tags = list(runs)
    for tag in tags:
        _check_run(tag, runs[tag])
    topics, qcodes = _topic_codes(runs) if tags else ([], [])
    none = np.zeros(0, dtype=np.int64)
    if not topics:
        return TopRows([], tags, none, none, none, np.zeros(0), pa.array([], pa.string()))
    depths = depth_array(depth, topics)
    kept_topic, kept_rank, kept_score, kept_run, docno_chunks = [], [], [], [], []
    for r, tag in enumerate(tags):
        frame = runs[tag]
        score = frame["score"].to_numpy(dtype=np.float64)
        if not len(score):
            continue
        if not np.isfinite(score).all():
            row = int(np.flatnonzero(~np.isfinite(score))[0]) + 1
            raise ValueError(f"run {tag!r}: row {row} has a score that is not a finite number")
        positions, topic, ranks = _top_of_run(qcodes[r], score, depths)
        if not len(positions):
            continue
        chunk = as_arrow_strings(frame["docno"]).take(pa.array(positions))
        chunks = chunk.chunks if isinstance(chunk, pa.ChunkedArray) else [chunk]
        docno_chunks.extend(c if c.type == pa.string() else c.cast(pa.string()) for c in chunks)
        kept_topic.append(topic)
        kept_rank.append(ranks)
        kept_score.append(score[positions])
        kept_run.append(np.full(len(positions), r, dtype=np.int64))
    if not docno_chunks:
        return TopRows(topics, tags, none, none, none, np.zeros(0), pa.array([], pa.string()))
    topic, rank, score, run = (np.concatenate(a) for a in (kept_topic, kept_rank, kept_score, kept_run))
    return TopRows(topics, tags, topic, run, rank, score, pa.concat_arrays(docno_chunks))


def rank_runs(runs: Runs, depth: Depth = None) -> Ranked:
    """:func:`ranked_entries` as codes (see :class:`Ranked`): :func:`top_rows`, documents coded."""
    return rank_rows(top_rows(runs, depth))


def rank_rows(rows: TopRows) -> Ranked:
    """:class:`Ranked` from the rows :func:`top_rows` kept: their documents coded."""
    tags = rows.tags
    if not len(rows.rank):
        return _empty_ranked(tags)
    topics = rows.topics
    qid_of, ranks, scores_kept, run_of, docnos = rows.topic, rows.rank, rows.score, rows.run, rows.docno
    encoded = docnos.dictionary_encode()
    by_name = pc.array_sort_indices(encoded.dictionary).to_numpy()
    code_of = np.empty(len(by_name), dtype=np.int64)
    code_of[by_name] = np.arange(len(by_name), dtype=np.int64)
    doc_of = code_of[encoded.indices.to_numpy(zero_copy_only=False)]
    docs = encoded.dictionary.take(pa.array(by_name))
    pair = qid_of * len(docs) + doc_of
    by_pair = np.argsort(pair, kind="stable")
    # a run that lists a document twice for a topic: keep the first (best) occurrence; its rows come
    # together, in rank order, in the pair order
    sorted_pair, sorted_run = pair[by_pair], run_of[by_pair]
    repeated = by_pair[1:][(sorted_pair[1:] == sorted_pair[:-1]) & (sorted_run[1:] == sorted_run[:-1])]
    if len(repeated):
        keep = np.ones(len(pair), dtype=bool)
        keep[repeated] = False
        renumber = np.cumsum(keep) - 1
        by_pair = renumber[by_pair[keep[by_pair]]]
        run_of, qid_of, doc_of, ranks, scores_kept = (a[keep] for a in (run_of, qid_of, doc_of, ranks, scores_kept))
        docnos = docnos.filter(pa.array(keep))
    return Ranked(topics, tags, qid_of, run_of, doc_of, docs, docnos, ranks, scores_kept, by_pair)


def ranked_entries(runs: Runs, depth: Depth = None) -> pd.DataFrame:
    """Rank every run by the rule above and keep the rows ranked within ``depth``.

    Args:
        runs: tag -> DataFrame with columns qid, docno, score (float) in file order; ``rank`` is ignored.
        depth: an int, a mapping qid -> int (every topic present), or None for every row.

    Returns:
        DataFrame ``qid, docno, tag, rank, score`` (rank 1-based), ordered by tag (in the order of
        ``runs``), topic (natural order), rank. If a run lists a document twice for a topic, the first
        (best) occurrence is kept: the positions of later rows are still counted.
    """
    if not runs:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in
                             zip(PROVENANCE_COLUMNS, ["str", "str", "str", "int64", "float64"], strict=True)})
    return rank_runs(runs, depth).frame()


def select_runs(
    tags: Sequence[str],
    *,
    only: Iterable[str] | None = None,
    teams: Mapping[str, str] | None = None,
    priorities: Mapping[str, int] | None = None,
    runs_per_team: int | None = None,
) -> list[str]:
    """The runs that contribute to a pool, in the order of ``tags``.

    Args:
        tags: every available run tag, in submission order.
        only: restrict to these tags (an unknown tag is an error).
        teams: tag -> team. A run without a team (missing or empty) is a team of its own.
        priorities: tag -> declared pool priority, 1 = pooled first (TREC's convention). Runs without a
            priority come after the prioritised runs of their team, in submission order.
        runs_per_team: keep only the first N runs of each team by priority, as TREC does when it pools
            "the first N runs of each group".

    Example: tags a1, a2, b1 with teams {a1: A, a2: A, b1: B}, priorities {a1: 2, a2: 1},
    runs_per_team=1 -> [a2, b1].
    """
    tags = list(tags)
    chosen = _only(tags, only)
    if runs_per_team is None:
        return chosen
    if runs_per_team < 1:
        raise ValueError("runs_per_team must be >= 1")
    kept = _first_of_each_team(tags, chosen, dict(teams or {}), dict(priorities or {}), runs_per_team)
    return [t for t in chosen if t in kept]


def _only(tags: list[str], only: Iterable[str] | None) -> list[str]:
    if only is None:
        return tags
    wanted = [str(t) for t in only]
    unknown = [t for t in wanted if t not in set(tags)]
    if unknown:
        raise ValueError(f"unknown run tag(s): {', '.join(unknown)}")
    wanted_set = set(wanted)
    return [t for t in tags if t in wanted_set]


def team_key(team: str | None, tag: str) -> tuple[str, str]:
    """Which team a run counts for when runs are pooled per team: its team name, compared without case or
    surrounding spaces ("UNI " and "uni" are one team, as people type them in manifests and forms); a run
    without a team is a team of its own (keyed by its tag, so it never merges with a team of that name)."""
    name = (team or "").strip().casefold()
    return ("team", name) if name else ("run", tag)


def _first_of_each_team(tags: list[str], chosen: list[str], teams: dict[str, str], priorities: dict[str, int],
                        n: int) -> set[str]:
    """The first ``n`` runs of each team by priority (then submission order); a run without a team (none
    given, or empty) is a team of its own."""
    position = {t: i for i, t in enumerate(tags)}

    def sort_key(tag: str) -> tuple[int, float, int]:
        p = priorities.get(tag)
        return (0, float(p), position[tag]) if p is not None else (1, 0.0, position[tag])

    by_team: dict[tuple[str, str], list[str]] = {}
    for tag in chosen:
        by_team.setdefault(team_key(teams.get(tag), tag), []).append(tag)
    return {t for members in by_team.values() for t in sorted(members, key=sort_key)[:n]}

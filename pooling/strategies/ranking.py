"""The ranking rule every strategy shares, and the choice of contributing runs.

Ranking rule (NIST's pools): within each (run, topic), documents are ordered by score descending and
documents with equal scores keep the order in which they appear in the submitted file. The rank column
of a run is never read: it is often inconsistent with the scores in real submissions, and pooling by it
does not reproduce the official pools (checked on TREC-COVID round 2, see
``tests/benchmarks/simulate_pooling.py --check-nist``).

Everything is vectorised over all runs at once: the runs are concatenated (score and an integer topic
code per row, a run code per block), one stable ``np.lexsort`` orders every (run, topic) group, and the
rank is the position inside the group. Document identifiers are only touched for the rows kept, so a
depth-100 pool over 25 M entries never hashes 25 M docno strings.

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

import numpy as np
import pandas as pd
import pyarrow as pa

__all__ = [
    "Depth",
    "Runs",
    "depth_array",
    "ranked_entries",
    "select_runs",
    "sorted_topics",
    "topic_rng",
]

Runs = Mapping[str, pd.DataFrame]
Depth = int | Mapping[str, int] | None

PROVENANCE_COLUMNS = ["qid", "docno", "tag", "rank", "score"]
_STR = pd.StringDtype("pyarrow", na_value=np.nan)


def _as_arrow(column: pd.Series) -> pa.ChunkedArray | pa.Array:
    """A string column as a pyarrow array (no copy when it is already pyarrow-backed)."""
    array = column.array
    if isinstance(column.dtype, pd.StringDtype) and hasattr(array, "__arrow_array__"):
        data = pa.array(array)
        return data if data.type == pa.string() else data.cast(pa.string())
    return pa.array(column.astype(str).to_numpy(dtype=object), type=pa.string())


def sorted_topics(qids: Iterable[str]) -> list[str]:
    """Topic identifiers in natural order: numerically when every qid is an integer, else as strings."""
    qids = list(dict.fromkeys(str(q) for q in qids))
    if all(q.lstrip("-").isdigit() for q in qids):
        return sorted(qids, key=int)
    return sorted(qids)


def topic_rng(seed: int, qid: str) -> np.random.Generator:
    """A generator that depends only on (seed, qid): a topic's draws do not change when topics are added."""
    return np.random.default_rng(np.random.SeedSequence([int(seed) % 2**63, zlib.crc32(str(qid).encode())]))


def _check_run(tag: str, frame: pd.DataFrame) -> None:
    missing = [c for c in ("qid", "docno", "score") if c not in frame.columns]
    if missing:
        raise ValueError(f"run {tag!r}: missing column(s) {', '.join(missing)}")


def _topic_codes(runs: Runs) -> tuple[list[str], list[np.ndarray]]:
    """Per run, the code of each row's topic in one shared, naturally sorted topic list."""
    factorized = []
    for frame in runs.values():
        codes, uniques = pd.factorize(frame["qid"], sort=False)
        factorized.append((codes, [str(q) for q in np.asarray(uniques)]))
    topics = sorted_topics(q for _, uniques in factorized for q in uniques)
    position = {q: i for i, q in enumerate(topics)}
    per_run = []
    for codes, uniques in factorized:
        mapping = np.array([position[q] for q in uniques], dtype=np.int32)
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
    tags = list(runs)
    if not tags:
        return pd.DataFrame({c: pd.Series(dtype=t) for c, t in
                             zip(PROVENANCE_COLUMNS, ["str", "str", "str", "int64", "float64"], strict=True)})
    for tag in tags:
        _check_run(tag, runs[tag])
    topics, qcodes = _topic_codes(runs)
    lengths = np.array([len(runs[t]) for t in tags], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    scores = np.concatenate([runs[t]["score"].to_numpy(dtype=np.float64) for t in tags])
    bad = np.flatnonzero(~np.isfinite(scores))
    if bad.size:
        run_index = int(np.searchsorted(offsets, bad[0], side="right") - 1)
        raise ValueError(f"run {tags[run_index]!r}: row {int(bad[0] - offsets[run_index]) + 1} "
                         "has a score that is not a finite number")
    n_topics = len(topics)
    key_type = np.int32 if len(tags) * max(n_topics, 1) < 2**31 else np.int64
    group = np.concatenate(qcodes).astype(key_type)
    group += np.repeat(np.arange(len(tags), dtype=key_type) * key_type(n_topics), lengths)
    np.negative(scores, out=scores)
    order, starts, block_group = _rank_order(group, scores)
    del scores, group
    # Keep the first min(length, depth) positions of every block, without materialising n ranks.
    block_length = np.diff(np.concatenate([starts, [int(lengths.sum())]]))
    take = np.minimum(block_length, depth_array(depth, topics)[block_group % n_topics])
    first_of_block = np.repeat(np.cumsum(take) - take, take)
    ranks = np.arange(int(take.sum()), dtype=np.int64) - first_of_block + 1
    sorted_positions = np.repeat(starts, take) + ranks - 1
    kept_group = np.repeat(block_group, take)
    final = np.lexsort((ranks, kept_group))  # by run, topic (natural order), rank
    positions = (sorted_positions if order is None else order[sorted_positions])[final]
    ranks = ranks[final]
    kept_group = kept_group[final]
    del order
    run_of = (kept_group // n_topics).astype(np.int64)
    qid_of = (kept_group % n_topics).astype(np.int64)
    bounds = np.searchsorted(run_of, np.arange(len(tags) + 1))
    docno_chunks = []
    scores_kept = np.empty(len(positions), dtype=np.float64)
    for r, tag in enumerate(tags):
        lo, hi = bounds[r], bounds[r + 1]
        if lo == hi:
            continue
        local = positions[lo:hi] - offsets[r]
        docno_chunks.append(_as_arrow(runs[tag]["docno"]).take(pa.array(local)))
        scores_kept[lo:hi] = runs[tag]["score"].to_numpy(dtype=np.float64)[local]
    docnos = pa.chunked_array(docno_chunks, type=pa.string()) if docno_chunks else pa.chunked_array([], pa.string())
    topic_names = np.array(topics, dtype=object)
    tag_names = np.array(tags, dtype=object)
    out = pd.DataFrame({
        "qid": pd.Categorical.from_codes(qid_of, categories=topic_names).astype("str"),
        "docno": pd.Series(docnos, dtype=_STR),
        "tag": pd.Categorical.from_codes(run_of, categories=tag_names).astype("str"),
        "rank": ranks,
        "score": scores_kept,
    })
    encoded = docnos.dictionary_encode().combine_chunks() if len(docnos) else None
    if encoded is not None:
        key = kept_group.astype(np.int64) * len(encoded.dictionary) + encoded.indices.to_numpy(zero_copy_only=False)
        by_key = np.argsort(key, kind="stable")  # equal keys keep rank order: the first is the best rank
        repeated = by_key[1:][key[by_key][1:] == key[by_key][:-1]]
        if len(repeated):
            out = out.drop(index=repeated).reset_index(drop=True)
    return out


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
        teams: tag -> team. A run without a team is a team of its own.
        priorities: tag -> declared pool priority, 1 = pooled first (TREC's convention). Runs without a
            priority come after the prioritised runs of their team, in submission order.
        runs_per_team: keep only the first N runs of each team by priority, as TREC does when it pools
            "the first N runs of each group".

    Example: tags a1, a2, b1 with teams {a1: A, a2: A, b1: B}, priorities {a1: 2, a2: 1},
    runs_per_team=1 -> [a2, b1].
    """
    tags = list(tags)
    chosen = tags
    if only is not None:
        wanted = [str(t) for t in only]
        unknown = [t for t in wanted if t not in set(tags)]
        if unknown:
            raise ValueError(f"unknown run tag(s): {', '.join(unknown)}")
        wanted_set = set(wanted)
        chosen = [t for t in tags if t in wanted_set]
    if runs_per_team is None:
        return chosen
    if runs_per_team < 1:
        raise ValueError("runs_per_team must be >= 1")
    teams = dict(teams or {})
    priorities = dict(priorities or {})
    position = {t: i for i, t in enumerate(tags)}

    def sort_key(tag: str) -> tuple[int, float, int]:
        p = priorities.get(tag)
        return (0, float(p), position[tag]) if p is not None else (1, 0.0, position[tag])

    by_team: dict[str, list[str]] = {}
    for tag in chosen:
        by_team.setdefault(teams.get(tag, tag), []).append(tag)
    kept = {t for members in by_team.values() for t in sorted(members, key=sort_key)[:runs_per_team]}
    return [t for t in chosen if t in kept]

"""Pool statistics: size, unique contributions, run overlap, judging progress, relevant found per depth.

References: NIST's leave-one-out and uniqueness tooling (isoboroff/testcoll-tools,
``uniques/gloo-eval.pl`` and ``uniques/loo-summarize.pl``): a run's *unique* documents are the pooled
documents that no other contributing run retrieved within the pool depth; its unique relevant documents
are what the collection would lose without it. J. Zobel, "How reliable are the results of large-scale
information retrieval experiments?", SIGIR 1998, uses the same counts.

``qrels`` arguments are DataFrames with columns qid, docno and a grade column named ``relevance`` (or
``rel`` / ``grade``); a grade >= ``relevant_from`` counts as relevant.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .ranking import sorted_topics

__all__ = ["judging_progress", "overlap_matrix", "pool_size", "relevant_by_depth", "unique_contributions"]

_GRADE_COLUMNS = ("relevance", "rel", "grade")


def _grades(qrels: pd.DataFrame) -> pd.Series:
    """Grades indexed by (qid, docno); the last line wins for a pair judged twice."""
    column = next((c for c in _GRADE_COLUMNS if c in qrels.columns), None)
    if column is None:
        raise ValueError(f"qrels: no grade column (expected one of {', '.join(_GRADE_COLUMNS)})")
    index = pd.MultiIndex.from_arrays([qrels["qid"].astype(str), qrels["docno"].astype(str)])
    grades = pd.Series(qrels[column].to_numpy(dtype=np.int64), index=index)
    return grades[~grades.index.duplicated(keep="last")]


def _lookup(frame: pd.DataFrame, qrels: pd.DataFrame) -> np.ndarray:
    """Grade of each (qid, docno) row of ``frame``; NaN when unjudged."""
    grades = _grades(qrels)
    index = pd.MultiIndex.from_arrays([frame["qid"].astype(str), frame["docno"].astype(str)])
    position = grades.index.get_indexer(index)
    values = grades.to_numpy(dtype=np.float64)
    return np.where(position >= 0, values[np.maximum(position, 0)] if len(values) else np.nan, np.nan)


def pool_size(entries: pd.DataFrame) -> pd.Series:
    """Number of distinct pooled documents per topic (natural topic order)."""
    pairs = entries[["qid", "docno"]].astype(str).drop_duplicates()
    sizes = pairs.groupby("qid").size()
    return sizes.reindex(sorted_topics(sizes.index)).rename("pool_size")


def _coded(provenance: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, pd.Index, np.ndarray]:
    """The provenance as codes, each (pair, run) once (its first row): ``pair`` numbers the (qid, docno)
    pairs in order of first appearance, ``run`` the tags (``tags``), and ``rows`` are the kept rows of
    ``provenance``. Codes, not the pairs' strings: a real pool's provenance (78 runs at depth 100, 234,000
    rows) as string frames took the web worker some 100 MB."""
    pair, run, tags = _pair_codes(provenance)
    _, rows = np.unique(pair * max(len(tags), 1) + run, return_index=True)
    rows.sort()
    pair, _ = pd.factorize(pair[rows], sort=False)
    return pair, run[rows], tags, rows


def _keyed(column: pd.Series) -> pd.Series:
    """A column to group by: categoricals as they are (their codes), anything else as strings."""
    return column if isinstance(column.dtype, pd.CategoricalDtype) else column.astype(str)


def _pair_codes(provenance: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, pd.Index]:
    """Per row: a number for its (qid, docno) pair, the code of its run, and the runs' tags."""
    qid, _ = pd.factorize(_keyed(provenance["qid"]), sort=False)
    doc, docs = pd.factorize(_keyed(provenance["docno"]), sort=False)
    run, tags = pd.factorize(_keyed(provenance["tag"]), sort=False)
    return qid.astype(np.int64) * max(len(docs), 1) + doc, run, pd.Index([str(t) for t in tags])


def _pair_grades(provenance: pd.DataFrame, pair: np.ndarray, rows: np.ndarray, qrels: pd.DataFrame) -> np.ndarray:
    """The grade of each distinct pair (``pair`` holds codes 0..n-1; ``rows[i]`` is element i's row of
    ``provenance``), looked up once, from the pair's first row; NaN when unjudged."""
    first = np.empty(pair.max(initial=-1) + 1, dtype=np.int64)
    first[pair[::-1]] = rows[::-1]
    return _lookup(provenance.iloc[first], qrels)


def unique_contributions(provenance: pd.DataFrame, qrels: pd.DataFrame | None = None, *,
                         relevant_from: int = 1) -> pd.DataFrame:
    """Per run: pairs it contributed, pairs only it contributed, and (with qrels) their relevant part.

    Columns: tag, contributed, unique, and with qrels relevant, unique_relevant. Runs in order of
    first appearance in ``provenance``.

    Example: r1 retrieved {a, b}, r2 retrieved {b, c} -> unique(r1) = 1 (a), unique(r2) = 1 (c).
    """
    pair, run, tags, rows = _coded(provenance)
    n = len(tags)
    unique = (np.bincount(pair)[pair] == 1).astype(np.int64)
    out = {"tag": [str(t) for t in tags], "contributed": np.bincount(run, minlength=n).astype(np.int64),
           "unique": np.bincount(run, weights=unique, minlength=n).astype(np.int64)}
    if qrels is not None:
        grades = _pair_grades(provenance, pair, rows, qrels)
        relevant = (np.nan_to_num(grades, nan=-np.inf) >= relevant_from)[pair].astype(np.int64)
        out["relevant"] = np.bincount(run, weights=relevant, minlength=n).astype(np.int64)
        out["unique_relevant"] = np.bincount(run, weights=relevant * unique, minlength=n).astype(np.int64)
    return pd.DataFrame(out)


def overlap_matrix(provenance: pd.DataFrame, *, normalise: str | None = None) -> pd.DataFrame:
    """Run-by-run overlap of the pooled pairs each run contributed.

    Cell (i, j) = number of (qid, docno) pairs both runs retrieved within the depth; the diagonal is
    each run's own count. ``normalise="jaccard"`` divides by the size of the union instead.
    """
    row, col, tags, _ = _coded(provenance)
    from scipy import sparse  # not imported by every web worker: only the overlap page uses it

    incidence = sparse.csr_matrix((np.ones(len(row)), (row, col)), shape=(row.max(initial=-1) + 1, len(tags)))
    shared = (incidence.T @ incidence).toarray()
    if normalise == "jaccard":
        own = np.diag(shared)
        union = own[:, None] + own[None, :] - shared
        with np.errstate(divide="ignore", invalid="ignore"):
            shared = np.where(union > 0, shared / union, 0.0)
    elif normalise is not None:
        raise ValueError(f"unknown normalisation {normalise!r} (jaccard or None)")
    names = [str(t) for t in tags]
    return pd.DataFrame(shared, index=pd.Index(names, name="tag"), columns=names)


def judging_progress(entries: pd.DataFrame, qrels: pd.DataFrame, *, relevant_from: int = 1) -> pd.DataFrame:
    """Per topic: pool_size, judged, judged_fraction, relevant (judged pooled documents >= relevant_from)."""
    pairs = entries[["qid", "docno"]].astype(str).drop_duplicates()
    grades = _lookup(pairs, qrels)
    frame = pairs.assign(judged=~np.isnan(grades), relevant=np.nan_to_num(grades, nan=-np.inf) >= relevant_from)
    out = frame.groupby("qid").agg(pool_size=("docno", "size"), judged=("judged", "sum"),
                                   relevant=("relevant", "sum"))
    out = out.reindex(sorted_topics(out.index))
    out.insert(2, "judged_fraction", out["judged"] / out["pool_size"])
    return out.reset_index()


def relevant_by_depth(provenance: pd.DataFrame, qrels: pd.DataFrame, depths: Sequence[int] = (1, 5, 10, 20, 50, 100),
                      *, relevant_from: int = 1) -> pd.DataFrame:
    """For each depth k: size of the depth-k pool, how much of it is judged, and how many are relevant.

    Uses each pair's min_depth over the runs in ``provenance`` (qid, docno, tag, rank), so one call
    answers "what would a depth-k pool have found" for every k up to the provenance depth.
    Columns: depth, pool_size, judged, judged_fraction, relevant, relevant_per_judgment (relevant / pool size).
    """
    pair, _, _ = _pair_codes(provenance)
    pair, pairs = pd.factorize(pair, sort=False)
    ranks = provenance["rank"].to_numpy(dtype=np.int64)
    min_depth = np.full(len(pairs), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(min_depth, pair, ranks)
    grades = _pair_grades(provenance, pair, np.arange(len(pair)), qrels)
    judged = ~np.isnan(grades)
    relevant = np.nan_to_num(grades, nan=-np.inf) >= relevant_from
    rows = []
    for k in depths:
        inside = min_depth <= k
        size = int(inside.sum())
        rows.append({"depth": int(k), "pool_size": size, "judged": int(judged[inside].sum()),
                     "judged_fraction": judged[inside].mean() if size else np.nan,
                     "relevant": int(relevant[inside].sum()),
                     "relevant_per_judgment": relevant[inside].mean() if size else np.nan})
    return pd.DataFrame(rows)

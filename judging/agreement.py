"""Inter-assessor agreement: kappa, Krippendorff's alpha, disagreements, majority qrels, ranking correlation.

Django-free: pure functions over numpy arrays and a long DataFrame of *current* judgments with columns
``assessor, qid, docno, grade`` (one row per assessor and document; ``grade`` an integer). Django code
(selectors) builds that frame; nothing here imports Django.

Undefined statistics are ``nan``, never an exception: kappa when chance agreement is already 1 (both raters
used a single, identical category), alpha when only one grade value occurs or no document has two judgments,
anything on fewer than 2 shared documents.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from workbench.formats.relevance import is_relevant

JUDGMENT_COLUMNS = ("assessor", "qid", "docno", "grade")
LEVELS = ("nominal", "ordinal", "interval")


def _stats():
    """scipy.stats, imported on first use: it costs about a second at the start of every command."""
    from scipy import stats

    return stats


# --------------------------------------------------------------------------------------- two raters
def _paired_labels(a, b) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a).ravel(), np.asarray(b).ravel()
    if x.shape != y.shape:
        raise ValueError(f"two raters need the same number of items, got {x.size} and {y.size}")
    if x.size == 0:
        raise ValueError("no items to compare")
    if pd.isna(x).any() or pd.isna(y).any():
        raise ValueError("ratings contain missing values")
    return x, y


def _confusion(x: np.ndarray, y: np.ndarray, categories: Sequence | None) -> np.ndarray:
    cats = np.unique(np.concatenate([x, y])) if categories is None else np.asarray(categories)
    index = pd.Index(cats)
    if not index.is_unique:
        raise ValueError("categories must be unique")
    ix, iy = index.get_indexer(x), index.get_indexer(y)
    if (ix < 0).any() or (iy < 0).any():
        unknown = sorted(set(x[ix < 0].tolist()) | set(y[iy < 0].tolist()))
        raise ValueError(f"ratings {unknown[:5]} are not among the categories {cats.tolist()}")
    k = len(cats)
    return np.bincount(ix * k + iy, minlength=k * k).reshape(k, k).astype(float)


def _kappa_from(confusion: np.ndarray, weights: np.ndarray) -> float:
    n = confusion.sum()
    expected = np.outer(confusion.sum(axis=1), confusion.sum(axis=0)) / n
    disagreement_expected = (weights * expected).sum()
    if disagreement_expected == 0:
        return float("nan")
    return float(1 - (weights * confusion).sum() / disagreement_expected)


def cohen_kappa(a, b) -> float:
    """Cohen's kappa of two raters on nominal (e.g. binary) labels of the same items.

    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_o`` the observed agreement and ``p_e = sum_c p_a(c) p_b(c)``
    the agreement expected from each rater's own label frequencies (Cohen 1960). 1 = perfect agreement,
    0 = chance level, < 0 = worse than chance. ``nan`` when ``p_e = 1`` (both raters used one and the same
    label for everything: agreement cannot be told from chance). Example: ``cohen_kappa([1,1,0,0],
    [1,0,0,0]) = (0.75 - 0.5) / (1 - 0.5) = 0.5``.
    """
    x, y = _paired_labels(a, b)
    confusion = _confusion(x, y, None)
    return _kappa_from(confusion, 1.0 - np.eye(len(confusion)))


def weighted_kappa(a, b, *, weights: str = "linear", categories: Sequence | None = None) -> float:
    """Weighted kappa (Cohen 1968) for ordered grades: ``1 - sum(w O) / sum(w E)``.

    ``O`` is the observed confusion matrix, ``E`` the one expected by chance (outer product of the
    marginals), and ``w_ij = |i - j| / (k - 1)`` (``"linear"``) or ``((i - j) / (k - 1))**2``
    (``"quadratic"``), where ``i, j`` are *positions* in ``categories`` (default: the sorted grades that
    occur). Pass the full scale, e.g. ``categories=[0, 1, 2, 3]``, so that an unused grade still counts as a
    step. ``nan`` when chance disagreement is 0 (one category only). Same as scikit-learn's
    ``cohen_kappa_score(a, b, weights=..., labels=categories)``.
    """
    if weights not in ("linear", "quadratic"):
        raise ValueError(f"weights must be 'linear' or 'quadratic', got {weights!r}")
    x, y = _paired_labels(a, b)
    confusion = _confusion(x, y, categories)
    k = len(confusion)
    if k < 2:
        return float("nan")
    steps = np.abs(np.subtract.outer(np.arange(k), np.arange(k))) / (k - 1)
    return _kappa_from(confusion, steps if weights == "linear" else steps**2)


# ---------------------------------------------------------------------------- Krippendorff's alpha
def _check_judgments(judgments: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in JUDGMENT_COLUMNS if c not in judgments.columns]
    if missing:
        raise ValueError(f"judgments lack columns {missing}; expected {list(JUDGMENT_COLUMNS)}")
    frame = judgments.loc[:, list(JUDGMENT_COLUMNS)]
    if frame.isna().any().any():
        raise ValueError("judgments contain missing values (every row needs assessor, qid, docno, grade)")
    if not pd.api.types.is_integer_dtype(frame["grade"]):
        raise ValueError(f"grade must be integers, got dtype {frame['grade'].dtype}")
    dup = frame.duplicated(["assessor", "qid", "docno"])
    if dup.any():
        row = frame[dup].iloc[0]
        raise ValueError(f"assessor {row.assessor!r} judged qid {row.qid!r} docno {row.docno!r} more than "
                         "once: pass the current (latest) grade only")
    return frame


def _reliability_matrix(frame_or_matrix) -> np.ndarray:
    """Raters x units matrix of values with NaN for missing (Krippendorff's 'reliability data')."""
    if isinstance(frame_or_matrix, pd.DataFrame) and set(JUDGMENT_COLUMNS) <= set(frame_or_matrix.columns):
        frame = _check_judgments(frame_or_matrix)
        wide = frame.pivot(index="assessor", columns=["qid", "docno"], values="grade")
        return wide.to_numpy(dtype=float)
    return np.asarray(frame_or_matrix, dtype=float)


def krippendorff_alpha(frame_or_matrix, *, level: str = "ordinal") -> float:
    """Krippendorff's alpha = ``1 - D_o / D_e`` for any number of raters, with missing judgments.

    Input: a judgments frame (``assessor, qid, docno, grade``; a unit = a (qid, docno)) or a raters x units
    matrix with NaN where a rater did not judge a unit. Computed from the coincidence matrix
    ``o_ck = sum_u n_uc n_uk' / (m_u - 1)`` over units with ``m_u >= 2`` values (``n_uk'`` excludes the
    pairing of a value with itself), ``n_c = sum_k o_ck``, ``n = sum_c n_c``:

        alpha = 1 - (n - 1) * sum_ck o_ck delta2_ck / sum_ck n_c n_k delta2_ck

    with ``delta2`` nominal ``[c != k]``, interval ``(c - k)**2``, ordinal ``(sum_{g=c..k} n_g -
    (n_c + n_k) / 2)**2`` (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability"). ``nan`` when no
    unit has two values or only one value occurs. Example (that paper's binary data, 2 raters, 10 units):
    ``o_00 = 10, o_01 = o_10 = 4, o_11 = 2`` -> ``alpha = 1 - 19 * 4 / (14 * 6) = 0.095``.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}, got {level!r}")
    matrix = _reliability_matrix(frame_or_matrix)
    if matrix.ndim != 2:
        raise ValueError("reliability data must be a raters x units matrix")
    present = ~np.isnan(matrix)
    values = np.unique(matrix[present])
    if values.size == 0:
        return float("nan")
    # counts[u, v]: how many raters gave value v to unit u; only units with >= 2 values are pairable
    unit_ix = np.broadcast_to(np.arange(matrix.shape[1]), matrix.shape)[present]
    value_ix = np.searchsorted(values, matrix[present])
    counts = np.zeros((matrix.shape[1], values.size))
    np.add.at(counts, (unit_ix, value_ix), 1)
    m = counts.sum(axis=1)
    counts, m = counts[m >= 2], m[m >= 2]
    if counts.size == 0:
        return float("nan")
    scaled = counts / (m - 1)[:, None]
    coincidence = counts.T @ scaled - np.diag(scaled.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = n_c.sum()
    if level == "nominal":
        delta2 = 1.0 - np.eye(values.size)
    elif level == "interval":
        delta2 = np.subtract.outer(values, values) ** 2
    else:
        cum = np.cumsum(n_c)
        positions = np.arange(values.size)
        lo, hi = np.minimum.outer(positions, positions), np.maximum.outer(positions, positions)
        between = cum[hi] - np.where(lo > 0, cum[lo - 1], 0.0)  # sum of n_g for g = lo..hi
        delta2 = (between - (n_c[lo] + n_c[hi]) / 2) ** 2
    expected = (np.outer(n_c, n_c) * delta2).sum()
    if expected == 0:
        return float("nan")
    return float(1 - (n - 1) * (coincidence * delta2).sum() / expected)


# ---------------------------------------------------------------------------- judgments frames
def _shared_pairs(frame: pd.DataFrame) -> pd.DataFrame:
    """Every document judged by two assessors, once per assessor pair (assessor_a < assessor_b)."""
    left = frame.rename(columns={"assessor": "assessor_a", "grade": "grade_a"})
    right = frame.rename(columns={"assessor": "assessor_b", "grade": "grade_b"})
    both = left.merge(right, on=["qid", "docno"])
    return both[both["assessor_a"].astype(str) < both["assessor_b"].astype(str)]


def _pair_stats(a: np.ndarray, b: np.ndarray, relevant_from: int, scale: np.ndarray) -> dict[str, float]:
    n = a.size
    nan = float("nan")
    out = {"n_shared": n, "agreement": float(np.mean(a == b)) if n else nan,
           "binary_agreement": float(np.mean(is_relevant(a, relevant_from) == is_relevant(b, relevant_from))) if n else nan,
           "kappa": nan, "weighted_kappa": nan, "alpha": nan}
    if n >= 2:
        out["kappa"] = cohen_kappa(is_relevant(a, relevant_from), is_relevant(b, relevant_from))
        out["weighted_kappa"] = weighted_kappa(a, b, weights="linear", categories=scale)
        out["alpha"] = krippendorff_alpha(np.vstack([a, b]), level="ordinal")
    return out


def pairwise_agreement(judgments: pd.DataFrame, *, relevant_from: int = 1) -> pd.DataFrame:
    """Agreement of every pair of assessors on the documents both judged (pairs sharing no document are
    left out).

    Columns: ``assessor_a, assessor_b, n_shared, agreement`` (fraction of identical grades),
    ``binary_agreement`` and ``kappa`` (Cohen's, on grades binarised as ``grade >= relevant_from``),
    ``weighted_kappa`` (linear weights over every grade that occurs in ``judgments``) and ``alpha``
    (Krippendorff's, ordinal). The statistics are ``nan`` below 2 shared documents.
    """
    frame = _check_judgments(judgments)
    scale = np.unique(frame["grade"].to_numpy())
    pairs = _shared_pairs(frame)
    rows = [{"assessor_a": a, "assessor_b": b,
             **_pair_stats(g["grade_a"].to_numpy(), g["grade_b"].to_numpy(), relevant_from, scale)}
            for (a, b), g in pairs.groupby(["assessor_a", "assessor_b"], sort=True)]
    columns = ["assessor_a", "assessor_b", "n_shared", "agreement", "binary_agreement", "kappa",
               "weighted_kappa", "alpha"]
    return pd.DataFrame(rows, columns=columns)


def agreement_by_topic(judgments: pd.DataFrame, *, relevant_from: int = 1) -> pd.DataFrame:
    """Agreement per topic over its documents judged by 2 or more assessors.

    Columns: ``qid, n_docs`` (documents with >= 2 assessors), ``n_assessors`` (who judged them),
    ``agreement`` / ``binary_agreement`` (fraction of those documents whose grades / binarised grades are
    unanimous), ``kappa`` (Cohen's on binarised grades; only defined when exactly two assessors share the
    topic's documents, ``nan`` otherwise), ``alpha_binary`` (Krippendorff, nominal, binarised: the
    many-rater kappa) and ``alpha`` (Krippendorff, ordinal, grades). Topics without any multiply-judged
    document are left out; statistics are ``nan`` below 2 such documents.
    """
    frame = _check_judgments(judgments)
    per_doc = frame.groupby(["qid", "docno"])["assessor"].transform("size")
    multi = frame[per_doc >= 2].copy()
    multi["relevant"] = is_relevant(multi["grade"], relevant_from).astype(int)
    rows = []
    for qid, g in multi.groupby("qid", sort=True):
        docs = g.groupby("docno")
        n_docs = docs.ngroups
        assessors = g["assessor"].unique()
        row = {"qid": qid, "n_docs": n_docs, "n_assessors": len(assessors),
               "agreement": float((docs["grade"].nunique() == 1).mean()),
               "binary_agreement": float((docs["relevant"].nunique() == 1).mean()),
               "kappa": float("nan"), "alpha_binary": float("nan"), "alpha": float("nan")}
        if n_docs >= 2:
            wide = g.pivot(index="assessor", columns="docno", values="grade").to_numpy(dtype=float)
            row["alpha"] = krippendorff_alpha(wide, level="ordinal")
            binary = np.where(np.isnan(wide), np.nan, is_relevant(wide, relevant_from))
            row["alpha_binary"] = krippendorff_alpha(binary, level="nominal")
            if len(assessors) == 2:
                row["kappa"] = cohen_kappa(is_relevant(wide[0], relevant_from), is_relevant(wide[1], relevant_from))
        rows.append(row)
    columns = ["qid", "n_docs", "n_assessors", "agreement", "binary_agreement", "kappa", "alpha_binary",
               "alpha"]
    return pd.DataFrame(rows, columns=columns)


def disagreements(judgments: pd.DataFrame) -> pd.DataFrame:
    """Documents whose assessors gave 2 or more distinct grades, for adjudication.

    Columns: ``qid, docno, n_assessors, min_grade, max_grade, grades`` where ``grades`` is a dict
    ``{assessor: grade}`` in assessor order. Sorted by qid, then widest spread first, then docno.
    """
    frame = _check_judgments(judgments)
    keys = ["qid", "docno"]
    summary = frame.groupby(keys, sort=False)["grade"].agg(["nunique", "size", "min", "max"]).reset_index()
    summary = summary[summary["nunique"] >= 2]
    if summary.empty:
        return pd.DataFrame(columns=["qid", "docno", "n_assessors", "min_grade", "max_grade", "grades"])
    rows = frame.merge(summary[keys], on=keys).sort_values([*keys, "assessor"], kind="stable")
    grades = rows.groupby(keys, sort=False).apply(
        lambda g: dict(zip(g["assessor"].tolist(), g["grade"].astype(int).tolist(), strict=True)), include_groups=False
    ).rename("grades").reset_index()
    out = summary.rename(columns={"size": "n_assessors", "min": "min_grade", "max": "max_grade"})
    out = out.merge(grades, on=keys)
    out["spread"] = out["max_grade"] - out["min_grade"]
    out = out.sort_values(["qid", "spread", "docno"], ascending=[True, False, True], kind="stable")
    return out[["qid", "docno", "n_assessors", "min_grade", "max_grade", "grades"]].reset_index(drop=True)


def majority_qrels(judgments: pd.DataFrame, *, tie: str = "lower") -> pd.DataFrame:
    """Qrels from the most frequent grade of each judged document (a single judgment is its own majority).

    Tie rule: when several grades are equally frequent, ``tie="lower"`` (default, conservative: a document
    two assessors split on between 0 and 1 stays non-relevant) takes the lowest of them, ``"higher"`` the
    highest. Returns columns ``qid, docno, rel`` sorted by qid, docno.
    """
    if tie not in ("lower", "higher"):
        raise ValueError(f"tie must be 'lower' or 'higher', got {tie!r}")
    frame = _check_judgments(judgments)
    documents, qids, docnos = _documents(frame)
    if not _has_duplicates(documents):  # one assessor per document (the usual case): nothing to vote on
        out = frame.rename(columns={"grade": "rel"})[["qid", "docno", "rel"]]
        out = out.take(np.argsort(documents, kind="stable")).reset_index(drop=True)
        out["rel"] = out["rel"].astype(int)
        return out
    # count the votes of each (document, grade) in (document, grade) order, then keep each document's most
    # frequent grade, the lowest or highest of equally frequent ones
    documents, document_keys = pd.factorize(documents, sort=True)
    grades, grade_values = pd.factorize(frame["grade"].to_numpy(), sort=True)
    votes, counts = np.unique(documents.astype(np.int64) * len(grade_values) + grades, return_counts=True)
    document, grade = np.divmod(votes, len(grade_values))
    order = np.lexsort((grade if tie == "lower" else -grade, -counts, document))
    best = order[np.r_[True, document[order][1:] != document[order][:-1]]]
    keys = document_keys[document[best]]
    out = pd.DataFrame({"qid": _group_keys(qids.take(keys // len(docnos))),
                        "docno": _group_keys(docnos.take(keys % len(docnos))), "rel": grade_values[grade[best]]})
    out["rel"] = out["rel"].astype(int)
    return out


def _documents(frame: pd.DataFrame) -> tuple[np.ndarray, pd.Index, pd.Index]:
    """One integer per (qid, docno) that sorts as the pair does (as sort_values does: codes of each column's
    sorted distinct values), and those distinct qids and docnos."""
    qids, qid_values = pd.factorize(frame["qid"], sort=True)
    docnos, docno_values = pd.factorize(frame["docno"], sort=True)
    return qids.astype(np.int64) * len(docno_values) + docnos, qid_values, docno_values


def _group_keys(values: pd.Index) -> pd.Index:
    """Values as a groupby hands its keys back: object ones have their dtype inferred (strings give str)."""
    return values.infer_objects() if values.dtype == object else values


def _has_duplicates(values: np.ndarray) -> bool:
    return bool(pd.Series(values).duplicated().any())


# --------------------------------------------------------------------------- ranking correlation
def tau_ap(reference: Mapping[str, float], other: Mapping[str, float]) -> float:
    """AP correlation (Yilmaz, Aslam & Robertson, SIGIR 2008) of ``other``'s ranking against ``reference``.

    Rank the runs by ``other`` (score descending, ties by run name); ``C(i)`` = how many of the ``i - 1``
    runs above rank ``i`` are also above it in ``reference``:
    ``tau_ap = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1``. Unlike Kendall's tau, swaps near the top cost
    more. A pair tied in ``reference`` counts half (its expected value under random tie-breaking).
    Example: reference A>B>C>D, other B>A>C>D -> 1/3; other A>B>D>C -> 7/9 (Kendall's tau: 2/3 for both).
    """
    names = sorted(reference)
    ref = np.array([reference[k] for k in names], dtype=float)
    oth = np.array([other[k] for k in names], dtype=float)
    order = np.lexsort((np.arange(len(names)), -oth))  # by other desc, then name
    r = ref[order]
    above = np.triu(np.ones((len(r), len(r)), dtype=bool), k=1)  # above[j, i]: j ranked above i in other
    correct = (r[:, None] > r[None, :]) + 0.5 * (r[:, None] == r[None, :])
    c = (correct * above).sum(axis=0)[1:]
    return float(2 / (len(r) - 1) * np.sum(c / np.arange(1, len(r))) - 1)


def ranking_correlation(scores_a: Mapping[str, float], scores_b: Mapping[str, float]) -> tuple[float, float]:
    """Agreement of two system rankings, e.g. the runs' MAP under two assessors' qrels.

    Returns ``(tau_b, tau_ap)``: Kendall's tau-b (``scipy.stats.kendalltau``, ties handled) and
    :func:`tau_ap` with ``scores_a`` as the reference ranking (tau_ap is not symmetric). Both mappings
    must score the same runs, at least 2; NaN scores are refused. When either mapping gives every run the
    same score there is no ranking to compare: both are ``nan`` (pages show "not enough data"), where
    scipy would give a NaN tau-b and tau_ap an arbitrary value from the order of the runs' names.
    """
    if set(scores_a) != set(scores_b):
        only_a, only_b = sorted(set(scores_a) - set(scores_b)), sorted(set(scores_b) - set(scores_a))
        raise ValueError(f"the rankings cover different runs: only in a {only_a[:5]}, only in b {only_b[:5]}")
    if len(scores_a) < 2:
        raise ValueError(f"need at least 2 runs to correlate rankings, got {len(scores_a)}")
    names = sorted(scores_a)
    a = np.array([scores_a[k] for k in names], dtype=float)
    b = np.array([scores_b[k] for k in names], dtype=float)
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("run scores contain NaN")
    if (a == a[0]).all() or (b == b[0]).all():
        return float("nan"), float("nan")
    tau_b = float(_stats().kendalltau(a, b, variant="b").statistic)
    return tau_b, tau_ap(scores_a, scores_b)

"""Multiple-comparison corrections of p-values: Holm's step-down, Bonferroni, Benjamini-Hochberg, or none.

Django-free. The significance tests (:mod:`evaluation.engine.significance`) and the leaderboards adjust
their p-values here, so every page names the same corrections.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

CORRECTIONS = ("holm", "bonferroni", "bh", "none")


def check_correction(correction: str) -> None:
    """Refuse a correction that is not one of ``CORRECTIONS``."""
    if correction not in CORRECTIONS:
        raise ValueError(f"unknown correction {correction!r}; choose one of {', '.join(CORRECTIONS)}")


def holm(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Holm–Bonferroni step-down adjusted p-values, in the input order.

    Sort ascending ``p_(1) <= ... <= p_(m)``; ``adj_(i) = max_{j <= i} min(1, (m - j + 1) p_(j))``
    (Holm 1979). Reject at level alpha exactly the hypotheses with ``adj <= alpha``.
    Example: ``holm([0.01, 0.04, 0.03, 0.005]) == [0.03, 0.06, 0.06, 0.02]``.
    """
    p = np.asarray(p_values, dtype=float).ravel()
    if np.isnan(p).any():
        raise ValueError("p-values contain NaN")
    m = p.size
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def bonferroni(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Bonferroni adjusted p-values: ``min(1, m p)``."""
    p = np.asarray(p_values, dtype=float).ravel()
    return np.minimum(1.0, p * p.size)


def benjamini_hochberg(p_values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (false discovery rate, 1995), by scipy's
    ``false_discovery_control``: ``adj_(i) = min_{j >= i} min(1, m p_(j) / j)``.
    Example: ``benjamini_hochberg([0.01, 0.04, 0.03, 0.005]) == [0.02, 0.04, 0.04, 0.02]``."""
    from scipy.stats import false_discovery_control

    p = np.asarray(p_values, dtype=float).ravel()
    return false_discovery_control(p, method="bh") if p.size else p.copy()


def adjust_p_values(p_values: Sequence[float] | np.ndarray, correction: str) -> np.ndarray:
    """Adjusted p-values under ``correction`` (one of ``CORRECTIONS``: holm, bonferroni, bh, none)."""
    check_correction(correction)
    if correction == "holm":
        return holm(p_values)
    if correction == "bonferroni":
        return bonferroni(p_values)
    if correction == "bh":
        return benjamini_hochberg(p_values)
    return np.asarray(p_values, dtype=float)

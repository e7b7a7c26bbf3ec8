"""A replay of hybrid judging with full human qrels as the assessor, Django-free: the router asks for a human
grade in rounds (each round refits the per-topic calibration on the grades read so far,
``judging.machine.hybrid``), and only the grades it asks for are read. The hybrid labels are then compared with
the full human labels (Cohen's kappa, binary at the relevance cut and linearly weighted on the grades), beside
the raw machine labels and random routing that reads the same number of human grades (the rest calibrated the
same way).

Example::

    result = simulate(qids, margin, machine, human, budget=0.2, grades=[0, 1, 2], relevant_from=1, seed=0)
    result["hybrid"]["kappa_binary"], result["random"]["kappa_binary"]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from judging.agreement import cohen_kappa, weighted_kappa
from judging.machine.hybrid import fit_topics, hybrid_grades, route_next

__all__ = ["ROUNDS", "kappas", "simulate"]

#: how many rounds the human budget is spent in (the calibration is refitted before each)
ROUNDS = 10


def _kappa(compute) -> float | None:
    try:
        value = float(compute())
    except (ValueError, ZeroDivisionError):
        return None
    return None if math.isnan(value) else value


def kappas(human: np.ndarray, labels: np.ndarray, *, grades: Sequence[int], relevant_from: int) -> dict:
    """Binary and graded (linear weights) Cohen's kappa of ``labels`` against ``human``, and the share of
    relevant of each."""
    h, m = (human >= relevant_from).astype(int), (labels >= relevant_from).astype(int)
    return {"kappa_binary": _kappa(lambda: cohen_kappa(h, m)),
            "kappa_graded": _kappa(lambda: weighted_kappa(human, labels, weights="linear",
                                                          categories=sorted(set(grades) | set(human.tolist())
                                                                            | set(labels.tolist())))),
            "relevant_share": float(m.mean()) if len(m) else None}


def _filled(qids, margin, machine, human, asked, grades, relevant_from) -> np.ndarray:
    """The human grade where asked, else the machine label calibrated on the asked pairs."""
    calibration = fit_topics(qids=qids[asked], margin=margin[asked], relevant=human[asked] >= relevant_from)
    labels = hybrid_grades(machine, calibration.probability(qids, margin), grades=grades, relevant_from=relevant_from)
    labels[asked] = human[asked]
    return labels


def _routed(qids, margin, human, total, *, audit_share, rng, relevant_from) -> np.ndarray:
    asked = np.zeros(len(qids), dtype=bool)
    batch = max(1, math.ceil(total / ROUNDS))
    while asked.sum() < total:
        calibration = fit_topics(qids=qids[asked], margin=margin[asked], relevant=human[asked] >= relevant_from)
        step = route_next(calibration, qids, margin, ~asked, min(batch, total - int(asked.sum())),
                          audit_share=audit_share, rng=rng)
        asked[step] = True  # only now are these humans' grades read
    return asked


def simulate(qids: Sequence, margin: Sequence[float], machine: Sequence[int], human: Sequence[int], *, budget: float,
             grades: Sequence[int], relevant_from: int, seed: int = 0, audit_share: float = 0.1) -> dict:
    """The routed hybrid labels and how they, the raw machine labels and random routing with the same budget
    agree with ``human`` (see the module's docstring). ``budget``: the share of pairs a human grades."""
    if not 0 <= budget <= 1:
        raise ValueError(f"budget {budget} must be a share of the pairs, between 0 and 1")
    qids = np.asarray([str(q) for q in qids], dtype=object)
    margin, machine, human = (np.asarray(margin, dtype=float), np.asarray(machine, dtype=int),
                              np.asarray(human, dtype=int))
    total = int(round(budget * len(qids)))
    rng = np.random.default_rng(seed)
    asked = _routed(qids, margin, human, total, audit_share=audit_share, rng=rng, relevant_from=relevant_from)
    hybrid = _filled(qids, margin, machine, human, asked, grades, relevant_from)
    chance = np.zeros(len(qids), dtype=bool)
    chance[rng.choice(len(qids), size=total, replace=False)] = True
    by_chance = _filled(qids, margin, machine, human, chance, grades, relevant_from)
    agree = {"grades": grades, "relevant_from": relevant_from}
    return {"pairs": len(qids), "asked": int(asked.sum()), "budget": budget, "audit_share": audit_share,
            "seed": seed, "labels": hybrid, "asked_mask": asked,
            "hybrid": kappas(human, hybrid, **agree), "machine": kappas(human, machine, **agree),
            "random": kappas(human, by_chance, **agree)}

"""What the machine-labelled part of the ``hybrid`` qrels could change: each run's measure (MAP by default)
under the hybrid qrels, with an interval over qrels drawn from the calibrated probabilities. Every draw keeps
the human grades and makes each machine-labelled pair relevant with its calibrated probability (a pair that
turns relevant gets the collection's first relevant grade where its label was not relevant; one that turns not
relevant the lowest grade); the interval is the central ``level`` of the runs' scores over ``samples`` draws."""

from __future__ import annotations

import numpy as np

from evaluation import scoring
from evaluation.scoring import EvaluationError
from judging.qrels import hybrid

__all__ = ["hybrid_intervals"]


def _draw(frame, machine: np.ndarray, rng: np.random.Generator, *, relevant_from: int, lowest: int):
    rel = frame["rel"].to_numpy(np.int64).copy()
    relevant = rng.random(int(machine.sum())) < frame["probability"].to_numpy(float)[machine]
    labels = rel[machine]
    was = labels >= relevant_from
    rel[machine] = np.where(relevant & ~was, relevant_from, np.where(~relevant & was, lowest, labels))
    return frame[["qid", "docno"]].assign(rel=rel)


def _values(qrels, runs, measure: str, relevant_from: int) -> dict[str, float]:
    scores = scoring.evaluate_frames(qrels, runs, [measure], relevance_level=relevant_from)
    return {tag: float(next(iter(s.aggregate.values()))) for tag, s in scores.items()}


def hybrid_intervals(collection, *, measure: str = "map", samples: int = 50, seed: int = 0,
                     level: float = 0.9) -> dict:
    """Per run: ``value`` under the hybrid qrels, ``low`` and ``high`` of the interval (see the module's
    docstring); runs by value, best first."""
    frame, calibration = hybrid(collection)
    if calibration is None:
        raise EvaluationError(f"collection {collection.slug!r} has no machine labels: its hybrid qrels are the "
                              "human ones, with nothing to draw")
    runs = scoring.frames(collection)
    if not runs:
        raise EvaluationError(f"collection {collection.slug!r} has no runs")
    relevant_from, lowest = collection.relevant_from, min(collection.grades)
    machine = frame["probability"].notna().to_numpy()
    point = _values(frame[["qid", "docno", "rel"]], runs, measure, relevant_from)
    rng = np.random.default_rng(seed)
    draws = [_values(_draw(frame, machine, rng, relevant_from=relevant_from, lowest=lowest), runs, measure,
                     relevant_from) for _ in range(samples)]
    tail = (1 - level) / 2
    rows = []
    for tag in sorted(point, key=lambda t: (-point[t], t)):
        values = np.array([d[tag] for d in draws])
        rows.append({"run": tag, "value": point[tag], "low": float(np.quantile(values, tail)),
                     "high": float(np.quantile(values, 1 - tail))})
    return {"collection": collection.slug, "measure": measure, "samples": samples, "seed": seed, "level": level,
            "machine_pairs": int(machine.sum()), "human_pairs": int((~machine).sum()), "runs": rows}

"""Hybrid judging against a collection's database: the pairs of one machine judge with the margins the
per-topic calibration reads (``judging.machine.hybrid``), for the replay of ``manage.py simulate_hybrid``
against a file of human qrels (``judging.machine.hybrid_simulation``)."""

from __future__ import annotations

import pandas as pd

from judging.machine.hybrid import margin_of
from judging.models import MachineJudge, MachineVerdict
from workbench.models import Collection

__all__ = ["HybridRefused", "judge_pairs", "simulation_pairs"]


class HybridRefused(ValueError):
    """A replay that cannot run, in one line."""


def judge_pairs(collection: Collection, name: str) -> pd.DataFrame:
    """The machine judge's labelled pairs: qid, docno, machine (its grade), margin."""
    judge = MachineJudge.objects.filter(collection=collection, name=name).first()
    if judge is None:
        names = sorted(MachineJudge.objects.filter(collection=collection).values_list("name", flat=True))
        raise HybridRefused(f"no machine judge {name!r} in collection {collection.slug!r} "
                            f"({'its judges: ' + ', '.join(names) if names else 'it has none'})")
    rows = list(MachineVerdict.objects.filter(judge=judge, ok=True).values_list(
        "topic__qid", "docno", "parsed_grade", "probability"))
    if not rows:
        raise HybridRefused(f"machine judge {name!r} has labelled no pair of collection {collection.slug!r}")
    frame = pd.DataFrame.from_records(rows, columns=["qid", "docno", "machine", "probability"])
    frame["margin"] = margin_of(frame["machine"].astype(float), frame["probability"].astype(float),
                                relevant_from=collection.relevant_from)
    return frame.drop(columns="probability").astype({"qid": str, "docno": str, "machine": "int64"})


def simulation_pairs(collection: Collection, name: str, human: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """The pairs both the judge and the human qrels (qid, docno, rel) graded, with the human grade as
    ``human``, and how many pairs each side had alone (left out: the replay can neither ask nor check them)."""
    machine = judge_pairs(collection, name)
    human = human.astype({"qid": str, "docno": str}).drop_duplicates(["qid", "docno"], keep="last")
    both = machine.merge(human.rename(columns={"rel": "human"}), on=["qid", "docno"], how="inner")
    if both.empty:
        raise HybridRefused(f"machine judge {name!r} and the human qrels share no (topic, document) pair")
    unknown = sorted(set(both["human"]) - set(collection.grades))
    if unknown:
        raise HybridRefused(f"the human qrels use grade {unknown[0]}, not one of the collection's grades "
                            f"({', '.join(map(str, collection.grades))})")
    return both.reset_index(drop=True), {"machine_only": len(machine) - len(both), "human_only": len(human) - len(both)}

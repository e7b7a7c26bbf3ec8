"""Which grade a document gets from its judgment records: the qrels policies. Django-free.

Judgments are an append-only log: the current grade of an assessor for a document is their latest
record, unless that record is a "cannot judge", which hides the grade it revises. Under both policies
a document judged by several assessors gets their majority grade (a tie goes to the lower grade: a
document counts as relevant only if most assessors say so); under ``adjudicated`` (the default) an
organizer's latest adjudication, where there is one, replaces the majority.

These functions work on integer codes (a document key per (topic, document), an assessor code per
record, records in id order), so that 100,000s of judgments resolve without a Python loop.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judging.agreement import majority_qrels
from workbench.formats.vocabulary import Choice, Vocabulary

__all__ = ["ADJUDICATED", "DEFAULT_POLICY", "HUMAN", "HUMAN_OVER_MACHINE", "HYBRID", "MACHINE", "MACHINE_POLICIES", "MAJORITY",
           "POLICIES", "QRELS_POLICIES", "check_policy", "current_rows", "policy_grades", "uses_machine"]

ADJUDICATED, MAJORITY = "adjudicated", "majority"
# who counts: the humans only (every policy above, and ``human``, which is ``adjudicated`` by name), the
# machine assessors only, or the human grade where there is one and else the machines'
HUMAN, MACHINE, HUMAN_OVER_MACHINE = "human", "machine", "human-over-machine"
# the human grade where there is one, else the machine label calibrated per topic on the human grades
# (``judging.machine.hybrid``)
HYBRID = "hybrid"
MACHINE_POLICIES = (MACHINE, HUMAN_OVER_MACHINE, HYBRID)

#: every qrels policy, the default first: menus, download links, commands and parsers read this
POLICIES = Vocabulary("qrels policy", [
    Choice(ADJUDICATED, "adjudicated, else majority",
           "Graded, adjudicated where an organizer decided, else the majority of the assessors"),
    Choice(MAJORITY, "majority", "Graded, the majority of the assessors"),
    Choice(HUMAN, "human", "The human assessors only: adjudicated, else majority (machine judgments left out)"),
    Choice(MACHINE, "machine", "The machine assessors only (their majority where several judged)"),
    Choice(HUMAN_OVER_MACHINE, "human over machine",
           "The human grade where there is one (adjudicated, else majority), else the machine assessors'"),
    Choice(HYBRID, "hybrid",
           "The human grade where there is one, else the machine label calibrated per topic on the human grades"),
])
DEFAULT_POLICY = POLICIES.default
QRELS_POLICIES = POLICIES.names


def check_policy(policy: str) -> str:
    """``policy`` if it is one of :data:`POLICIES`, else ``UnknownChoice`` (a ``ValueError``) naming them."""
    return POLICIES.parse(policy)


def uses_machine(policy: str) -> bool:
    """Whether the policy reads machine assessors' judgments (every other policy leaves them out)."""
    return policy in MACHINE_POLICIES


def current_rows(records: dict, doc_keys: np.ndarray, assessors: np.ndarray | None) -> np.ndarray:
    """Positions of the current judgments: the latest record (records are in id order) of each assessor
    (None: a single one) for each document key, unless it is a "cannot judge", which hides the grade it
    revises. A revision always has a larger id than the judgment it revises."""
    key = doc_keys
    if assessors is not None:  # one integer per (assessor, document), renumbered first so that it cannot overflow
        documents, distinct = pd.factorize(key)
        key = assessors * len(distinct) + documents
    rows = np.flatnonzero(~pd.Series(key).duplicated(keep="last").to_numpy())
    return rows[~records["cannot_judge"][rows]]


def policy_grades(records: dict, doc_keys: np.ndarray, assessors: np.ndarray, several: bool, policy: str) -> tuple[np.ndarray, np.ndarray]:
    """(document key, rel) of every document graded by its assessors' majority, or by its latest
    adjudication where there is one under the adjudicated policy. ``records`` has boolean arrays
    ``cannot_judge`` and ``adjudication`` and the int64 ``grade``; ``assessors`` codes each record's
    assessor (``several``: more than one assessor)."""
    rows = current_rows(records, doc_keys, assessors if several else None)
    adjudicated = records["adjudication"][rows]
    assessed = rows[~adjudicated]
    keys, rel = doc_keys[assessed], records["grade"][assessed]
    if several:  # documents judged by two or more assessors are voted on
        keys, rel = _majority(assessors[assessed], keys, rel)
    if policy in (ADJUDICATED, HUMAN, HUMAN_OVER_MACHINE, HYBRID) and adjudicated.any():
        # the latest adjudication of each document (rows are in id order) wins over the assessors' majority
        final = rows[adjudicated]
        final = final[~pd.Series(doc_keys[final]).duplicated(keep="last").to_numpy()]
        kept = ~np.isin(keys, doc_keys[final])
        keys = np.concatenate([doc_keys[final], keys[kept]])
        rel = np.concatenate([records["grade"][final], rel[kept]])
    return keys, rel


def _majority(assessors: np.ndarray, keys: np.ndarray, grades: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(document key, rel) by majority_qrels' rule; a document judged once keeps its grade."""
    shared = pd.Series(keys).duplicated(keep=False).to_numpy()
    if not shared.any():
        return keys, grades
    votes = majority_qrels(pd.DataFrame({"assessor": assessors[shared], "qid": 0, "docno": keys[shared],
                                         "grade": grades[shared]}), tie="lower")
    single = ~shared
    return (np.concatenate([keys[single], votes["docno"].to_numpy(np.int64)]),
            np.concatenate([grades[single], votes["rel"].to_numpy(np.int64)]))

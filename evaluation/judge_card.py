"""The judge card a release built under a policy that reads machine labels carries (``judge_card.json``): how
its machine labels were made and how far they were checked against the humans.

Per machine judge that graded here: its kind, the models and versions its verdicts name (and, for labels
imported from files, each file's sha256), the prompt hashes, the size of the human calibration set its jobs
fitted on, and Cohen's kappa against the human qrels (``human`` policy) on the pairs both graded, binary and
graded, with each side's share of relevant (kappa depends on it). Then, per topic, how many of the release's
qrels lines are human grades and how many machine ones. Under ``hybrid``, also its per-topic calibration, the
calibration set, the human budget spent on machine-labelled pairs and the routing's audit share."""

from __future__ import annotations

import pandas as pd

from evaluation.engine.qrels_compare import label_agreement
from judging.machine_services import MACHINE_JOB
from judging.models import MachineJudge, MachineVerdict
from judging.policies import HUMAN, HYBRID, MACHINE, uses_machine
from judging.qrels import hybrid, qrels
from judging.queueing import AUDIT_SHARE
from workbench.formats.ids import sorted_topics
from workbench.models import Collection, Job

__all__ = ["JUDGE_CARD", "judge_card", "wants_judge_card"]

JUDGE_CARD = "judge_card.json"


def wants_judge_card(policy: str) -> bool:
    """Whether a release under ``policy`` carries a judge card: the policy reads machine labels."""
    return uses_machine(policy)


def _distinct(judge: MachineJudge, field: str) -> list[str]:
    values = MachineVerdict.objects.filter(judge=judge, ok=True).exclude(**{field: ""}).order_by(field)
    return list(values.values_list(field, flat=True).distinct())


def _calibration_size(judge: MachineJudge) -> int:
    """The human grades the judge's latest calibrated job was fitted on (0: none)."""
    for params in (Job.objects.filter(kind=MACHINE_JOB, collection=judge.collection, params__judge_id=judge.pk)
                   .order_by("-id").values_list("params", flat=True)):
        calibration = (params or {}).get("calibration")
        if calibration:
            return int(calibration.get("trained_on", 0))
    return 0


def _judge_entry(judge: MachineJudge, human: pd.DataFrame) -> dict:
    collection = judge.collection
    own = qrels(collection, assessor=judge.user.username)
    agreement = (label_agreement(own, human, relevant_from=collection.relevant_from, grades=collection.grades)
                 if len(own) and len(human) else {"shared": 0, "kappa_binary": None, "kappa_graded": None,
                                                   "relevant_a": None, "relevant_b": None})
    imports = (judge.config or {}).get("imports", [])
    return {
        "judge": judge.name, "kind": judge.kind, "labels": len(own),
        "models": _distinct(judge, "model"), "model_versions": _distinct(judge, "model_version"),
        "prompt_hashes": _distinct(judge, "prompt_hash"),
        "imported_files": [{k: i.get(k) for k in ("file", "sha256", "model", "format", "labels", "imported_at")}
                           for i in imports],
        "calibration_set": _calibration_size(judge),
        "agreement_with_humans": {
            "pairs": agreement["shared"], "kappa_binary": agreement["kappa_binary"],
            "kappa_graded": agreement["kappa_graded"], "relevant_share_machine": agreement["relevant_a"],
            "relevant_share_human": agreement["relevant_b"]},
    }


def _shares(final: pd.DataFrame, human: pd.DataFrame) -> list[dict]:
    """Per topic of the released qrels, its lines graded by humans and by machines."""
    if final.empty:
        return []
    by_human = pd.MultiIndex.from_frame(final[["qid", "docno"]].astype(str)).isin(
        pd.MultiIndex.from_frame(human[["qid", "docno"]].astype(str))) if len(human) else [False] * len(final)
    counts = final.assign(human=by_human, qid=final["qid"].astype(str)).groupby("qid")["human"].agg(["sum", "size"])
    out = []
    for qid in sorted_topics(counts.index):
        h, n = int(counts.loc[qid, "sum"]), int(counts.loc[qid, "size"])
        out.append({"qid": qid, "human": h, "machine": n - h, "machine_share": (n - h) / n if n else 0.0})
    return out


def _hybrid(collection: Collection, human: pd.DataFrame, final: pd.DataFrame) -> dict:
    """What the ``hybrid`` policy rests on: its calibration set (human grades of machine-labelled pairs), the
    human budget spent (the share of machine-labelled pairs a human graded) and the routing's audit share."""
    machine = qrels(collection, policy=MACHINE)
    labelled = len(machine)
    checked = len(machine.merge(human[["qid", "docno"]].astype(str), on=["qid", "docno"])) if labelled else 0
    calibration = hybrid(collection)[1]
    return {"calibration": calibration.as_dict() if calibration is not None else None,
            "calibration_set": checked, "machine_labelled": labelled,
            "budget_spent": checked / labelled if labelled else 0.0, "audit_share": AUDIT_SHARE,
            "calibrated_labels": len(final) - len(human)}


def judge_card(collection: Collection, *, policy: str) -> dict:
    """The judge card of a release under ``policy`` (see the module docstring)."""
    human = qrels(collection, policy=HUMAN)
    final = qrels(collection, policy=policy)
    judges = [_judge_entry(j, human) for j in
              MachineJudge.objects.filter(collection=collection).select_related("user", "collection").order_by("name")]
    per_topic = _shares(final, human)
    machine = sum(t["machine"] for t in per_topic)
    card = {"collection": collection.slug, "policy": policy, "relevant_from": collection.relevant_from,
            "judges": [j for j in judges if j["labels"]],
            "qrels_lines": len(final), "machine_lines": machine,
            "machine_share": machine / len(final) if len(final) else 0.0, "per_topic": per_topic}
    if policy == HYBRID:
        card["hybrid"] = _hybrid(collection, human, final)
    return card

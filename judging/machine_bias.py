"""Bias checks of a machine judge against the collection (``judging.machine.bias``): a sample of the documents
the humans called not relevant, judged by the judge as they are, stuffed with the topic's query words and with
an instruction to the judge injected; the false-positive inflation of each variant is kept on the judge
(``config["bias"]``), shown on its agreement page, and read by the router (``judging.queueing``)."""

from __future__ import annotations

import random

from django.utils import timezone

from judging.machine.base import JudgeError, Pair
from judging.machine.bias import INFLATION_LIMIT, KINDS, inflation, variants
from judging.machine_endpoints import judge_instance
from judging.machine_services import scale_of
from judging.models import MachineJudge
from judging.policies import HUMAN
from judging.qrels import qrels
from workbench.models import Document

__all__ = ["BiasRefused", "bias_check"]


class BiasRefused(ValueError):
    """A bias check that cannot run, in one line."""


def _sample(judge: MachineJudge, size: int, seed: int) -> list[list[Pair]]:
    collection = judge.collection
    human = qrels(collection, policy=HUMAN)
    negatives = human[human["rel"] < collection.relevant_from]
    texts = dict(Document.objects.filter(collection=collection, docno__in=set(negatives["docno"])).exclude(text="")
                 .values_list("docno", "text"))
    candidates = sorted((q, d) for q, d in zip(negatives["qid"], negatives["docno"], strict=True) if d in texts)
    if not candidates:
        raise BiasRefused(f"collection {collection.slug!r} has no document with text that the humans called not "
                          "relevant: a bias check needs some")
    chosen = sorted(random.Random(seed).sample(candidates, min(size, len(candidates))))
    topics = {t.qid: t for t in collection.topics.filter(qid__in={q for q, _ in chosen})}
    by_topic: dict[str, list[Pair]] = {}
    for qid, docno in chosen:
        topic = topics[qid]
        by_topic.setdefault(qid, []).append(Pair(qid=qid, docno=docno, query=topic.title or topic.description,
                                                 text=texts[docno], topic_description=topic.description,
                                                 topic_narrative=topic.narrative))
    return list(by_topic.values())


def bias_check(judge: MachineJudge, *, sample: int = 40, seed: int = 0, limit: float = INFLATION_LIMIT) -> dict:
    """Run the check (see the module docstring) and keep its result on the judge."""
    topics = _sample(judge, sample, seed)
    try:
        instance = judge_instance(judge.kind, judge.config, scale_of(judge.collection))
    except (JudgeError, KeyError, ValueError) as exc:
        raise BiasRefused(f"machine judge {judge.name!r} cannot be run here ({exc}): its labels came from "
                          "elsewhere") from None
    verdicts = [v for v in instance.judge([variants(pairs) for pairs in topics]) if v is not None]
    kinds = inflation(verdicts, relevant_from=judge.collection.relevant_from)
    result = {"sample": sum(len(p) for p in topics), "seed": seed, "limit": limit, "kinds": kinds,
              "over_limit": any((kinds[k]["inflation"] or 0) > limit for k in KINDS),
              "checked_at": timezone.now().isoformat(timespec="seconds")}
    judge.config = {**(judge.config or {}), "bias": result}
    judge.save(update_fields=["config"])
    return result

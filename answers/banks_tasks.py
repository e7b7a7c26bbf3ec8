"""Drafting a topic's nuggets with a machine, in a background job: the topic's judged relevant segments sent to a
chat endpoint the deployment declares (``JUDGE_ENDPOINTS``: its base URL and key from the settings, never from
what a user typed), the drafted nuggets added after the bank's current ones as a new bank version with the
machine's provenance. A draft that fails stores nothing and says why in one line."""

from __future__ import annotations

import os

from django.conf import settings
from django_tasks import task

from answers.banks import BankRefused, Draft, bank_save, current, relevant_segments
from answers.machine import DRAFTERS
from answers.machine.base import MachineError, Segment, TopicSegments
from answers.models import Source
from judging.machine.base import JudgeError
from workbench.jobs import lifecycle as jobs
from workbench.jobs.kinds import JobKind
from workbench.models import Topic

__all__ = ["JOB_KINDS", "draft_nuggets", "endpoint_config"]

KIND = "nugget draft"


def endpoint_config(name: str, model: str) -> tuple[dict, str]:
    """The drafter's configuration for a declared endpoint and one of its models, and the key (from the variable
    the endpoint names); MachineError naming the endpoints otherwise."""
    declared = (getattr(settings, "JUDGE_ENDPOINTS", None) or {}).get(name)
    if declared is None:
        names = ", ".join(getattr(settings, "JUDGE_ENDPOINTS", None) or {}) or "none"
        raise MachineError(f"endpoint {name!r} is not one this deployment declares (JUDGE_ENDPOINTS: {names})")
    if model not in declared["models"]:
        raise MachineError(f"endpoint {name!r} serves {', '.join(declared['models'])}, not {model!r}")
    key = os.environ.get(declared["key_env"], "") if declared.get("key_env") else ""
    return {"base_url": declared["base_url"], "model": model, "deadline": settings.JUDGE_REQUEST_DEADLINE,
            "max_reply_bytes": settings.JUDGE_REPLY_MAX_BYTES}, key


@task()
def draft_nuggets(job_id: int) -> None:
    with jobs.running(job_id) as progress:
        params, job = progress.job.params, progress.job
        topic = Topic.objects.get(collection=job.collection, qid=params["qid"])
        config, key = endpoint_config(params["endpoint"], params["model"])
        try:
            drafter = DRAFTERS.get("openai").judge_class({**config, **params.get("options", {})}, key=key)
        except JudgeError as exc:
            raise MachineError(str(exc)) from None
        progress.step(f"topic {topic.qid}: reading its judged relevant segments")
        segments = tuple(Segment(d, t) for d, t in relevant_segments(topic) if t.strip())
        bank = current(topic)
        progress.step(f"topic {topic.qid}: asking {params['endpoint']} ({params['model']}) for nuggets "
                      f"from {len(segments)} segments")
        draft = drafter.draft(TopicSegments(topic.qid, bank.query if bank else topic.title, segments,
                                            topic.description))
        if not draft.ok:
            raise MachineError(f"the drafter failed: {draft.error}")
        made = drafter.provenance()
        provenance = {"model": made.model, "endpoint_host": made.endpoint_host, "prompt_hash": draft.prompt_hash,
                      "segments": [s.docno for s in segments], "job": job.pk}
        kept = [Draft(n.text, n.importance, n.pk) for n in (bank.nuggets.order_by("order") if bank else [])]
        drafted = [Draft(n.text, n.importance, None, Source.MACHINE, None, provenance) for n in draft.nuggets]
        try:
            saved = bank_save(topic=topic, user=job.started_by, drafts=kept + drafted,
                              based_on=bank.version if bank else 0, source=Source.MACHINE,
                              note=f"{len(drafted)} drafted by {params['model']} at {params['endpoint']}")
        except BankRefused as exc:
            raise MachineError(str(exc)) from None
        progress.finish(lines=[f"topic {topic.qid}: {len(drafted)} nuggets drafted"
                               + (f", saved as version {saved.version}" if saved else ", none new")],
                        version=saved.version if saved else None)


JOB_KINDS = (
    JobKind(KIND, "Nugget draft", draft_nuggets, params=("qid", "endpoint", "model", "options"),
            help="Drafts a topic's nuggets from its judged relevant segments with a declared chat endpoint; a new "
                 "bank version."),
)

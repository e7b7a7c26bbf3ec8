"""Machine judges' endpoints: push labels for a machine assessor (JSON lines, ``judging.machine_labels``) and read
the pairs of a pool it has still to judge. The collection's organizers may, and the machine assessor's own
account (a token made for it with ``manage.py create_token``) for itself."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404
from ninja import Router, Schema

from judging.machine_labels import MAX_LINES, LabelsRefused, labels_push, pairs_to_judge
from judging.models import MachineJudge
from pooling.selectors import pool_named
from workbench.api import ApiRefused, register, replies
from workbench.models import Collection
from workbench.selectors import may_organize

router = Router()


class PushOut(Schema):
    judge: str
    lines: int
    recorded: int
    already: int


class PairOut(Schema):
    qid: str
    docno: str
    query: str
    description: str
    narrative: str
    title: str
    text: str


class PendingOut(Schema):
    judge: str
    pool: str
    left: int
    pairs: list[PairOut]


def _judge(user, slug: str, name: str) -> MachineJudge:
    collection = Collection.objects.filter(slug=slug).first()
    if collection is None:
        raise Http404(f"no collection {slug!r}")
    judge = MachineJudge.objects.select_related("collection", "user").filter(collection=collection, name=name).first()
    if judge is None:
        if not may_organize(user, collection):
            raise PermissionDenied(f"you are not an organizer of collection {slug!r}")
        raise Http404(f"collection {slug!r} has no machine judge {name!r} (add one on its machine judges page)")
    if not (may_organize(user, collection) or judge.user_id == user.pk):
        raise PermissionDenied(f"only the organizers of collection {slug!r} and the machine judge itself may do this")
    return judge


_LABELS_BODY = {"requestBody": {"required": True, "description": f"JSON lines, at most {MAX_LINES:,}",
                                "content": {"text/plain": {"schema": {"type": "string"}}}}}


@router.post("/collections/{slug}/machine-judges/{name}/labels", response=replies(200, PushOut),
             summary="Push a machine judge's labels (JSON lines): recorded as its judgments with their provenance",
             openapi_extra=_LABELS_BODY)
def labels(request, slug: str, name: str):
    """One JSON object per line: ``qid``, ``docno``, ``grade`` (one of the collection's grades) or ``probability``
    (0 to 1; at least 0.5 gives the first relevant grade), optional ``score``, and ``provenance``: ``model``
    (required), ``model_version``, ``endpoint_host``, ``prompt_hash`` (sha256 hex of the prompt). Every line is
    checked first: one bad line refuses the push (400, each bad line as ``labels:LINE: why``). A pair the judge
    judged before keeps its first label (``already``)."""
    judge = _judge(request.auth, slug, name)
    try:
        text = request.body.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiRefused(400, "the labels are not UTF-8 text") from None
    try:
        summary = labels_push(judge=judge, text=text)
    except LabelsRefused as exc:
        raise ApiRefused(400, str(exc), exc.problems) from None
    return summary.__dict__


@router.get("/collections/{slug}/machine-judges/{name}/pending", response=replies(200, PendingOut),
            summary="The pairs of a pool the machine judge has still to judge, with their texts")
def pending(request, slug: str, name: str, pool: str = "main", limit: int = 100):
    judge = _judge(request.auth, slug, name)
    if not 1 <= limit <= 1000:
        raise ApiRefused(400, f"limit must be between 1 and 1000, not {limit}")
    found = pool_named(judge.collection, pool)
    if found is None:
        raise Http404(f"collection {slug!r} has no pool {pool!r}")
    left, pairs = pairs_to_judge(judge, found, limit=limit)
    return {"judge": judge.name, "pool": found.name, "left": left, "pairs": pairs}


register("", router, tags=["machine judges"])

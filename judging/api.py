"""Machine judges' endpoints: push labels for a machine assessor (JSON lines, ``judging.machine_labels``) and read
the pairs of a pool it has still to judge. The collection's organizers may, and the machine assessor's own
account (a token made for it with ``manage.py create_token``) for itself. And the organizers' assigning of a
pool's topics to assessors (the assign page's form and ``judging.assignments``)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, QueryDict
from ninja import Router, Schema, Status

from judging.assignments import AssignmentRefused, assignments_create
from judging.forms import AssignForm
from judging.machine_labels import MAX_LINES, LabelsRefused, labels_push, pairs_to_judge
from judging.models import MachineJudge
from pooling.selectors import pool_named
from workbench.access.people import assessors
from workbench.api.core import ApiRefused, organized_collection, register, replies
from workbench.collections.selectors import may_organize
from workbench.models import Collection

router = Router()


class PushOut(Schema):
    judge: str
    lines: int
    recorded: int
    already: int
    flagged: int


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


def _judge(user, slug: str, name: str, *, create: bool = False) -> tuple[Collection, MachineJudge | None]:
    """The collection and its machine judge ``name`` if ``user`` may act for it (the collection's organizers, the
    judge's own account); with ``create``, None for a name the collection has not (an organizer's push makes it)."""
    collection = Collection.objects.filter(slug=slug).first()
    if collection is None:
        raise Http404(f"no collection {slug!r}")
    judge = MachineJudge.objects.select_related("collection", "user").filter(collection=collection, name=name).first()
    if judge is None:
        if not may_organize(user, collection):
            raise PermissionDenied(f"you are not an organizer of collection {slug!r}")
        if create:
            return collection, None
        raise Http404(f"collection {slug!r} has no machine judge {name!r} (push its labels to make one, or run "
                      "one on its machine judges page)")
    if not (may_organize(user, collection) or judge.user_id == user.pk):
        raise PermissionDenied(f"only the organizers of collection {slug!r} and the machine judge itself may do this")
    return collection, judge


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
    judged before keeps its first label (``already``). A document whose text reads as instructions to a judge
    gets no judgment (``flagged``: left to the humans, as the workbench's own judges' are). An organizer's push
    to a name the collection has no judge of creates it (an ``imported`` machine assessor; its configuration
    records who pushed, when and the model)."""
    collection, judge = _judge(request.auth, slug, name, create=True)
    try:
        text = request.body.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiRefused(400, "the labels are not UTF-8 text") from None
    try:
        summary = labels_push(collection=collection, judge=judge, name=name, text=text, pushed_by=request.auth)
    except LabelsRefused as exc:
        raise ApiRefused(400, str(exc), exc.problems) from None
    return summary.__dict__


@router.get("/collections/{slug}/machine-judges/{name}/pending", response=replies(200, PendingOut),
            summary="The pairs of a pool the machine judge has still to judge, with their texts")
def pending(request, slug: str, name: str, pool: str = "main", limit: int = 100):
    _, judge = _judge(request.auth, slug, name)
    if not 1 <= limit <= 1000:
        raise ApiRefused(400, f"limit must be between 1 and 1000, not {limit}")
    found = pool_named(judge.collection, pool)
    if found is None:
        raise Http404(f"collection {slug!r} has no pool {pool!r}")
    left, pairs = pairs_to_judge(judge, found, limit=limit)
    return {"judge": judge.name, "pool": found.name, "left": left, "pairs": pairs}


class AssignIn(Schema):
    pool: str = "main"
    assessors: list[str]
    topics: list[str] = []
    overlap: int = 1
    batch_size: int | None = None


class AssignedOut(Schema):
    pool: str
    items: int
    documents: int
    per_assessor: dict[str, dict[str, int]]


def _assign_data(collection: Collection, body: AssignIn) -> tuple[QueryDict, list[str]]:
    """The assign page's form data (ids) for names; the names that match nothing."""
    if any("\x00" in name for name in (body.pool, *body.assessors, *body.topics)):
        raise ApiRefused(400, "a name holds a NUL character (\\0), which no name may hold")
    pool = pool_named(collection, body.pool)
    if pool is None:
        raise Http404(f"collection {collection.slug!r} has no pool {body.pool!r}")
    people = dict(assessors().filter(username__in=body.assessors).values_list("username", "pk"))
    topics = dict(collection.topics.filter(qid__in=body.topics).values_list("qid", "pk"))
    unknown = [f"assessors: {name!r} is not an active account with the assessor role" for name in body.assessors
               if name not in people]
    unknown += [f"topics: {qid!r} is not a topic of collection {collection.slug!r}" for qid in body.topics
                if qid not in topics]
    data = QueryDict(mutable=True)
    data.update({"pool": str(pool.pk), "overlap": str(body.overlap)})
    if body.batch_size is not None:
        data["batch_size"] = str(body.batch_size)
    data.setlist("assessors", [str(people[n]) for n in body.assessors if n in people])
    data.setlist("topics", [str(topics[q]) for q in body.topics if q in topics])
    return data, unknown


@router.post("/collections/{slug}/assignments", response=replies(201, AssignedOut),
             summary="Assign a pool's topics to assessors (the assign page): they show in their queues",
             tags=["assignments"])
def assign(request, slug: str, body: AssignIn):
    """The assign page's form as JSON: the ``pool`` (by name), the ``assessors`` (usernames with the assessor
    role), the ``topics`` (their ids; none: every topic of the pool), the ``overlap`` (assessors a document,
    counting those who hold it already) and an optional ``batch_size``. Documents already assigned to enough
    assessors are skipped; the assignment goes to the audit log."""
    collection = organized_collection(request.auth, slug)
    data, problems = _assign_data(collection, body)
    form = AssignForm(data, collection=collection)
    if not problems and not form.is_valid():
        problems = [f"{field}: {message}" if field != "__all__" else message
                    for field, messages in form.errors.items() for message in messages]
    if problems:
        raise ApiRefused(400, "the topics cannot be assigned: " + "; ".join(problems), problems)
    chosen = form.cleaned_data
    try:
        summary = assignments_create(pool=chosen["pool"], assessors=list(chosen["assessors"]),
                                     topics=[t.qid for t in chosen["topics"]] or None, overlap=chosen["overlap"],
                                     batch_size=chosen["batch_size"], created_by=request.auth)
    except AssignmentRefused as exc:
        raise ApiRefused(409, str(exc)) from None
    return Status(201, {"pool": chosen["pool"].name, **summary.__dict__})


register("", router, tags=["machine judges"])

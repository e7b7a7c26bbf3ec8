"""Researchers' and organizers' endpoints over a collection's results: qrels under a policy (JSON or TREC text)
and the leaderboard (JSON), read as the downloads and leaderboard pages read them."""

from __future__ import annotations

from django.http import HttpResponse
from ninja import Query, Router, Schema

from evaluation import cache, release, selectors
from evaluation.engine.significance import CORRECTION_CHOICES, TEST_CHOICES
from evaluation.scoring import EvaluationError
from judging.policies import POLICIES
from judging.qrels import qrels as judged_qrels
from workbench.api import ApiRefused, api, collection_readable, register, replies

router = Router()


class QrelsQuery(Schema):
    policy: str = POLICIES.default
    assessor: str | None = None


class Qrel(Schema):
    qid: str
    docno: str
    rel: int


class QrelsOut(Schema):
    collection: str
    policy: str
    assessor: str | None
    qrels: list[Qrel]


class BoardOut(Schema):
    collection: str
    measures: list[str]
    qrels: str
    topics: list[str]
    pool: str | None
    judged_threshold: float
    runs: list[dict]


class Computing(Schema):
    detail: str
    job: int | None


def _policy(policy: str) -> str:
    try:
        return POLICIES.parse(policy)
    except ValueError as exc:
        raise ApiRefused(400, str(exc)) from None


@router.get("/collections/{slug}/qrels", response=replies(200, QrelsOut),
            summary="Qrels under a policy (JSON); ?assessor= for one assessor's current grades")
def qrels(request, slug: str, query: Query[QrelsQuery]):
    collection = collection_readable(request.auth, slug)
    policy = _policy(query.policy)
    frame = judged_qrels(collection, policy=policy, assessor=query.assessor or None)
    rows = [{"qid": str(q), "docno": str(d), "rel": int(r)} for q, d, r in frame[["qid", "docno", "rel"]].itertuples(
        index=False)]
    return {"collection": slug, "policy": policy, "assessor": query.assessor or None, "qrels": rows}


@router.get("/collections/{slug}/qrels.txt", response=replies(200, str),
            summary="Qrels under a policy as TREC text (qid 0 docno rel), as the downloads page gives them",
            openapi_extra={"responses": {200: {"description": "TREC qrels",
                                               "content": {"text/plain": {"schema": {"type": "string"}}}}}})
def qrels_text(request, slug: str, query: Query[QrelsQuery], binary: bool = False):
    collection = collection_readable(request.auth, slug)
    text = release.qrels_text(collection, policy=_policy(query.policy), assessor=query.assessor or None,
                              binary=binary)
    return HttpResponse(text.encode("utf-8"), content_type="text/plain; charset=utf-8")


class BoardQuery(Schema):
    measures: str = ""
    qrels: str = POLICIES.default
    test: str = TEST_CHOICES.default
    correction: str = CORRECTION_CHOICES.default


@router.get("/collections/{slug}/leaderboard", response=replies(200, BoardOut) | {202: Computing},
            summary="The leaderboard (JSON), as the leaderboard page's JSON export")
def leaderboard(request, slug: str, query: Query[BoardQuery]):
    """``measures``: trec_eval names separated by spaces or commas (default: the leaderboard's own);
    ``qrels``: a qrels policy. 202 with ``Retry-After`` while the stored leaderboard is being computed."""
    collection = collection_readable(request.auth, slug)
    measures = query.measures.replace(",", " ").split() or None
    try:
        options = {"measures": measures, "qrels_policy": _policy(query.qrels), "assessor": None,
                   "test": TEST_CHOICES.parse(query.test), "correction": CORRECTION_CHOICES.parse(query.correction)}
        with cache.one_version():
            board, state = selectors.stored_leaderboard(collection, **options)
            if state.status == "computing":
                body = {"detail": "the scores are being computed; try again in a moment",
                        "job": state.job.pk if state.job is not None else None}
                response = api.create_response(request, body, status=202)
                response["Retry-After"] = "5"
                return response
            board = board or selectors.leaderboard(collection, **options)
    except (EvaluationError, ValueError) as exc:
        raise ApiRefused(400, str(exc)) from None
    return board.as_dict()


register("", router, tags=["results"])

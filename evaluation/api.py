"""Researchers' and organizers' endpoints over a collection's results: qrels under a policy (JSON or TREC text),
the leaderboard and the per-topic results (JSON, from the stored board the leaderboard page reads), and the
release bundles (listed, built by the downloads page's job, downloaded), as the downloads and leaderboard pages."""

from __future__ import annotations

from datetime import datetime
from pathlib import PurePosixPath

from django.http import FileResponse, Http404, HttpResponse
from ninja import Query, Router, Schema, Status

from evaluation import cache, release, selectors
from evaluation.engine.significance import CORRECTION_CHOICES, TEST_CHOICES
from evaluation.scoring import EvaluationError
from evaluation.tasks import build_release
from judging.policies import POLICIES
from judging.qrels import qrels as judged_qrels
from workbench.api.core import ApiRefused, ObjectId, api, collection_readable, job_out, register, replies
from workbench.collections import files as store
from workbench.jobs import lifecycle as jobs
from workbench.models import Job

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


def _board(request, collection, query: BoardQuery):
    """The stored leaderboard for the query (as the leaderboard page reads it), or the 202 answer while it is
    being computed; 400 for a measure, policy, test or correction that is none."""
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
            return board or selectors.leaderboard(collection, **options)
    except (EvaluationError, ValueError) as exc:
        raise ApiRefused(400, str(exc)) from None


@router.get("/collections/{slug}/leaderboard", response=replies(200, BoardOut) | {202: Computing},
            summary="The leaderboard (JSON), as the leaderboard page's JSON export")
def leaderboard(request, slug: str, query: Query[BoardQuery]):
    """``measures``: trec_eval names separated by spaces or commas (default: the leaderboard's own);
    ``qrels``: a qrels policy. 202 with ``Retry-After`` while the stored leaderboard is being computed."""
    board = _board(request, collection_readable(request.auth, slug), query)
    return board if isinstance(board, HttpResponse) else board.as_dict()


class TopicsQuery(BoardQuery):
    runs: str = ""


@router.get("/collections/{slug}/results", response=replies(200, BoardOut) | {202: Computing},
            summary="Per-topic results (JSON): each run's measure values per topic, from the stored leaderboard")
def per_topic(request, slug: str, query: Query[TopicsQuery]):
    """The leaderboard's JSON with each run's ``per_topic`` values (``{qid: {measure: value}}``, judged@10 as
    ``judged_10``), read from the same stored board as the leaderboard and the run pages (no other computation).
    ``runs``: run tags separated by spaces or commas (default: every run; an unknown tag is 400); ``measures``
    and ``qrels`` as for the leaderboard. 202 with ``Retry-After`` while the scores are being computed."""
    collection = collection_readable(request.auth, slug)
    wanted = query.runs.replace(",", " ").split()
    board = _board(request, collection, query)
    if isinstance(board, HttpResponse):
        return board
    unknown = sorted(set(wanted) - {run.tag for run in board.runs})
    if unknown:
        raise ApiRefused(400, f"no run {', '.join(map(repr, unknown))} on the leaderboard of collection {slug!r}")
    return board.as_dict(per_topic=True, runs=set(wanted) if wanted else None)  # only the wanted runs' values read


class BundleIn(Schema):
    policy: str = POLICIES.default


class BundleOut(Schema):
    job: int
    status: str
    policy: str
    file: str | None
    files: int | None
    created_at: datetime
    finished_at: datetime | None
    download: str | None


class BundleStartedOut(Schema):
    job: int
    status: str
    url: str


#: the kind of job that builds a release bundle (``evaluation.tasks.build_release``, the downloads page's)
BUNDLE = "release bundle"


def _bundle_out(slug: str, job: Job) -> dict:
    done = job.status == Job.Status.DONE and bool((job.result or {}).get("file"))
    return {"job": job.pk, "status": job_out(job)["status"], "policy": (job.params or {}).get("policy", ""),
            "file": job.result.get("file") if done else None, "files": job.result.get("files") if done else None,
            "created_at": job.created_at, "finished_at": job.finished_at,
            "download": f"/api/v1/collections/{slug}/bundles/{job.pk}" if done else None}


@router.get("/collections/{slug}/bundles", response=replies(200, list[BundleOut]),
            summary="A collection's release bundles, newest first (at most 100), as its downloads page builds them")
def bundles(request, slug: str):
    collection = collection_readable(request.auth, slug)
    found = Job.objects.filter(collection=collection, kind=BUNDLE).select_related("collection").order_by("-id")[:100]
    return [_bundle_out(slug, job) for job in found]


@router.post("/collections/{slug}/bundles", response=replies(202, BundleStartedOut),
             summary="Start building a release bundle (a job to follow at /jobs/{id}; then download it)")
def bundle_start(request, slug: str, body: BundleIn):
    """As the downloads page's button: the bundle (topics, qrels under ``policy``, the pool, the runs list,
    agreement, a README with checksums) is built by a job, under the job-start limit (429 with Retry-After).
    Once the job is done, ``GET /collections/{slug}/bundles/{job}`` gives the zip."""
    collection = collection_readable(request.auth, slug)
    job = jobs.job_start(build_release, kind=BUNDLE, user=request.auth, collection=collection,
                         params={"policy": _policy(body.policy)})
    job.refresh_from_db()
    return Status(202, {"job": job.pk, "status": job_out(job)["status"], "url": f"/api/v1/jobs/{job.pk}"})


@router.get("/collections/{slug}/bundles/{job_id}", response=replies(200, str),
            summary="Download a built release bundle (zip)",
            openapi_extra={"responses": {200: {"description": "the release bundle",
                                               "content": {"application/zip": {"schema": {"type": "string",
                                                                                          "format": "binary"}}}}}})
def bundle_download(request, slug: str, job_id: ObjectId):
    collection = collection_readable(request.auth, slug)
    job = Job.objects.filter(pk=job_id, collection=collection, kind=BUNDLE).first()
    if job is None:
        raise Http404(f"collection {slug!r} has no release bundle {job_id}")
    if job.status != Job.Status.DONE:
        raise ApiRefused(409, f"release bundle {job_id} is {job_out(job)['status']}, not built yet: follow "
                              f"/api/v1/jobs/{job_id}")
    name = jobs.job_output(job, (job.result or {}).get("file", ""))
    if not (job.result or {}).get("file") or not store.exists(name):
        raise Http404(f"release bundle {job_id} has no file (it was removed)")
    return FileResponse(store.open_file(name), as_attachment=True, filename=PurePosixPath(name).name,
                        content_type="application/zip")


register("", router, tags=["results"])

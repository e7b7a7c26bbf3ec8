"""The HTTP API, version 1 (``/api/v1/``): one django-ninja API whose OpenAPI schema is ``/api/v1/openapi.json``
and whose browsable docs are ``/api/v1/docs``.

Each app keeps its endpoints in its own ``api.py`` (a ninja ``Router`` calling the same services and selectors
as the app's pages) and adds them with :func:`register` when it is imported; :func:`autodiscover`, called by
:mod:`workbench.api.v1` (the URLconf's API), imports every app's ``api`` module (no app imports one above it).

A request is its token's user (``Authorization: Bearer TOKEN``, ``workbench.access.tokens``): the API takes no
session, so no page's cookie can act through it (no CSRF). Every refusal is JSON ``{"detail": "..."}`` with a
line a person reads (and ``problems``, the file's ``file:line`` lines, where there are some): 400 for bad
input, 401 without a valid token, 403, 404, 409 for a rule of the track, 413 for too much, 429 with
``Retry-After``."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated

from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import Http404
from django.shortcuts import render
from ninja import NinjaAPI, Router, Schema, Swagger
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer
from pydantic import Field

from workbench.access.tokens import TokenRateLimited, rate_check, token_user
from workbench.app_modules import app_modules
from workbench.collections.selectors import (
    can_download,
    collections_visible_to,
    is_organizer,
    is_researcher,
    may_organize,
)
from workbench.jobs import busy
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection, Job

__all__ = ["ERRORS", "ApiRefused", "Error", "ObjectId", "api", "autodiscover", "collection_readable", "organized_collection",
           "register", "replies"]


#: a database id in a path (larger numbers are no id: 404, not an overflow)
ObjectId = Annotated[int, Field(ge=1, le=2**62)]


def _holds_nul(request) -> bool:
    """Whether the path, the query or a form field holds a NUL character (PostgreSQL refuses to store or compare
    one)."""
    if "\x00" in request.path:
        return True
    fields = [request.GET] + ([request.POST] if request.content_type in ("multipart/form-data",
                                                                        "application/x-www-form-urlencoded") else [])
    return any("\x00" in key or any("\x00" in v for v in values) for data in fields for key, values in data.lists())


class TokenAuth(HttpBearer):
    """``Authorization: Bearer TOKEN``; a token over its rate is refused (429). Nothing of the header is logged."""

    def __call__(self, request):
        if _holds_nul(request):
            raise ApiRefused(400, "the request holds a NUL character (\\0), which no name or value may hold")
        scheme, _, token = (request.headers.get("Authorization") or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return None
        return self.authenticate(request, token.strip())

    def authenticate(self, request, token: str):
        user = token_user(token)
        if user is not None:
            rate_check(user.api_token_prefix)
        return user


class LocalSwagger(Swagger):
    """The browsable docs with the Swagger UI django-ninja ships, served from this site (its templates and static
    files are in the settings' folders): what ninja renders when it is an installed app, which it is not (every
    command's start-up would import it). Its other page loads the UI from a CDN, which the site's Content
    Security Policy refuses."""

    def render_page(self, request, api, **kwargs):
        self.settings["url"] = self.get_openapi_url(api, kwargs)
        return render(request, self.template, {"swagger_settings": json.dumps(self.settings, indent=1), "api": api,
                                               "add_csrf": any(getattr(a, "csrf", False) for a in api.auth)})


api = NinjaAPI(title="Pooling workbench API", version="1", urls_namespace="api-v1", auth=TokenAuth(), docs=LocalSwagger(),
               description="Participants submit runs, researchers fetch qrels and leaderboards, organizers start "
                           "and follow jobs, machine judges push labels. Send a personal token (made on your "
                           "account page, or with `manage.py create_token USER`) as `Authorization: Bearer TOKEN`.")


class Error(Schema):
    detail: str
    problems: list[str] = []


#: every refusal an endpoint may answer, declared in the schema of each one
ERRORS = {code: Error for code in (400, 401, 403, 404, 409, 413, 429)}


def replies(code: int, schema) -> dict:
    """An endpoint's ``response=``: its answer and every refusal."""
    return {code: schema, **ERRORS}


class ApiRefused(Exception):
    """A refusal an endpoint raises: its status, its line and (a file's) problems."""

    def __init__(self, status: int, detail: str, problems=(), retry_after: int | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.problems, self.retry_after = status, detail, list(problems), retry_after


def _error(request, status: int, detail: str, problems=(), retry_after: int | None = None):
    response = api.create_response(request, {"detail": detail, "problems": list(problems)}, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def _validation_lines(errors) -> list[str]:
    lines = []
    for error in errors:
        where = ".".join(str(part) for part in error.get("loc", ()) if part not in ("body", "query", "path", "form"))
        lines.append(f"{where}: {error.get('msg', 'not valid')}" if where else str(error.get("msg", "not valid")))
    return lines


@api.exception_handler(ApiRefused)
def _refused(request, exc: ApiRefused):
    return _error(request, exc.status, exc.detail, exc.problems, exc.retry_after)


@api.exception_handler(ValidationError)
def _invalid(request, exc: ValidationError):
    lines = _validation_lines(exc.errors)
    return _error(request, 400, "the request is not valid: " + "; ".join(lines), lines)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request, exc):
    response = _error(request, 401, "send a valid token as 'Authorization: Bearer TOKEN' (make one on your account "
                                    "page); this one is missing, unknown or revoked")
    response["WWW-Authenticate"] = "Bearer"
    return response


@api.exception_handler(HttpError)
def _http_error(request, exc: HttpError):
    return _error(request, exc.status_code, str(exc))


@api.exception_handler(Http404)
def _not_found(request, exc):
    return _error(request, 404, str(exc) or "not found")


@api.exception_handler(PermissionDenied)
def _forbidden(request, exc):
    return _error(request, 403, str(exc) or "you may not do this")


@api.exception_handler(RequestDataTooBig)
def _too_big(request, exc):
    return _error(request, 413, f"the request is too large: {exc}")


@api.exception_handler(jobs.TooManyJobStarts)
def _too_many_jobs(request, exc):
    return _error(request, 429, str(exc), retry_after=exc.wait)


@api.exception_handler(OperationalError)
@api.exception_handler(InterfaceError)
def _database_busy(request, exc):
    """The database locked or unreachable: nothing was done, try again (as ``workbench.jobs.busy`` answers a page)."""
    busy.logger.warning("%s %s answered 503, the database refused: %s", request.method, request.path, exc)
    return _error(request, 503, busy.MESSAGE, retry_after=busy.RETRY_AFTER)


@api.exception_handler(TokenRateLimited)
def _too_many_requests(request, exc):
    return _error(request, 429, str(exc), retry_after=exc.wait)


def register(prefix: str, router: Router, *, tags: list[str]) -> None:
    """Add an app's endpoints (its ``api.py`` calls this when imported)."""
    api.add_router(prefix, router, tags=tags)


def autodiscover() -> None:
    """Import every app's ``api`` module (they register their routers), once."""
    if getattr(api, "_discovered", False):
        return
    api._discovered = True
    for _app in app_modules("api"):
        pass  # importing an app's api module registers its routers


def _collection(slug: str) -> Collection:
    found = Collection.objects.filter(slug=slug).first()
    if found is None:
        raise Http404(f"no collection {slug!r}")
    return found


def collection_readable(user, slug: str) -> Collection:
    """The collection if ``user`` may read its topics, runs, qrels and results (its organizers; researchers where
    the organizers allow it), else 404 (none) or 403."""
    collection = _collection(slug)
    if not can_download(user, collection):
        raise PermissionDenied(f"you may not read collection {slug!r} (its organizers may; researchers where they "
                               "allow it)")
    return collection


def organized_collection(user, slug: str) -> Collection:
    """The collection if ``user`` is one of its organizers, else 404 (none) or 403."""
    collection = _collection(slug)
    if not may_organize(user, collection):
        raise PermissionDenied(f"you are not an organizer of collection {slug!r}")
    return collection


router = Router()


class Me(Schema):
    username: str
    roles: list[str]


class CollectionOut(Schema):
    slug: str
    name: str
    description: str
    grades: list[int]
    relevant_from: int
    topics: int
    runs: int
    organizer: bool


class TopicOut(Schema):
    qid: str
    title: str
    description: str
    narrative: str


class RunOut(Schema):
    tag: str
    team: str
    description: str
    contributes: bool
    pool_priority: int


class JobOut(Schema):
    id: int
    kind: str
    collection: str | None
    status: str
    step: str
    done: int
    total: int
    error: str
    result: dict
    created_at: datetime
    finished_at: datetime | None


@router.get("/me", response=replies(200, Me), summary="Who the token acts as, and their roles")
def me(request):
    user = request.auth
    roles = [name for name, has in (("organizer", is_organizer(user)), ("researcher", is_researcher(user)))
             if has] + sorted(user.groups.exclude(name__in=("organizers", "researchers")).values_list("name", flat=True))
    return {"username": user.username, "roles": roles}


def collection_out(user, collection: Collection) -> dict:
    return {"slug": collection.slug, "name": collection.name, "description": collection.description,
            "grades": list(collection.grades), "relevant_from": collection.relevant_from,
            "topics": collection.topics.count(), "runs": collection.runs.count(),
            "organizer": may_organize(user, collection)}


@router.get("/collections", response=replies(200, list[CollectionOut]),
            summary="The collections the token's user may read")
def collections(request):
    return [collection_out(request.auth, c) for c in collections_visible_to(request.auth).order_by("slug")]


@router.get("/collections/{slug}", response=replies(200, CollectionOut), summary="One collection")
def collection_detail(request, slug: str):
    return collection_out(request.auth, collection_readable(request.auth, slug))


@router.get("/collections/{slug}/topics", response=replies(200, list[TopicOut]), summary="A collection's topics")
def topics(request, slug: str):
    collection = collection_readable(request.auth, slug)
    return list(collection.topics.order_by("qid").values("qid", "title", "description", "narrative"))


@router.get("/collections/{slug}/runs", response=replies(200, list[RunOut]),
            summary="A collection's runs (their metadata; not their lines)")
def runs(request, slug: str):
    collection = collection_readable(request.auth, slug)
    return list(collection.runs.order_by("tag").values("tag", "team", "description", "contributes", "pool_priority"))


def job_out(job: Job) -> dict:
    status, error = jobs.job_view_state(job)
    return {"id": job.pk, "kind": job.kind, "collection": job.collection.slug if job.collection_id else None,
            "status": status, "step": job.step, "done": job.done, "total": job.total, "error": error,
            "result": job.result or {}, "created_at": job.created_at, "finished_at": job.finished_at}


@router.get("/jobs/{job_id}", response=replies(200, JobOut),
            summary="A job: its status, progress and result (yours, and your collections' jobs)")
def job(request, job_id: ObjectId):
    found = Job.objects.select_related("collection").filter(pk=job_id).first()
    if found is None or not jobs.may_see_job(request.auth, found):
        raise Http404(f"no job {job_id} of yours or of a collection you organize")
    return job_out(found)


register("", router, tags=["collections and jobs"])

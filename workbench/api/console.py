"""Organizers' console endpoints: create a collection (the console's form; its creator becomes its organizer)
and upload its files (the console's upload form and the same import job, one endpoint over every kind of
``workbench.collections.uploads``), on ``workbench.api.core``'s router; imported by ``workbench.api.v1``."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import QueryDict
from ninja import File, Form, Router, Schema, Status
from ninja.files import UploadedFile

from workbench import tasks  # noqa: F401  (tasks registers the console's kinds of upload)
from workbench.api.core import (
    ApiRefused,
    CollectionOut,
    collection_out,
    job_out,
    organized_collection,
    register,
    replies,
)
from workbench.api.core import router as collections_router
from workbench.collections import uploads  # noqa: F401  (tasks registers the console's kinds of upload)
from workbench.collections.selectors import is_organizer
from workbench.console.forms import CollectionForm, GradeFormSet, UploadForm
from workbench.console.views import DEFAULT_SCALE, save_collection, upload_start
from workbench.jobs import kinds as job_kinds
from workbench.models import Job

router = Router()


class GradeIn(Schema):
    grade: int
    label: str
    description: str = ""
    gain: float | None = None


class CollectionIn(Schema):
    slug: str
    name: str = ""
    description: str = ""
    grades: list[GradeIn] = [GradeIn(**row) for row in DEFAULT_SCALE]
    relevant_from: int = 1
    max_depth: int = 1000
    guidelines: str = ""
    researchers_may_download: bool = False
    document_url: str = ""
    judge_by_link: bool = False


class UploadStartedOut(Schema):
    job: int
    kind: str
    status: str
    url: str


def _problems(*forms) -> list[str]:
    found = []
    for form in forms:
        errors = [form.errors] if isinstance(form.errors, dict) else list(form.errors)
        if hasattr(form, "non_form_errors"):
            found += list(form.non_form_errors())
        found += [f"{field}: {message}" if field != "__all__" else message
                  for errors_of in errors for field, messages in errors_of.items() for message in messages]
    return found


def _collection_data(body: CollectionIn) -> QueryDict:
    data = QueryDict(mutable=True)
    for key in ("slug", "name", "description", "relevant_from", "max_depth", "guidelines", "document_url"):
        data[key] = str(getattr(body, key))
    data["name"] = body.name or body.slug
    for key in ("researchers_may_download", "judge_by_link"):
        if getattr(body, key):
            data[key] = "on"
    data.update({"grade-TOTAL_FORMS": str(len(body.grades)), "grade-INITIAL_FORMS": "0",
                 "grade-MIN_NUM_FORMS": "0", "grade-MAX_NUM_FORMS": "12"})
    for i, row in enumerate(body.grades):
        data.update({f"grade-{i}-grade": str(row.grade), f"grade-{i}-label": row.label,
                     f"grade-{i}-description": row.description,
                     f"grade-{i}-gain": "" if row.gain is None else str(row.gain)})
    return data


@collections_router.post("/collections", response=replies(201, CollectionOut),
             summary="Create a collection (the console's form): you become its organizer")
def collection_create(request, body: CollectionIn):
    """The console's new-collection form as JSON: ``slug`` (fixed once made), ``name`` (default: the slug),
    the relevance scale ``grades`` (default: 0 Not relevant, 1 Relevant), ``relevant_from`` and the other
    settings. Checked as the form checks them (400 naming each field); the creation goes to its audit log."""
    if not is_organizer(request.auth):
        raise PermissionDenied("only organizers may create a collection")
    data = _collection_data(body)
    form, grades = CollectionForm(data), GradeFormSet(data, prefix="grade")
    saved = save_collection(form, grades, request.auth)
    if saved is None:
        problems = _problems(form, grades)
        raise ApiRefused(400, "the collection cannot be created: " + "; ".join(problems), problems)
    return Status(201, collection_out(request.auth, saved))


def _upload_help() -> str:
    kinds = ", ".join(f"`{k.name}`" for k in uploads.KINDS.values() if k.task.module_path.startswith("workbench."))
    return (f"The console's upload form: `kind` is what the files are ({kinds}, and the kinds the apps above add: "
            "`qrels`, `machine_labels`; another answers 400 naming them all), `files` the files (one for a kind "
            f"that takes one; archives ({', '.join(uploads.ARCHIVE_SUFFIXES)}) where the kind takes them), and the "
            "kind's options (`manifest`, `replace`, `contributes`, `team`, `pool_priority`, `description`, "
            "`assessor`; a kind ignores those it does not take). The files go to disk and a job imports them, all "
            "or none: 202 with the job, to follow at `/jobs/{id}` (its `result.problems` lists a bad file's "
            "`file:line` lines). A job that has already failed when the answer is made (a server running jobs at "
            f"once) answers 400 with those lines. More than {uploads.max_files():,} files: 413.")


def _form_data(kind: uploads.UploadKind, options: dict) -> QueryDict:
    data = QueryDict(mutable=True)
    for name in kind.options:
        value = options.get(name)
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        elif value is not None and name != "manifest":
            data[name] = str(value)
    return data


@router.post("/collections/{slug}/uploads", response=replies(202, UploadStartedOut),
             summary="Upload topics, documents, runs or qrels (multipart): a job imports them", description=_upload_help())
def upload(request, slug: str, kind: Form[str] = "", files: File[list[UploadedFile]] = None,
           manifest: File[UploadedFile] = None, replace: Form[bool] = False, contributes: Form[bool] = True,
           team: Form[str] = "", pool_priority: Form[int] = 1, description: Form[str] = "", assessor: Form[str] = ""):
    # kind and files are checked here, after the access check: a stranger learns nothing of the collection from
    # which fields it would have wanted (the form's own check names a missing file)
    collection = organized_collection(request.auth, slug)
    job_kinds.discover()  # every app's tasks.py, with the upload kinds it declares
    chosen = uploads.KINDS.get(kind)
    if chosen is None:
        raise ApiRefused(400, f"kind {kind!r} is not one of {', '.join(uploads.KINDS)}" if kind
                         else f"kind is needed: one of {', '.join(uploads.KINDS)}")
    options = {"replace": replace, "contributes": contributes, "team": team, "pool_priority": pool_priority,
               "description": description, "assessor": assessor}
    form = UploadForm(_form_data(chosen, options), request.FILES)
    if form.is_valid() and not chosen.multiple and len(form.cleaned_data["files"]) > 1:
        form.add_error("files", f"{chosen.label}: one file at a time.")
    if not form.is_valid():
        problems = _problems(form)
        raise ApiRefused(400, "the upload is not valid: " + "; ".join(problems), problems)
    job = upload_start(chosen, form.cleaned_data, user=request.auth, collection=collection)
    job.refresh_from_db()
    shown = job_out(job)
    if shown["status"] == Job.Status.FAILED:
        problems = list((job.result or {}).get("problems") or [shown["error"]])
        raise ApiRefused(400, f"the {chosen.name} were not imported (job {job.pk}): {shown['error']}", problems)
    return Status(202, {"job": job.pk, "kind": chosen.name, "status": shown["status"], "url": f"/api/v1/jobs/{job.pk}"})


register("", router, tags=["organizers"])

"""The organizer's console: create and edit a collection, upload its files (each upload a background
job; runs with a manifest of their teams), change the runs' teams and priorities in bulk, follow the jobs,
and read any document with its topic. Server-rendered; works without JavaScript.
People and roles are in :mod:`workbench.console.people_views`; pools, assignments and results in the apps above."""

from __future__ import annotations

from django.contrib import messages
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django_tables2 import RequestConfig

from workbench.access.audit import audit_record
from workbench.access.rules import organizer_required
from workbench.collections import services, uploads
from workbench.console.forms import CollectionForm, GradeFormSet, RunsBulkForm, UploadForm
from workbench.console.tables import JobTable, RunSelectTable, RunTable
from workbench.corpora.corpus import document_for
from workbench.jobs import kinds as job_kinds
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection, Job

DEFAULT_SCALE = [{"grade": 0, "label": "Not relevant", "description": ""},
                  {"grade": 1, "label": "Relevant", "description": ""}]


def _collection_forms(request: HttpRequest, collection: Collection | None):
    data = request.POST if request.method == "POST" else None
    form = CollectionForm(data, instance=collection, initial=None if collection else {"relevant_from": 1})
    # posted rows are compared with nothing: an emptied row is skipped, not "changed from its initial value"
    initial = None if data is not None else (collection.scale if collection else DEFAULT_SCALE)
    grades = GradeFormSet(data, prefix="grade", initial=initial)
    return form, grades


def save_collection(form: CollectionForm, grades, user) -> Collection | None:
    """Both forms valid: the collection saved with its scale (``relevant_from`` checked against it); a new
    one gets ``user`` as its organizer; the change goes to its audit log."""
    if not grades.is_valid():
        form.is_valid()
        return None
    form.instance.scale = grades.scale()
    if not form.is_valid():
        return None
    try:
        with transaction.atomic():
            created = form.instance.pk is None
            changed = [*form.changed_data, *(["scale"] if grades.has_changed() else [])]
            saved = form.save()
            if created:
                saved.organizers.add(user)
            audit_record(collection=saved, actor=user, action="collection created" if created else "settings changed",
                         detail=", ".join(changed))
            return saved
    except IntegrityError:
        form.add_error("slug", "A collection with this slug exists already.")
        return None


def _collection_page(request: HttpRequest, collection: Collection | None) -> HttpResponse:
    form, grades = _collection_forms(request, collection)
    if request.method == "POST":
        saved = save_collection(form, grades, request.user)
        if saved is not None:
            messages.success(request, f"Collection {saved.slug!r} saved.")
            return redirect("workbench:console", slug=saved.slug)
    status = 400 if request.method == "POST" else 200
    return render(request, "workbench/console/collection_form.html",
                  {"form": form, "grades": grades, "collection": collection}, status=status)


@organizer_required
def collection_new(request: HttpRequest) -> HttpResponse:
    return _collection_page(request, None)


@organizer_required
def collection_edit(request: HttpRequest, slug: str) -> HttpResponse:
    return _collection_page(request, get_object_or_404(Collection, slug=slug))


@organizer_required
def console(request: HttpRequest, slug: str) -> HttpResponse:
    """One collection's console: what it holds, what to do next, and its jobs."""
    collection = get_object_or_404(Collection, slug=slug)
    job_table = JobTable(Job.objects.filter(collection=collection, parent=None).select_related("collection", "started_by"),
                         prefix="j-", exclude=("collection",))
    run_table = RunTable(collection.runs.all(), prefix="r-")
    RequestConfig(request, paginate={"per_page": 10}).configure(job_table)
    RequestConfig(request, paginate={"per_page": 25}).configure(run_table)
    counts = {"topics": collection.topics.count(), "documents": collection.documents.count(),
              "runs": collection.runs.count(), "pools": collection.pools.count()}
    return render(request, "workbench/console/console.html", {
        "collection": collection, "counts": counts, "jobs": job_table, "runs": run_table,
        "pools": collection.pools.all(), "organizers": [u.username for u in collection.organizers.order_by("username")]})


def _upload_forms(kind_errors: tuple[str, UploadForm] | None = None) -> list[dict]:
    job_kinds.discover()  # every app's tasks.py, with the upload kinds it declares
    forms = []
    for kind in uploads.KINDS.values():
        form = kind_errors[1] if kind_errors and kind_errors[0] == kind.name else UploadForm(prefix=kind.name)
        form.fields["files"].widget.attrs["multiple"] = kind.multiple
        if kind.archives:
            form.fields["files"].help_text = ("Plain text or .gz, or archives (" + ", ".join(uploads.ARCHIVE_SUFFIXES)
                                              + ") of such files; large files are streamed to disk.")
        forms.append({"kind": kind, "form": form,
                      "options": [form[name] for name in kind.options]})
    return forms


def _upload_params(kind: uploads.UploadKind, data: dict) -> dict:
    params = {name: data.get(name) for name in kind.options if name != "manifest"}  # the manifest is staged
    if "contributes" in kind.options:
        params["contributes"] = bool(data.get("contributes"))
    return params


@organizer_required
def upload(request: HttpRequest, slug: str) -> HttpResponse:
    """Upload topics, documents, runs or qrels: the files go to disk and a job imports them, all or none."""
    collection = get_object_or_404(Collection, slug=slug)
    limits = {"max_files": uploads.max_files(), "archives": uploads.ARCHIVE_SUFFIXES}
    if request.method != "POST":
        return render(request, "workbench/console/upload.html",
                      {"collection": collection, "uploads": _upload_forms(), **limits})
    job_kinds.discover()  # every app's tasks.py, with the upload kinds it declares
    kind = uploads.KINDS.get(request.POST.get("kind", ""))
    if kind is None:
        messages.error(request, "Choose what you upload: " + ", ".join(k.label for k in uploads.KINDS.values()))
        return redirect("workbench:upload", slug=slug)
    form = UploadForm(request.POST, request.FILES, prefix=kind.name)
    if form.is_valid() and not kind.multiple and len(form.cleaned_data["files"]) > 1:
        form.add_error("files", f"{kind.label}: one file at a time.")
    if not form.is_valid():
        return render(request, "workbench/console/upload.html",
                      {"collection": collection, "uploads": _upload_forms((kind.name, form)), **limits}, status=400)
    job = upload_start(kind, form.cleaned_data, user=request.user, collection=collection)
    return redirect("job", job_id=job.pk)


def upload_start(kind: uploads.UploadKind, data: dict, *, user, collection: Collection) -> Job:
    """A valid upload form's files staged and the job that imports them started (the console and the API)."""
    manifest = data.get("manifest") if "manifest" in kind.options else None
    directory = uploads.stage(data["files"], manifest=manifest)
    shown = uploads.shown_names([f.name for f in data["files"]])
    return jobs.job_start(kind.task, kind=f"{kind.label.split(' (')[0].lower()} import", user=user,
                          collection=collection, params={"directory": str(directory), "files": shown,
                                                         **({"manifest": manifest.name} if manifest else {}),
                                                         **_upload_params(kind, data)})


@organizer_required
def runs(request: HttpRequest, slug: str) -> HttpResponse:
    """Every run of the collection with its team, contribution, priority and type; the organizer changes
    them for many runs at once (the ticked runs, or every run)."""
    collection = get_object_or_404(Collection, slug=slug)
    form = RunsBulkForm(request.POST if request.method == "POST" else None, collection=collection)
    if request.method == "POST" and form.is_valid():
        chosen = (collection.runs.all() if form.cleaned_data["scope"] == "all" else form.cleaned_data["runs"])
        count = services.runs_update(collection=collection, run_ids=[run.pk for run in chosen], **form.values())
        messages.success(request, f"{count} run{'s' if count != 1 else ''} updated.")
        return redirect(request.get_full_path())
    table = RunSelectTable(collection.runs.all(), prefix="r-")
    RequestConfig(request, paginate={"per_page": 100}).configure(table)
    teams = collection.runs.exclude(team="").values("team").distinct().count()
    return render(request, "workbench/console/runs.html", {
        "collection": collection, "form": form, "runs": table, "teams": teams,
        "count": collection.runs.count()}, status=400 if request.method == "POST" else 200)


@organizer_required
def jobs_list(request: HttpRequest) -> HttpResponse:
    table = JobTable(jobs.jobs_visible_to(request.user).select_related("collection", "started_by"), prefix="j-")
    RequestConfig(request, paginate={"per_page": 50}).configure(table)
    return render(request, "workbench/console/jobs.html", {"jobs": table})


@organizer_required
def document(request: HttpRequest, slug: str) -> HttpResponse:
    """Read any document of the collection, beside a topic if one is chosen."""
    collection = get_object_or_404(Collection, slug=slug)
    docno, qid = request.GET.get("docno", "").strip(), request.GET.get("qid", "").strip()
    found = document_for(collection, docno) if docno else None  # a corpus used by reference: copied in now
    topic = collection.topics.filter(qid=qid).first() if qid else None
    if docno and found is None:
        messages.error(request, f"No document {docno!r} in this collection.")
    if qid and topic is None:
        messages.error(request, f"No topic {qid!r} in this collection.")
    return render(request, "workbench/console/document.html", {
        "collection": collection, "document": found, "topic": topic, "docno": docno, "qid": qid,
        "topics": collection.topics.only("qid", "title")}, status=404 if (docno and found is None) else 200)



"""Pages of the shared domain."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from workbench.access.people import roles_of
from workbench.collections import selectors
from workbench.jobs import kinds as job_kinds
from workbench.jobs import lifecycle as jobs
from workbench.models import Job


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Organizers (and researchers) see collections; assessors go straight to their judging queue."""
    if not (selectors.is_organizer(request.user) or selectors.is_researcher(request.user)):
        if "participant" in roles_of(request.user):
            return redirect("participation:portal")
        return redirect("judging:queue")
    collections = selectors.collections_visible_to(request.user)
    return render(request, "workbench/home.html", {"collections": collections,
                                                   "organizer": selectors.is_organizer(request.user)})


#: result lines, warnings and listed parameters a job's page shows before folding the rest into a <details>
#: (a 150-file upload has 150 result lines and names 150 files)
JOB_LINES_SHOWN = 10


def _folded(items) -> dict:
    """``items`` as the job's page shows them: the first JOB_LINES_SHOWN, the rest folded, and a summary
    (``150 runs`` when every line starts with the same word, as a runs import's do)."""
    items = [str(i) for i in items or []]
    words = {i.split(" ", 1)[0] for i in items}
    word = words.pop() if len(words) == 1 and len(items) > 1 else ""
    summary = f"{len(items):,} {word}s" if word.isalpha() else f"{len(items):,} lines"
    return {"first": items[:JOB_LINES_SHOWN], "rest": items[JOB_LINES_SHOWN:], "count": len(items),
            "summary": summary}


def _job_params(job: Job) -> list[dict]:
    """The parameters of the job's line; a long list (the names of 150 files) shows its count and first
    names, and the whole list folded."""
    out = []
    for key, text in job.shown_params.items():
        names = text.split(", ")
        if len(names) > JOB_LINES_SHOWN:
            out.append({"key": key, "text": f"{len(names):,} ({', '.join(names[:3])}, …)", "all": names})
        else:
            out.append({"key": key, "text": text, "all": []})
    return out


@login_required
def job(request: HttpRequest, job_id: int) -> HttpResponse:
    """A background job: its progress while it runs (the page polls ``?fragment=1``), then its result or why
    it failed. The organizers of its collection see it, and whoever started it; to anyone else it is 404."""
    found = Job.objects.select_related("collection", "started_by").filter(pk=job_id).first()
    if found is None or not jobs.may_see_job(request.user, found):
        raise Http404("No such job.")
    status, error = jobs.job_view_state(found)
    result = found.result if isinstance(found.result, dict) else {}
    context = {"job": found, "kind": job_kinds.shown(found), "status": status, "error": error,
               "finished": status in ("done", "failed"),
               "status_label": Job.Status(status).label,
               "organizer": selectors.is_organizer(request.user) if found.collection is None
               else selectors.may_organize(request.user, found.collection),
               "params": _job_params(found), "lines": _folded(result.get("lines")),
               "warnings": _folded(result.get("warnings"))}
    template = "workbench/_job_status.html" if request.GET.get("fragment") else "workbench/job.html"
    return render(request, template, context)

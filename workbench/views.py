"""Pages of the shared domain."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from workbench import jobs, selectors
from workbench.models import Job
from workbench.people import roles_of


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


@login_required
def job(request: HttpRequest, job_id: int) -> HttpResponse:
    """A background job: its progress while it runs (the page polls ``?fragment=1``), then its result or why
    it failed. Organizers see every job; others only the jobs they started."""
    found = Job.objects.select_related("collection", "started_by").filter(pk=job_id).first()
    if found is None or not (selectors.is_organizer(request.user) or found.started_by_id == request.user.pk):
        raise Http404("No such job.")
    status, error = jobs.job_view_state(found)
    context = {"job": found, "status": status, "error": error, "finished": status in ("done", "failed"),
               "status_label": Job.Status(status).label, "organizer": selectors.is_organizer(request.user)}
    template = "workbench/_job_status.html" if request.GET.get("fragment") else "workbench/job.html"
    return render(request, template, context)

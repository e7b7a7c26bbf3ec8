"""Pages of the shared domain."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from workbench import selectors


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Organizers see their collections; assessors go straight to their judging queue."""
    if not selectors.is_organizer(request.user):
        return redirect("judging:queue")
    collections = selectors.collections_visible_to(request.user)
    return render(request, "workbench/home.html", {"collections": collections})

"""Pages of the shared domain."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render

from workbench import selectors


@login_required
def home(request: HttpRequest) -> HttpResponse:
    """Organizers (and researchers) see collections; assessors go straight to their judging queue."""
    if not (selectors.is_organizer(request.user) or selectors.is_researcher(request.user)):
        return redirect("judging:queue")
    collections = selectors.collections_visible_to(request.user)
    return render(request, "workbench/home.html", {"collections": collections,
                                                   "organizer": selectors.is_organizer(request.user)})

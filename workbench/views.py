"""Pages of the shared domain."""

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from workbench import selectors


@login_required
def home(request: HttpRequest) -> HttpResponse:
    collections = selectors.collections_visible_to(request.user)
    return render(request, "workbench/home.html", {"collections": collections})

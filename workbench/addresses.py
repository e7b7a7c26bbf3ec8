"""Addresses a page cannot read: a query parameter holding a NUL character (which PostgreSQL refuses in any
text, so a page filtering by it answered 500) is refused with a page saying which parameter, before any view
runs."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

__all__ = ["NulInAddressMiddleware"]


class NulInAddressMiddleware:
    """A 400 page naming the query parameter that holds a NUL character (``%00``), for every page."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        for key, values in request.GET.lists():
            if "\x00" in key or any("\x00" in value for value in values):
                shown = key.replace("\x00", "\\0")
                return render(request, "workbench/bad_address.html",
                              {"parameter": shown, "back": request.path}, status=400)
        return self.get_response(request)

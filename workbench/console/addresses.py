"""Addresses a page cannot read: a path or a query parameter holding a NUL character (which PostgreSQL refuses
in any text, so a page looking a run or a topic up by it, or filtering by it, answered 500) is refused with a
page saying where, before any view runs."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

__all__ = ["NulInAddressMiddleware"]


class NulInAddressMiddleware:
    """A 400 page naming where the address holds a NUL character (``%00``): its path, or which parameter."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" in request.path:
            return self._refuse(request, "path", "/")
        for key, values in request.GET.lists():
            if "\x00" in key or any("\x00" in value for value in values):
                return self._refuse(request, f"parameter {key.replace(chr(0), '%00')}", request.path)
        return self.get_response(request)

    @staticmethod
    def _refuse(request: HttpRequest, where: str, back: str) -> HttpResponse:
        return render(request, "workbench/bad_address.html", {"where": where, "back": back}, status=400)

"""A request the database cannot serve now answers a plain "busy, try again" page, never a 500.

On SQLite one writer holds the lock at a time; a write that waited ``SQLITE_BUSY_TIMEOUT`` for it in vain
raises ``database is locked`` (on PostgreSQL, a server restarting or unreachable raises the same kind of
error). The write was not made (its transaction rolled back), so the person is told exactly that: HTTP 503
with ``Retry-After``, and a page that says nothing was saved and to try again in a moment. The page needs no
database (no template, no user, no session): the database may be unreachable.
"""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.utils.html import escape

logger = logging.getLogger("workbench.jobs.busy")

#: seconds a client is asked to wait before trying again
RETRY_AFTER = 5

MESSAGE = "The database is busy; try again in a moment."

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>The database is busy</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body><h1>The database is busy</h1>
<p role="alert">{message} {what}</p>
<p><a href="{back}">Back</a></p></body></html>
"""


def busy_response(request) -> HttpResponse:
    """The 503 page for ``request``: what was not done, and when to try again (JSON to a client that asks for
    it, as the HTTP API's do)."""
    if "application/json" in request.headers.get("Accept", ""):
        response = JsonResponse({"detail": MESSAGE}, status=503)
        response["Retry-After"] = str(RETRY_AFTER)
        return response
    what = ("Nothing you sent was saved: send it again." if request.method not in ("GET", "HEAD", "OPTIONS")
            else "Reload the page.")
    back = request.get_full_path() if request.method in ("GET", "HEAD") else request.path
    response = HttpResponse(PAGE.format(message=MESSAGE, what=what, back=escape(back)), status=503,
                            content_type="text/html; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER)
    response["Cache-Control"] = "no-store"
    return response


class DatabaseBusyMiddleware:
    """A view that raised because the database is locked or unreachable answers :func:`busy_response`."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, OperationalError | InterfaceError):
            return None
        reason = " ".join(str(exception).split())[:300] or type(exception).__name__
        logger.warning("%s %s answered 503, the database refused: %s", request.method, request.path, reason)
        return busy_response(request)


def server_error(request, *args, **kwargs):
    """The project's ``handler500``: an error the database raised outside a view (a session saved by its
    middleware while another process holds SQLite's lock) answers :func:`busy_response` too; any other error
    answers Django's own 500 page."""
    import sys

    from django.views.defaults import server_error as django_server_error

    exception = sys.exc_info()[1]  # Django calls the handler inside its except clause
    if isinstance(exception, OperationalError | InterfaceError):
        reason = " ".join(str(exception).split())[:300] or type(exception).__name__
        logger.warning("%s %s answered 503, the database refused outside a view: %s", request.method, request.path,
                       reason)
        return busy_response(request)
    return django_server_error(request, *args, **kwargs)

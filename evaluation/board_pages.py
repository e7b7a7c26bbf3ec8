"""What the leaderboard page shows around a stored board (:mod:`evaluation.board`): the page (or the
download's answer) while the first board is computed, and the board's table rendered once."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from evaluation import cache
from workbench.models import Collection, Job


def computing(request: HttpRequest, collection: Collection, job: Job | None) -> HttpResponse:
    """No board yet: a page saying the scores are being computed (it reloads itself), or for a download
    503 with Retry-After."""
    if request.GET.get("_export"):
        response = HttpResponse("The scores are being computed; try again in a moment.\n", status=503,
                                content_type="text/plain")
        response["Retry-After"] = "5"
        return response
    return render(request, "evaluation/board_computing.html", {"collection": collection, "job": job})


def table_html(request: HttpRequest, board, table) -> str | None:
    """A board's table is the same for every visitor asking the same query: rendered once per board
    version and query string (None for a leaderboard evaluated in the request)."""
    if not board.board_version:
        return None
    key = ("leaderboard table", board.board_version, board.qrels_policy, request.GET.urlencode())
    return cache.cached(key, lambda: table.as_html(request))

"""Access to a collection's results: its organizers always, researchers where the organizer allows."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from evaluation import cache
from workbench.collections.selectors import can_download, may_organize
from workbench.models import Collection


def results_view(*, organizers_only: bool = False):
    """Decorator: resolves ``slug`` to the collection and refuses users who may not see its results."""

    def decorate(view):
        @wraps(view)
        @login_required
        def wrapped(request, slug, *args, **kwargs):
            collection = get_object_or_404(Collection, slug=slug)
            allowed = may_organize(request.user, collection) if organizers_only else can_download(request.user, collection)
            if not allowed:
                raise PermissionDenied("You may not see this collection's results.")
            if request.method in ("GET", "HEAD"):  # a page reads one version of the collection
                with cache.one_version():
                    return view(request, collection, *args, **kwargs)
            return view(request, collection, *args, **kwargs)

        return wrapped

    return decorate

"""Who may see what: a collection's organizers run its track; assessors see only their own work.

Every organizer page, job, download and admin list asks ``may_organize`` (in ``workbench.collections.selectors``): a
superuser manages every collection, a user with the organizer role the collections they organize and those
with no organizers assigned."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404

from workbench.collections.selectors import is_organizer, may_organize, organized_collections
from workbench.models import Collection

__all__ = ["collection_for_organizer", "may_organize", "organized_collections", "organizer_required"]


def collection_for_organizer(user, slug: str) -> Collection:
    """The collection ``slug`` if ``user`` manages it: 404 when there is none, 403 when it is another's."""
    collection = get_object_or_404(Collection, slug=slug)
    if not may_organize(user, collection):
        raise PermissionDenied("You are not an organizer of this collection.")
    return collection


def organizer_required(view):
    """Logged-out users go to the login page; logged-in non-organizers get 403 Forbidden, and so does an
    organizer on the pages of a collection (the URL's ``slug``) they do not manage."""

    @wraps(view)
    @login_required
    def wrapped(request, *args, **kwargs):
        if not is_organizer(request.user):
            raise PermissionDenied("Organizers only.")
        if "slug" in kwargs:
            collection_for_organizer(request.user, kwargs["slug"])
        return view(request, *args, **kwargs)

    return wrapped

"""Who may see what: organizers run tracks; assessors see only their own work."""

from __future__ import annotations

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied

from workbench.selectors import is_organizer


def organizer_required(view):
    """Logged-out users go to the login page; logged-in non-organizers get 403 Forbidden."""

    @wraps(view)
    @login_required
    def wrapped(request, *args, **kwargs):
        if not is_organizer(request.user):
            raise PermissionDenied("Organizers only.")
        return view(request, *args, **kwargs)

    return wrapped

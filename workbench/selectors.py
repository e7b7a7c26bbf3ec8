"""Reads of the shared domain."""

from __future__ import annotations

from django.db.models import QuerySet

from workbench.models import Collection


def is_organizer(user) -> bool:
    """Organizers run tracks: staff, superusers and members of the "organizers" group."""
    if not user.is_authenticated:
        return False
    if user.is_superuser or user.is_staff:
        return True
    return user.groups.filter(name="organizers").exists()


def collections_visible_to(user) -> QuerySet[Collection]:
    if is_organizer(user):
        return Collection.objects.all()
    return Collection.objects.none()

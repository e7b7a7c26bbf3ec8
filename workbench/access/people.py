"""People and their roles: organizers run tracks, assessors judge, researchers read released results,
participants submit their team's runs.

A role is a Django group (``organizers``, ``assessors``, ``researchers``, ``participants``). An organizer
invites someone by creating their account without a usable password and handing them a set-password
link (Django's password-reset token: single use, valid for ``PASSWORD_RESET_TIMEOUT``), which needs no
e-mail server; where Django's e-mail settings are given the link is also sent by e-mail.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import Group, User
from django.contrib.auth.tokens import default_token_generator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from workbench.access.audit import audit_record

#: role -> the group that carries it, in the order pages list them
ROLES = {"organizer": "organizers", "assessor": "assessors", "researcher": "researchers",
         "participant": "participants"}
ROLE_LABELS = {"organizer": "Organizer", "assessor": "Assessor", "researcher": "Researcher",
               "participant": "Participant (submits runs for a team)"}

__all__ = ["ROLES", "ROLE_LABELS", "Invitation", "assessors", "collection_organizer_add", "collection_organizer_remove",
           "may_manage_account", "person_invite", "person_set_roles", "roles_of", "set_password_path"]


def roles_of(user: User) -> list[str]:
    names = set(user.groups.values_list("name", flat=True))
    return [role for role, group in ROLES.items() if group in names]


def assessors():
    """Active accounts with the assessor role: the only ones work is assigned to."""
    return User.objects.filter(is_active=True, groups__name=ROLES["assessor"]).distinct().order_by("username")


def _groups(roles: Iterable[str]) -> list[Group]:
    unknown = sorted(set(roles) - set(ROLES))
    if unknown:
        raise ValidationError(f"unknown role {unknown[0]!r} (one of: {', '.join(ROLES)})")
    return [Group.objects.get_or_create(name=ROLES[role])[0] for role in roles]


@transaction.atomic
def person_set_roles(*, user: User, roles: Iterable[str]) -> User:
    """Give ``user`` exactly these roles; organizers are also staff (the admin is theirs for raw data)."""
    roles = list(roles)
    groups = _groups(roles)
    user.groups.remove(*Group.objects.filter(name__in=ROLES.values()))
    user.groups.add(*groups)
    if not user.is_superuser:
        user.is_staff = "organizer" in roles
        user.save(update_fields=["is_staff"])
    return user


def may_manage_account(actor: User, account: User) -> bool:
    """Whether ``actor`` may change ``account``'s roles, deactivate it or make its set-password link: superusers
    any account; an organizer no superuser, and no organizer of a collection the actor does not manage (else
    the coordinator of one track could take over, or demote, the coordinator of another)."""
    if actor.is_superuser:
        return True
    if account.is_superuser:
        return False
    return not account.organized_collections.exclude(organizers=actor).exists()


@transaction.atomic
def collection_organizer_add(*, collection, user: User, actor: User | None = None) -> None:
    """Make ``user`` (who has the organizer role) an organizer of ``collection``; written to its audit log."""
    if not (user.is_superuser or ROLES["organizer"] in user.groups.values_list("name", flat=True)):
        raise ValidationError(f"{user.username!r} does not have the organizer role: give it on the People page first")
    collection.organizers.add(user)
    audit_record(collection=collection, actor=actor, action="organizer added", detail=user.username)


@transaction.atomic
def collection_organizer_remove(*, collection, user: User, actor: User | None = None) -> None:
    """Remove ``user`` from ``collection``'s organizers, never the last one (a collection without organizers is
    every organizer's); written to its audit log."""
    if not collection.organizers.exclude(pk=user.pk).exists():
        raise ValidationError("a collection keeps at least one organizer: add another before removing this one")
    collection.organizers.remove(user)
    audit_record(collection=collection, actor=actor, action="organizer removed", detail=user.username)


def set_password_path(user: User) -> str:
    """The path of a single-use link with which ``user`` chooses a password (no e-mail needed)."""
    return reverse("password_reset_confirm", kwargs={"uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
                                                     "token": default_token_generator.make_token(user)})


@dataclass(frozen=True)
class Invitation:
    user: User
    path: str  # the set-password link's path; the page makes it absolute
    emailed: bool


def _checked_username(username: str) -> str:
    username = (username or "").strip()
    field = User._meta.get_field("username")
    if not username:
        raise ValidationError("a username is needed")
    try:
        field.run_validators(username)
    except ValidationError as exc:
        raise ValidationError(f"username {username!r}: {' '.join(exc.messages)}") from None
    if len(username) > field.max_length:
        raise ValidationError(f"a username has at most {field.max_length} characters")
    return username


def person_invite(*, username: str, email: str = "", roles: Iterable[str], link_base: str = "") -> Invitation:
    """Create the account (no usable password yet) with its roles, and the set-password link for it.

    ``link_base`` (e.g. ``https://host``) makes the e-mailed link absolute; the link is e-mailed only
    when the account has an address and Django's e-mail settings are given (``EMAIL_HOST``)."""
    username = _checked_username(username)
    with transaction.atomic():
        if User.objects.filter(username__iexact=username).exists():
            raise ValidationError(f"an account {username!r} exists already")
        user = User(username=username, email=(email or "").strip())
        user.set_unusable_password()
        user.save()
        person_set_roles(user=user, roles=roles)
    path = set_password_path(user)
    emailed = False
    if user.email and settings.EMAIL_HOST:
        send_mail("Your account on the pooling workbench",
                  f"Choose your password here (the link works once): {link_base}{path}",
                  None, [user.email])
        emailed = True
    return Invitation(user=user, path=path, emailed=emailed)


class NotOnlyWhitespaceValidator:
    """A password must hold something other than spaces (Django's validators accept eight spaces)."""

    def validate(self, password: str, user=None) -> None:
        from django.core.exceptions import ValidationError

        if not password.strip():
            raise ValidationError("The password cannot be only spaces.", code="password_only_whitespace")

    def get_help_text(self) -> str:
        return "Your password cannot be only spaces."

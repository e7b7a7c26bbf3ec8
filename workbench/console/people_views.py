"""People in the console: invite assessors, researchers and organizers (a set-password link to copy,
or e-mailed where e-mail is set up), change roles, give a new link, deactivate."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django_tables2 import RequestConfig

from workbench.access.audit import AuditEntry
from workbench.access.people import (
    ROLES,
    collection_organizer_add,
    collection_organizer_remove,
    may_manage_account,
    person_invite,
    person_set_roles,
    roles_of,
    set_password_path,
)
from workbench.access.rules import collection_for_organizer, organizer_required
from workbench.console.forms import InviteForm, RolesForm
from workbench.console.tables import AuditTable, PeopleTable


@organizer_required
def people(request: HttpRequest) -> HttpResponse:
    form = InviteForm(request.POST or None)
    invitation = None
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            invitation = person_invite(username=data["username"], email=data["email"], roles=data["roles"],
                                       link_base=request.build_absolute_uri("/")[:-1])
        except ValidationError as exc:
            form.add_error("username", " ".join(exc.messages))
        else:
            messages.success(request, f"Account {invitation.user.username!r} created"
                             + (" and the link e-mailed." if invitation.emailed else "."))
            form = InviteForm()
    table = PeopleTable(User.objects.order_by("username").prefetch_related("groups"), prefix="p-")
    RequestConfig(request, paginate={"per_page": 50}).configure(table)
    link = request.build_absolute_uri(invitation.path) if invitation else None
    return render(request, "workbench/console/people.html",
                  {"form": form, "people": table, "invitation": invitation, "link": link},
                  status=400 if form.errors else 200)


@organizer_required
def person(request: HttpRequest, user_id: int) -> HttpResponse:
    """One account: its roles, a fresh set-password link, deactivate or reactivate."""
    account = get_object_or_404(User, pk=user_id)
    form = RolesForm(initial={"roles": roles_of(account)})
    link = None
    if request.method == "POST":
        action = request.POST.get("action")
        if not may_manage_account(request.user, account):
            raise PermissionDenied("Only a superuser changes the account of an organizer of another collection.")
        if account == request.user and action in ("deactivate", "roles"):
            messages.error(request, "You cannot change your own roles or deactivate yourself here.")
            return redirect("workbench:person", user_id=account.pk)
        if action == "roles":
            form = RolesForm(request.POST)
            if form.is_valid():
                person_set_roles(user=account, roles=form.cleaned_data["roles"])
                messages.success(request, f"Roles of {account.username!r} saved.")
                return redirect("workbench:person", user_id=account.pk)
        elif action == "link":
            link = request.build_absolute_uri(set_password_path(account))
        elif action in ("deactivate", "activate"):
            account.is_active = action == "activate"
            account.save(update_fields=["is_active"])
            messages.success(request, f"{account.username!r} {action}d.")
            return redirect("workbench:person", user_id=account.pk)
    return render(request, "workbench/console/person.html", {"account": account, "form": form, "link": link,
                                                             "roles": roles_of(account),
                                                             "may_manage": may_manage_account(request.user, account)})


def _organizer_change(request: HttpRequest, collection) -> None:
    """Add or remove one organizer of ``collection`` as posted; what happened (or why not) as a message."""
    action = request.POST.get("action")
    account = User.objects.filter(pk=request.POST.get("user") if str(request.POST.get("user", "")).isdigit()
                                  else None).first()
    if account is None or action not in ("add", "remove"):
        messages.error(request, "Choose an account to add or remove.")
        return
    try:
        if action == "add":
            collection_organizer_add(collection=collection, user=account, actor=request.user)
        else:
            collection_organizer_remove(collection=collection, user=account, actor=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"{account.username!r} {'added to' if action == 'add' else 'removed from'} "
                                  "the organizers.")


@organizer_required
def collection_people(request: HttpRequest, slug: str) -> HttpResponse:
    """A collection's organizers: who manages it, add one (an account with the organizer role), remove one."""
    collection = collection_for_organizer(request.user, slug)
    if request.method == "POST":
        _organizer_change(request, collection)
        return redirect("workbench:collection_people", slug=collection.slug)
    organizers = list(collection.organizers.order_by("username"))
    candidates = (User.objects.filter(is_active=True, groups__name=ROLES["organizer"])
                  .exclude(pk__in=[u.pk for u in organizers]).distinct().order_by("username"))
    return render(request, "workbench/console/collection_people.html", {
        "collection": collection, "organizers": organizers, "candidates": candidates})


@organizer_required
def audit(request: HttpRequest, slug: str) -> HttpResponse:
    """The collection's audit log: who changed its settings, people, qrels policy or released results."""
    collection = collection_for_organizer(request.user, slug)
    table = AuditTable(AuditEntry.objects.filter(collection=collection).select_related("actor"), prefix="a-")
    RequestConfig(request, paginate={"per_page": 50}).configure(table)
    return render(request, "workbench/console/audit.html", {"collection": collection, "entries": table})

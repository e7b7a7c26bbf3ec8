"""People in the console: invite assessors, researchers and organizers (a set-password link to copy,
or e-mailed where e-mail is set up), change roles, give a new link, deactivate."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django_tables2 import RequestConfig

from workbench.access import organizer_required
from workbench.forms import InviteForm, RolesForm
from workbench.people import person_invite, person_set_roles, roles_of, set_password_path
from workbench.tables import PeopleTable


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
                                                             "roles": roles_of(account)})

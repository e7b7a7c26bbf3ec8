"""Inviting people from the console: an account with its roles and a set-password link to copy (no e-mail
server needed), which works once; roles changed, accounts deactivated; for organizers only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.urls import reverse

from workbench.access.people import person_invite, roles_of
from workbench.collections.selectors import is_organizer

pytestmark = pytest.mark.django_db


@pytest.fixture
def org_client(client, organizer):
    client.force_login(organizer)
    return client


def _set_password(client, link: str, password: str):
    page = client.get(link, follow=True)  # Django moves the token out of the URL into the session
    assert page.status_code == 200 and "Choose your password" in page.content.decode()
    return client.post(page.redirect_chain[-1][0], {"new_password1": password, "new_password2": password})


def test_an_invited_assessor_sets_a_password_with_the_link_and_logs_in(org_client, client):
    response = org_client.post(reverse("workbench:people"), {"username": "ada", "email": "", "roles": ["assessor"]})
    assert response.status_code == 200
    link = response.context["link"]
    assert link.startswith("http://testserver/accounts/reset/") and link in response.content.decode()
    ada = User.objects.get(username="ada")
    assert roles_of(ada) == ["assessor"] and not ada.has_usable_password() and not is_organizer(ada)
    assert len(mail.outbox) == 0  # no e-mail settings: the organizer copies the link

    client.logout()
    done = _set_password(client, link, "a long passphrase 42")
    assert done.status_code == 302
    assert client.login(username="ada", password="a long passphrase 42")
    client.logout()
    again = client.get(link, follow=True)  # used once: it does not work again
    assert "does not work any more" in again.content.decode()


def test_an_invitation_is_emailed_where_email_is_set_up(settings, db):
    settings.EMAIL_HOST = "smtp.example.org"
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    invitation = person_invite(username="bea", email="bea@example.org", roles=["researcher"],
                               link_base="https://wb.example.org")
    assert invitation.emailed and mail.outbox[0].to == ["bea@example.org"]
    assert f"https://wb.example.org{invitation.path}" in mail.outbox[0].body


@pytest.mark.parametrize(("data", "message"), [
    ({"username": "olivia", "roles": ["assessor"]}, "exists already"),
    ({"username": "no spaces allowed", "roles": ["assessor"]}, "username"),
    ({"username": "x" * 151, "roles": ["assessor"]}, "at most 150"),
    ({"username": "cy", "roles": ["emperor"]}, "not one of the available choices"),
    ({"username": "cy", "roles": []}, "This field is required"),
])
def test_a_wrong_invitation_says_why_and_creates_nothing(org_client, data, message):
    before = User.objects.count()
    response = org_client.post(reverse("workbench:people"), data)
    assert response.status_code == 400 and message in response.content.decode()
    assert User.objects.count() == before


def test_roles_are_changed_and_an_account_deactivated(org_client, assessor):
    url = reverse("workbench:person", args=[assessor.pk])
    assert org_client.post(url, {"action": "roles", "roles": ["assessor", "researcher"]}).status_code == 302
    assert roles_of(assessor) == ["assessor", "researcher"]
    org_client.post(url, {"action": "roles", "roles": ["organizer"]})
    assessor.refresh_from_db()
    assert is_organizer(assessor) and assessor.is_staff
    org_client.post(url, {"action": "deactivate"})
    assessor.refresh_from_db()
    assert not assessor.is_active
    page = org_client.post(url, {"action": "link"})
    assert page.context["link"].startswith("http://testserver/accounts/reset/")


def test_an_organizer_cannot_remove_their_own_roles(org_client, organizer):
    url = reverse("workbench:person", args=[organizer.pk])
    org_client.post(url, {"action": "roles", "roles": []})
    org_client.post(url, {"action": "deactivate"})
    organizer.refresh_from_db()
    assert is_organizer(organizer) and organizer.is_active


def test_people_pages_refuse_everyone_but_organizers(client, assessor, outsider):
    for user in (assessor, outsider):
        client.force_login(user)
        assert client.get(reverse("workbench:people")).status_code == 403
        assert client.post(reverse("workbench:people"), {"username": "evil", "roles": ["organizer"]}).status_code == 403
        assert client.post(reverse("workbench:person", args=[user.pk]),
                           {"action": "roles", "roles": ["organizer"]}).status_code == 403
    assert not User.objects.filter(username="evil").exists()
    assert not is_organizer(assessor)

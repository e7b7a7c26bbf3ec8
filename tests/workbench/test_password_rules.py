"""A password of only spaces is refused where people choose one (the set-password page), saying why."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from tests.workbench.test_people import _set_password

pytestmark = pytest.mark.django_db


def test_eight_spaces_are_refused_as_a_password(client, organizer):
    client.force_login(organizer)
    link = client.post(reverse("workbench:people"), {"username": "ada", "email": "", "roles": ["assessor"]}
                       ).context["link"]
    client.logout()
    refused = _set_password(client, link, " " * 12)
    assert refused.status_code == 200 and "The password cannot be only spaces." in refused.content.decode()
    assert not User.objects.get(username="ada").has_usable_password()

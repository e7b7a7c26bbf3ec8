"""A track open for submissions (tests/participation's), tokens for its people, and a researcher."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User

from tests.participation.conftest import teams, track  # noqa: F401  (fixtures)
from workbench.access.tokens import token_create


def bearer(user) -> dict:
    """Headers that send a new token of ``user``."""
    return {"HTTP_AUTHORIZATION": f"Bearer {token_create(user=user, name='test')[1]}"}


@pytest.fixture
def researcher(db) -> User:
    user = User.objects.create_user("rhea", password="pw-researcher-1")
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    return user

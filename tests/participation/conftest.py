"""A track open for submissions with two teams (one participant each), from the test's own data."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from participation.models import Team, Track
from tests import factories


@pytest.fixture
def track(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    collection = factories.collection_with_topics()
    factories.add_documents(collection, [f"d{i}" for i in range(1, 10)])
    return Track.objects.create(collection=collection, open=True, closes_at=timezone.now() + timedelta(days=2),
                                max_runs_per_team=2, pooled_runs_per_team=1, depth=3, require_description=True)


def _participant(name: str) -> User:
    user = User.objects.create_user(name, password=f"pw-{name}-1")
    user.groups.add(Group.objects.get_or_create(name="participants")[0])
    return user


@pytest.fixture
def teams(track):
    red, blue = _participant("rosa"), _participant("bruno")
    team_red = Team.objects.create(track=track, name="red")
    team_red.members.add(red)
    team_blue = Team.objects.create(track=track, name="blue")
    team_blue.members.add(blue)
    return {"red": (team_red, red), "blue": (team_blue, blue)}


def run_upload(tag: str, ranking: dict | None = None, *, name: str | None = None, extra: str = "") -> SimpleUploadedFile:
    ranking = ranking or {"301": ["d1", "d2", "d3"], "302": ["d4", "d5", "d6"], "303": ["d7", "d8", "d9"]}
    return SimpleUploadedFile(name or f"{tag}.run", (factories.run_lines(tag, ranking) + extra).encode())


def submit(client, track, upload, **fields):
    data = {"file": upload, "run_type": "automatic", "fields_used": ["title"], "description": "BM25, k1=0.9",
            "priority": "1", **fields}
    return client.post(f"/participate/{track.collection.slug}/", data)

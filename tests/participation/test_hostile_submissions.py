"""A participant's hostile run file is refused in one line on the receipt and stores nothing: a YAML alias
bomb in the ir_metadata header (374 bytes that expanded to 58 MB of JSON before)."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from participation.models import Submission
from tests.participation.conftest import submit
from tests.test_hostile_files import ALIAS_BOMB
from workbench.collections import files as store
from workbench.models import Run

pytestmark = pytest.mark.django_db


def test_an_alias_bomb_header_is_refused_in_one_line_and_nothing_is_stored(client, track, teams):
    client.force_login(teams["red"][1])
    response = submit(client, track, SimpleUploadedFile("bomb.run", ALIAS_BOMB.encode()))
    assert response.status_code == 302
    submission = Submission.objects.get()
    assert submission.status == "refused" and submission.metadata == {}
    assert submission.problems == ["bomb.run:2: the ir_metadata header uses a YAML alias (*name), which is not "
                                   "accepted: write the value out"]
    assert not Run.objects.exists() and not store.exists(submission.stored)
    receipt = client.get(response["Location"]).content.decode()
    assert "uses a YAML alias" in receipt and len(receipt) < 100_000

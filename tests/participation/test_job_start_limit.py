"""Nobody can flood the workers: one person may start ``JOB_STARTS_PER_MINUTE`` jobs a minute (uploads,
submissions, evaluations, bundles); one more answers 429 with a page saying when to try again, and starts
nothing. The portal refuses a file over ``PORTAL_MAX_UPLOAD_MB`` or over the team's storage quota
(``TEAM_STORAGE_QUOTA_MB``), keeping nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from participation.models import Submission
from tests.participation.conftest import run_upload, submit
from workbench.models import Job

pytestmark = pytest.mark.django_db

TOPICS = b"301\tfirst\n302\tsecond\n"


def _upload_topics(client, slug: str, n: int):
    return client.post(reverse("workbench:upload", args=[slug]),
                       {"kind": "topics", "topics-files": [SimpleUploadedFile(f"t{n}.tsv", TOPICS)], "topics-replace": "on"})


def test_an_organizer_starting_a_third_job_in_a_minute_gets_a_429_page(client, organizer, collection, settings):
    settings.JOB_STARTS_PER_MINUTE = 2
    client.force_login(organizer)
    assert [_upload_topics(client, collection.slug, n).status_code for n in range(2)] == [302, 302]
    refused = _upload_topics(client, collection.slug, 3)
    page = refused.content.decode()
    assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 61
    assert "you started 2 jobs in the last minute, the most one person may start is 2 a minute" in page
    assert "try again in" in page and Job.objects.count() == 2


def test_a_participant_over_the_job_limit_gets_a_429_page_and_nothing_is_kept(client, track, teams, settings):
    settings.JOB_STARTS_PER_MINUTE = 1
    client.force_login(teams["red"][1])
    assert submit(client, track, run_upload("red-a")).status_code == 302
    refused = submit(client, track, run_upload("red-b"))
    assert refused.status_code == 429 and "the most one person may start is 1 a minute" in refused.content.decode()
    assert Submission.objects.count() == 1
    kept = list((Path(settings.VAR_DIR) / "submissions").rglob("red-b.run"))
    assert kept == []


def test_the_portal_refuses_a_file_over_its_largest_upload_or_the_team_quota(client, track, teams, settings):
    client.force_login(teams["red"][1])
    settings.PORTAL_MAX_UPLOAD_MB = 1
    big = SimpleUploadedFile("big.run", b"301 Q0 d1 1 1.0 red-big\n" * 50_000)  # 1.2 MB
    refused = submit(client, track, big)
    assert refused.status_code == 400
    assert "the file holds 1.1 MB, more than 1.0 MB, the largest run file the portal takes" in refused.content.decode()
    settings.PORTAL_MAX_UPLOAD_MB, settings.TEAM_STORAGE_QUOTA_MB = 1024, 1
    assert submit(client, track, run_upload("red-a")).status_code == 302
    big.seek(0)
    over = submit(client, track, SimpleUploadedFile("big.run", big.read()))
    assert over.status_code == 400 and "of its 1.0 MB quota, too little for this 1.1 MB file" in over.content.decode()
    assert Submission.objects.count() == 1


def test_the_forms_state_the_limits(client, track, teams, organizer):
    client.force_login(teams["red"][1])
    portal = client.get(f"/participate/{track.collection.slug}/").content.decode()
    assert "At most 1,024 MB to upload" in portal and "At most 2 GB once decompressed" in portal
    assert "expand at most 100 times" in portal
    client.force_login(organizer)
    console = client.get(reverse("workbench:upload", args=[track.collection.slug])).content.decode()
    assert "one document at most 16 MB" in console and "At most 512 MB once decompressed" in console

"""The machine-judge form shows the chosen judge's fields only: its endpoint and model (a judge that needs the
network) and its declared options, grouped under the judges that read them; JavaScript hides the other groups
(tests/browser/test_machine_form_browser.py), and without it every group shows under its judges' labels."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.judging.machine_fixtures import machine_collection


@pytest.fixture
def setup(assessor):
    return machine_collection(assessor=assessor)


def _groups(html: str) -> dict[str, list[str]]:
    """data-judges of each group -> the names of its fields."""
    return {judges: re.findall(r' name="([a-z_]+)"', body) for judges, body in
            re.findall(r'<fieldset class="judge-options" data-judges="([^"]*)">(.*?)</fieldset>', html, re.S)}


def test_the_fields_beyond_name_judge_and_pool_are_grouped_by_the_judges_that_read_them(client, setup, organizer):
    collection, _ = setup
    client.force_login(organizer)
    html = client.get(reverse("judging:machine", args=[collection.slug])).content.decode()
    assert _groups(html) == {"openai": ["endpoint", "model", "samples", "concurrency", "timeout", "retries",
                                        "backoff", "max_wait", "template"]}
    assert '<legend>OpenAI-compatible chat endpoint</legend>' in html
    before = html.split('<fieldset class="judge-options"')[0]
    assert all(f'name="{name}"' in before for name in ("name", "kind", "pool"))  # every judge's fields first

"""The machine-judge form in the browser: only the chosen judge's fields show (the openai judge's endpoint, model
and options are hidden while the embedding judge is chosen)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.urls import reverse
from playwright.sync_api import expect

from tests.browser.conftest import log_in
from tests.judging.machine_fixtures import machine_collection

pytestmark = pytest.mark.browser


def test_in_the_browser_only_the_chosen_judges_fields_show(page, live_server, transactional_db):
    olga = User.objects.create_user("olga", password="organise-it")
    olga.groups.add(Group.objects.get_or_create(name="organizers")[0])
    collection, _ = machine_collection(assessor=User.objects.create_user("ada", password="judge-me"))
    log_in(page, live_server, "olga", "organise-it")
    page.goto(f"{live_server.url}{reverse('judging:machine', args=[collection.slug])}")
    openai = page.locator('fieldset[data-judges="openai"]')
    expect(openai).to_be_hidden()  # embedding, the default, reads none of them
    page.select_option("select[name=kind]", "openai")
    expect(openai).to_be_visible()
    expect(page.get_by_label("Endpoint (openai)")).to_be_visible()
    page.select_option("select[name=kind]", "embedding")
    expect(openai).to_be_hidden()

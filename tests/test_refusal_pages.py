"""Refusals a person reads: the 403 and 404 pages carry the site's navigation, the reason and where to go,
never a bare "403 Forbidden"; someone on no team of a track is told so."""

from __future__ import annotations

import pytest

from participation.models import Track
from tests import factories

pytestmark = pytest.mark.django_db


def test_a_403_says_why_and_where_to_go(client, assessor):
    factories.collection_with_topics("robust")
    client.force_login(assessor)
    response = client.get("/collections/robust/budget/")
    page = response.content.decode()
    assert response.status_code == 403 and "403 Forbidden" not in page
    assert "You may not see this collection&#x27;s results." in page  # the PermissionDenied message
    assert 'aria-label="Main"' in page and '<a href="/">Collections</a>' in page and "Log out" in page
    assert "signed in as arthur" in page


def test_a_404_says_what_was_not_found(client, assessor):
    client.force_login(assessor)
    response = client.get("/collections/nothing-here/results/")
    page = response.content.decode()
    assert response.status_code == 404 and "Not Found" not in page.split("<main>")[1]
    assert '<a href="/">Collections</a>' in page and "The collections you may open" in page
    unknown = client.get("/no/such/address/").content.decode()
    assert "No page has the address <code>/no/such/address/</code>" in unknown


def test_an_organizer_on_no_team_is_told_so_and_sent_to_the_console(client, organizer, assessor):
    Track.objects.create(collection=factories.collection_with_topics("robust"), open=True)
    client.force_login(organizer)
    response = client.get("/participate/robust/")
    page = response.content.decode()
    assert response.status_code == 404 and "You are not in a team of this track." in page
    assert 'href="/console/robust/participation/"' in page
    client.force_login(assessor)  # not an organizer: sent to their own tracks
    page = client.get("/participate/robust/").content.decode()
    assert "You are not in a team of this track." in page and "/console/" not in page

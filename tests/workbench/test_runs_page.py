"""The console's runs page: every run with its team, contribution, priority and type, changed for many
runs at once; organizers only."""

from __future__ import annotations

import pytest
from django.urls import reverse

from workbench.collections.services import collection_create
from workbench.models import Run


@pytest.fixture
def track(db):
    collection = collection_create(slug="track", name="Track")
    Run.objects.bulk_create(Run(collection=collection, tag=f"run{i:03d}", team="", pool_priority=1)
                            for i in range(150))
    return collection


@pytest.fixture
def org_client(client, organizer):
    client.force_login(organizer)
    return client


URL = reverse("workbench:runs", args=["track"])


def _ids(collection, *tags):
    return [str(pk) for pk in collection.runs.filter(tag__in=tags).values_list("pk", flat=True)]


def test_the_console_links_the_runs_page_which_lists_every_run_page_by_page(org_client, track):
    console = org_client.get(reverse("workbench:console", args=["track"])).content.decode()
    assert f'href="{URL}"' in console
    first = org_client.get(URL).content.decode()
    assert "150 runs of 0 teams" in first and "run000" in first and "run099" in first and "run100" not in first
    assert 'name="runs" value=' in first and 'form="runs-bulk"' in first and 'aria-label="Select run run000"' in first
    second = org_client.get(URL + "?r-page=2").content.decode()
    assert "run149" in second and "run000" not in second


def test_the_ticked_runs_get_a_team_a_priority_and_stop_contributing(org_client, track):
    response = org_client.post(URL, {"scope": "selected", "runs": _ids(track, "run001", "run002"), "team": "uni-a",
                                     "contributes": "no", "pool_priority": "2", "run_type": "Manual"}, follow=True)
    assert "2 runs updated." in response.content.decode()
    changed = track.runs.filter(team="uni-a")
    assert sorted(changed.values_list("tag", "contributes", "pool_priority", "run_type")) == [
        ("run001", False, 2, "manual"), ("run002", False, 2, "manual")]
    assert track.runs.filter(contributes=True).count() == 148


def test_empty_fields_leave_what_the_runs_have_and_every_run_may_be_changed_at_once(org_client, track):
    track.runs.filter(tag="run003").update(team="uni-c")
    response = org_client.post(URL, {"scope": "all", "pool_priority": "3"}, follow=True)
    assert "150 runs updated." in response.content.decode()
    assert set(track.runs.values_list("pool_priority", flat=True)) == {3}
    assert track.runs.get(tag="run003").team == "uni-c" and track.runs.filter(team="").count() == 149


def test_nothing_to_set_or_nothing_ticked_or_a_foreign_run_is_refused_with_a_reason(org_client, track):
    response = org_client.post(URL, {"scope": "selected", "runs": _ids(track, "run001")})
    assert response.status_code == 400 and "Give a team, a contribution, a priority or a type" in response.content.decode()
    response = org_client.post(URL, {"scope": "selected", "team": "x"})
    assert response.status_code == 400 and "Tick the runs to change" in response.content.decode()
    other = collection_create(slug="other", name="Other")
    foreign = Run.objects.create(collection=other, tag="theirs")
    response = org_client.post(URL, {"scope": "selected", "runs": [str(foreign.pk)], "team": "x"})
    assert response.status_code == 400 and "is not a run of this collection" in response.content.decode()
    response = org_client.post(URL, {"scope": "selected", "runs": ["nonsense"], "team": "x", "pool_priority": "0"})
    assert response.status_code == 400
    response = org_client.post(URL, {"scope": "all", "run_type": "two words"})
    assert response.status_code == 400 and "One word, e.g. automatic or manual." in response.content.decode()
    foreign.refresh_from_db()
    assert foreign.team == "" and not track.runs.exclude(team="").exists()


@pytest.mark.parametrize("who", ["assessor", "outsider"])
def test_only_organizers_see_or_change_the_runs(client, track, request, who):
    client.force_login(request.getfixturevalue(who))
    assert client.get(URL).status_code == 403
    assert client.post(URL, {"scope": "all", "team": "x"}).status_code == 403
    assert not track.runs.exclude(team="").exists()


def test_a_visitor_who_is_not_logged_in_is_sent_to_log_in(client, track):
    response = client.get(URL)
    assert response.status_code == 302 and "login" in response["Location"]

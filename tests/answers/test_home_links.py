"""The home page leads to the answer tasks (workbench.home_sections, declared in answers/home.py): an assessor
given answer tasks sees a link per kind with its number of topics, and the link opens their tasks; an assessor
without answer tasks sees none; an organizer sees the answer pages of the collections they organize, and not
those of another organizer's collection."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Group, User

from tests.answers.judging_fixtures import answer_track


@pytest.fixture
def track(assessor):
    return answer_track(assessor)


def _links(html: str) -> dict[str, str]:
    section = re.search(r'<section class="task-sections".*?</section>', html, re.S)
    if section is None:
        return {}
    return {re.sub(r"\s+", " ", text).strip(): href
            for href, text in re.findall(r'<li><a href="([^"]+)">(.*?)</a>', section.group(0), re.S)}


def test_an_assessor_with_answer_tasks_sees_them_with_counts_on_the_home_page(client, assessor, track):
    collection = track[0]
    client.force_login(assessor)
    home = client.get("/", follow=True)  # an assessor's home is their judging queue
    assert home.status_code == 200
    html = home.content.decode()
    links = _links(html)
    assert links == {f"Nugget assignment · {collection.name}": "/answers/rag/judge/",
                     f"Citation support · {collection.name}": "/answers/rag/judge/"}
    assert html.count("1 topic<") == 2
    tasks = client.get(links[f"Nugget assignment · {collection.name}"])
    assert tasks.status_code == 200
    assert "/answers/rag/judge/301/nuggets/" in tasks.content.decode()
    assert "secret-run" not in html + tasks.content.decode()  # blind to systems


def test_an_assessor_without_answer_tasks_sees_no_answer_link(client, track):
    other = User.objects.create_user("bea", password="pw")
    other.groups.add(Group.objects.get_or_create(name="assessors")[0])
    client.force_login(other)
    html = client.get("/", follow=True).content.decode()
    assert "You have no assignments yet" in html
    assert _links(html) == {}
    assert "/answers/" not in html


def test_an_organizer_sees_the_answer_pages_of_the_collections_they_organize(client, organizer, track):
    collection = track[0]
    client.force_login(organizer)
    html = client.get("/").content.decode()
    links = _links(html)
    assert links == {f"Nugget assessors · {collection.name}": "/answers/rag/nugget-assessors/",
                     f"Answer leaderboard · {collection.name}": "/answers/rag/leaderboard/"}
    assert "2 answer tasks" in html and "2 answer runs" in html
    assert client.get(links[f"Nugget assessors · {collection.name}"]).status_code == 200
    assert client.get(links[f"Answer leaderboard · {collection.name}"]).status_code == 200

    # another organizer's collection: its answer pages are not listed
    someone = User.objects.create_user("otto", password="pw")
    collection.organizers.add(someone)
    someone.groups.add(Group.objects.get(name="organizers"))
    assert _links(client.get("/").content.decode()) == {}

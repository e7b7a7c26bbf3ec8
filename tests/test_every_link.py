"""Every link a user is shown leads somewhere, and only there: on the demo (``make demo``'s collection, a track
whose results are released, shared with researchers), each of its users follows every link of every
page it can reach from the home page, as a person clicking around would. No page answers 500, 404 or 403 (a link
the page offers but refuses), and the organizer's pages that are not another role's are refused to it."""

from __future__ import annotations

import re
from collections import Counter, deque
from html.parser import HTMLParser
from urllib.parse import urldefrag, urlsplit

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client

from workbench.demo.install import demo_build

#: pages a crawl follows at most per role, and per shape of address (digits read as one): a queue of 300
#: documents is one page 300 times over
LIMIT, PER_SHAPE = 700, 3
#: never followed: logging out ends the crawl's session; the admin is Django's own; the files are downloads
SKIP = re.compile(r"^/(accounts/logout|logout|admin/|static/|media/)")


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.found.append(href)


def _links(html: str, here: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    out = []
    for href in parser.found:
        href, _ = urldefrag(href)
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or not href or href.startswith(("mailto:", "javascript:")):
            continue
        if not href.startswith("/"):
            href = here.rsplit("/", 1)[0] + "/" + href if not href.startswith("?") else here.split("?")[0] + href
        out.append(href)
    return out


def _shape(path: str) -> str:
    return re.sub(r"\d+", "N", urlsplit(path).path) + ("?" + "&".join(sorted(
        p.split("=")[0] for p in urlsplit(path).query.split("&"))) if urlsplit(path).query else "")


def crawl(client: Client, start: str = "/") -> tuple[dict[str, int], dict[str, str]]:
    """Status by address of every page reached, and where each was linked from."""
    seen: dict[str, int] = {}
    source: dict[str, str] = {start: "(start)"}
    shapes: Counter = Counter()
    queue = deque([start])
    while queue and len(seen) < LIMIT:
        path = queue.popleft()
        response = client.get(path, follow=True)
        seen[path] = response.status_code
        if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
            continue
        here = response.redirect_chain[-1][0] if response.redirect_chain else path
        for link in _links(response.content.decode(errors="replace"), here):
            if link in source or SKIP.match(link):
                continue
            shape = _shape(link)
            if shapes[shape] >= PER_SHAPE:
                continue
            shapes[shape] += 1
            source[link] = path
            queue.append(link)
    return seen, source


@pytest.fixture
def demo(db):
    demo_build()  # with its track (results released), its participant and its researcher


def _client(username: str | None, *, raise_request_exception: bool = True) -> Client:
    client = Client(raise_request_exception=raise_request_exception)
    if username is not None:
        client.force_login(User.objects.get(username=username))
    return client


def _broken(seen: dict, source: dict) -> dict:
    return {path: (status, f"linked from {source[path]}") for path, status in seen.items()
            if status >= 500 or status in (403, 404)}


#: the organizer's own pages: the console, the judging's organization, the jobs, the people
ORGANIZERS_ONLY = re.compile(r"^/(console/|judge/organize/|jobs/)")
#: what each other role reaches from its home page at least, and which of the organizer's pages it may open
ROLES = {"assessor": ("/judge/item/", None), "participant": ("/participate/demo/results/", None),
         "researcher": ("/collections/demo/leaderboard/", re.compile(r"^/(collections/)")), None: (None, None)}


def _refused(response) -> bool:
    return response.status_code in (403, 404) or (
        response.status_code == 302 and response["Location"].startswith("/accounts/login/"))


def test_every_link_opens_for_each_role_and_the_organizers_pages_are_refused_to_the_others(demo):
    organizer, source = crawl(_client("organizer"))
    assert not _broken(organizer, source)
    assert len(organizer) > 200 and {"/console/demo/pools/", "/collections/demo/curves/",
                                     "/judge/organize/demo/agreement/"} <= set(organizer)
    one_per_shape = {_shape(path): path for path in organizer}.values()
    for username, (reached, allowed) in ROLES.items():
        seen, source = crawl(_client(username))
        assert not _broken(seen, source), username
        assert reached is None or any(path.startswith(reached) for path in seen), (username, sorted(seen))
        client = _client(username)
        shown = [p for p in one_per_shape if p not in seen and p != "/" and not (allowed and allowed.match(p))
                 and (username is None or ORGANIZERS_ONLY.match(p) or not allowed)]
        opened = [p for p in shown if not _refused(client.get(p))]
        assert not opened, f"{username or 'anonymous'} opened the organizer's {opened}"
        assert len(shown) > 30, (username, shown)


def test_a_researcher_with_no_collection_shared_is_told_how_one_is(db):
    rita = User.objects.create_user("rita", password="pw-rita")
    rita.groups.add(Group.objects.get_or_create(name="researchers")[0])
    response = _client("rita").get("/")
    assert response.status_code == 200
    assert "No collection shares its results with researchers yet" in response.content.decode()


def test_the_site_has_an_icon(db, client):
    """Every page names its icon, and /favicon.ico (which browsers and tools ask for anyway) leads to it: no
    404 in the browser's console on every visit."""
    page = client.get("/accounts/login/").content.decode()
    icon = re.search(r'<link rel="icon" href="([^"]+)"', page).group(1)
    assert client.get("/favicon.ico")["Location"] == icon
    response = client.get(icon)
    assert response.status_code == 200 and b"<svg" in b"".join(response.streaming_content)

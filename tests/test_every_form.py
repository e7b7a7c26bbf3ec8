"""Nothing a user types answers 500: on the demo, each of its users sends every form of every page it can reach
(one page per shape of address, :mod:`tests.test_every_link`'s crawl) as the page gives it, then with each kind
of bad input a person or a script could type in every field at once: empty, far too long, not a number, a
negative or huge number, a NUL character, markup, an option that is not offered, a file that is not what the
field asks for. Every answer is a page (a form saying what is wrong, or a redirect), never a server error."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from tests.test_every_link import SKIP, _client, _shape, crawl
from workbench.demo.install import demo_build

#: what every text-like field gets in one pass, and what numbers and choices get
BAD = [
    {"text": "", "number": "", "choice": ""},
    {"text": "x" * 5000, "number": "1" * 40, "choice": "zz"},
    {"text": "a\x00b", "number": "-1", "choice": "\x00"},
    {"text": "<script>alert(1)</script> ' \" ; -- %s {0}", "number": "nan", "choice": "-1"},
    {"text": "٣ ünïcödé 𝔘 \u202e", "number": "1e309", "choice": "999999999"},
]
#: forms that end the session or whose answer is a download
LEFT_OUT = ("/accounts/logout/", "/logout/")


class _Forms(HTMLParser):
    """Every form of a page with method post: its action and fields (name, kind, value, options)."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []
        self._select = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"method": (a.get("method") or "get").lower(), "action": a.get("action"),
                               "fields": []})
        elif not self.forms or "name" not in a and tag != "option":
            return
        elif tag == "input":
            kind = (a.get("type") or "text").lower()
            if kind in ("submit", "button", "image", "reset"):
                return
            if kind in ("checkbox", "radio") and "checked" not in a:
                self.forms[-1]["fields"].append({"name": a["name"], "kind": kind, "value": None,
                                                 "on": a.get("value", "on")})
                return
            self.forms[-1]["fields"].append({"name": a["name"], "kind": kind, "value": a.get("value", ""),
                                             "on": a.get("value", "on")})
        elif tag == "textarea":
            self.forms[-1]["fields"].append({"name": a["name"], "kind": "text", "value": ""})
        elif tag == "select":
            self._select = {"name": a["name"], "kind": "select", "value": None, "options": []}
            self.forms[-1]["fields"].append(self._select)
        elif tag == "option" and self._select is not None:
            self._select["options"].append(a.get("value", ""))
            if "selected" in a or self._select["value"] is None:
                self._select["value"] = a.get("value", "")

    def handle_endtag(self, tag):
        if tag == "select":
            self._select = None


def _as_given(fields: list[dict]) -> dict:
    data: dict = {}
    for f in fields:
        if f["kind"] == "file" or f["value"] is None:
            continue
        data.setdefault(f["name"], []).append(f["value"])
    return data


def _bad(fields: list[dict], bad: dict) -> dict:
    data: dict = {}
    for f in fields:
        name, kind = f["name"], f["kind"]
        if name == "csrfmiddlewaretoken":
            continue
        if kind == "file":
            value = SimpleUploadedFile("bad.txt", b"\x00\xffnot what this field asks for\n" * 10)
        elif kind in ("checkbox", "radio"):
            value = f["on"]
        elif kind == "select":
            value = bad["choice"]
        elif kind in ("number", "range") or name.endswith(("_id", "depth", "priority", "size", "budget", "id")):
            value = bad["number"]
        else:
            value = bad["text"]
        data.setdefault(name, []).append(value)
    return data


def _forms_of(client: Client, path: str) -> list[tuple[str, list[dict]]]:
    response = client.get(path)
    if response.status_code != 200 or "html" not in response.get("Content-Type", ""):
        return []
    parser = _Forms()
    parser.feed(response.content.decode(errors="replace"))
    return [(form["action"] or path, form["fields"]) for form in parser.forms if form["method"] == "post"
            and not (form["action"] or "").startswith(LEFT_OUT)]


@pytest.fixture
def demo(db, settings):
    demo_build()
    # the jobs a form starts are queued, not run: what is tested is the request (the jobs have tests of their own)
    settings.TASKS = {"default": {"BACKEND": "django_tasks.backends.dummy.DummyBackend"}}


@pytest.mark.parametrize("username", ["organizer", "assessor", "participant", "researcher"])
def test_no_form_answers_500_to_what_a_user_can_type(demo, username):
    client = _client(username, raise_request_exception=False)
    seen, _ = crawl(client)
    pages = {_shape(p): p for p, status in seen.items() if status == 200 and not SKIP.match(p)}.values()
    failures, sent = [], 0
    for page in pages:
        for action, fields in _forms_of(client, page):
            for data in [_as_given(fields), *(_bad(fields, bad) for bad in BAD)]:
                response = client.post(action, data)
                sent += 1
                if response.status_code >= 500:
                    failures.append((page, action, {k: str(v)[:40] for k, v in data.items()}, response.status_code))
    assert not failures, failures
    assert sent > 5, sent


#: what each query parameter gets in turn: a NUL, markup and a foreign digit in one value, and a number far too large
BAD_QUERY = ("a\x00<b>٣'", "9" * 30)


@pytest.mark.parametrize("username", ["organizer", "researcher"])
def test_no_address_answers_500_to_what_a_user_can_type_in_its_query(demo, username):
    """The same for the query of every address (a sort, a measure, a page, a topic): for each path, every
    parameter its links use, and a page and an unknown parameter, each given each bad value in turn; and the
    path itself with a NUL at its end."""
    from urllib.parse import parse_qsl, urlencode, urlsplit

    client = _client(username, raise_request_exception=False)
    seen, _ = crawl(client)
    keys: dict[str, dict] = {}
    for page, status in seen.items():
        if status == 200 and not SKIP.match(page):
            parts = urlsplit(page)
            keys.setdefault(parts.path, {"page": "1", "zz": "1"}).update(parse_qsl(parts.query, keep_blank_values=True))
    failures, sent = [], 0
    for path, query in keys.items():
        mangled = path.rstrip("/") + "%00" + ("/" if path.endswith("/") else "")  # a run's tag, a topic's id
        if client.get(mangled).status_code >= 500:
            failures.append((mangled, "path", "%00", 500))
        for key in query:
            for bad in BAD_QUERY:
                response = client.get(f"{path}?{urlencode({**query, key: bad})}")
                sent += 1
                if response.status_code >= 500:
                    failures.append((path, key, bad[:30], response.status_code))
    assert not failures, failures
    assert sent > 50, sent


def test_a_nul_in_an_address_is_refused_with_a_page_naming_the_parameter(db, client, organizer):
    """PostgreSQL refuses a NUL in any text: a filter given one answered 500 (the pool table's name filter, the
    qrels download's assessor), and so did a run's or a topic's page, before every address was checked for it."""
    client.force_login(organizer)
    response = client.get("/console/jobs/?j-sort=kind&assessor=a%00b")
    assert response.status_code == 400
    page = response.content.decode()
    assert "Its parameter assessor holds a NUL character" in page and 'href="/console/jobs/"' in page
    assert client.get("/console/jobs/?j-sort=kind").status_code == 200
    # a run or a topic looked up by a path holding one
    for path in ("/collections/demo/runs/a%00b/", "/collections/demo/topics/3%00/"):
        response = client.get(path)
        assert response.status_code == 400 and "Its path holds a NUL character" in response.content.decode()

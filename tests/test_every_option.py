"""A name offered anywhere is a name that works: every option the pages offer, read from their HTML, opens.

- the significance page's and the leaderboard's test, correction, qrels and topics menus: each answers 200;
- the downloads page's qrels policies (links, and the release and evaluation forms): each answers a file or
  starts a job that finishes, never 500;
- the pool form's strategies: each previews (200) or says what is missing (400), never 500;
- every file format the upload page documents, for topics, documents, runs and qrels: a tiny file in that
  format uploads through the page and its import job finishes;
- every other menu of every results page: each option answers 200;
- the README's upload step names exactly the formats the readers accept;
- a name that is offered nowhere is refused with a 400 page naming the names that exist.
"""

from __future__ import annotations

import gzip
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evaluation.engine.significance import CORRECTION_CHOICES, TEST_CHOICES
from judging.policies import MACHINE_POLICIES, POLICIES
from tests.evaluation.tracks import QRELS as TRACK_QRELS
from tests.evaluation.tracks import build_track
from workbench.formats.catalog import FILE_FORMATS
from workbench.models import Job


class _Page(HTMLParser):
    """The forms of a page (action, method, each select's option values, the other fields' values),
    the links, and the text of every ``p.muted``."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict] = []
        self.links: list[str] = []
        self.muted: list[str] = []
        self._form = self._select = self._select_name = None
        self._muted_depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self._form = {"action": a.get("action", ""), "method": a.get("method", "get").lower(), "id": a.get("id"),
                          "selects": {}, "fields": {}}
            self.forms.append(self._form)
        elif tag == "select" and self._form is not None:
            self._select = self._form["selects"].setdefault(a.get("name"), [])
            self._select_name = a.get("name")
        elif tag == "option" and self._select is not None:
            self._select.append(a.get("value"))
            if "selected" in a or self._select_name not in self._form["fields"]:  # what the form would send
                self._form["fields"][self._select_name] = a.get("value")
        elif tag == "input" and self._form is not None and a.get("name"):
            if a.get("type") not in ("checkbox", "file") or "checked" in a:
                self._form["fields"][a["name"]] = a.get("value") or ("on" if a.get("type") == "checkbox" else "")
        elif tag == "a" and a.get("href"):
            self.links.append(a["href"])
        elif tag == "p" and "muted" in (a.get("class") or ""):
            self._muted_depth = 1
            self.muted.append("")

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "select":
            self._select = None
        elif tag == "p":
            self._muted_depth = 0

    def handle_data(self, data):
        if self._muted_depth:
            self.muted[-1] += data


def page(client, url: str) -> _Page:
    response = client.get(url)
    assert response.status_code == 200, url
    parsed = _Page()
    parsed.feed(response.content.decode())
    return parsed


def menu(parsed: _Page, name: str) -> list[str]:
    values = [v for form in parsed.forms for v in form["selects"].get(name, [])]
    assert values, f"no <select name={name!r}> on the page"
    return values


@pytest.fixture
def track(db, tmp_path, client, organizer):
    client.force_login(organizer)
    return build_track(tmp_path)


def test_every_test_and_correction_the_significance_page_offers_answers_200(client, track):
    offered = page(client, "/collections/robust/significance/")
    tests, corrections = menu(offered, "test"), menu(offered, "correction")
    assert "bh" in corrections  # the 500
    for test in tests:
        for correction in corrections:
            url = f"/collections/robust/significance/?measure=map&test={test}&correction={correction}"
            response = client.get(url)
            assert response.status_code == 200, url
            text = response.content.decode()
            assert (f"pairs differ significantly on map (adjusted p &lt; 0.05; {TEST_CHOICES.label(test)} test, "
                    f"{CORRECTION_CHOICES.label(correction)} correction)") in text


@pytest.fixture
def partly_judged_track(db, tmp_path, client, organizer):
    """The track with one pooled document (302 g) unjudged: the leaderboard then offers a topics menu too."""
    client.force_login(organizer)
    return build_track(tmp_path, qrels={k: v for k, v in TRACK_QRELS.items() if k != ("302", "g")})


@pytest.mark.parametrize("fixture", ["track", "partly_judged_track"])
def test_every_choice_the_leaderboard_offers_answers_200(db, client, organizer, request, fixture):
    request.getfixturevalue(fixture)
    offered = page(client, "/collections/robust/leaderboard/")
    form = next(f for f in offered.forms if "test" in f["selects"])
    assert {"qrels", "test", "correction"} <= set(form["selects"])
    assert ("topics" in form["selects"]) == (fixture == "partly_judged_track")
    for name, values in form["selects"].items():
        for value in values:
            response = client.get("/collections/robust/leaderboard/", {name: value, "topics": "all"}
                                  if name != "topics" else {name: value})
            assert response.status_code == 200, (name, value)
            assert "Group</strong>: runs that share a letter" in response.content.decode()


@pytest.mark.parametrize("page_url", ["leaderboard", "significance", "topics/301", "runs/alpha", "curves"])
@pytest.mark.parametrize("name", ["test", "correction", "qrels", "topics"])
def test_a_name_no_page_offers_is_a_400_naming_the_names_that_exist(client, track, page_url, name):
    response = client.get(f"/collections/robust/{page_url}/", {name: "fdr-ish"})
    assert response.status_code == 400
    text = response.content.decode()
    assert "unknown" in text and "fdr-ish" in text
    expected = {"test": TEST_CHOICES.names, "correction": CORRECTION_CHOICES.names, "qrels": POLICIES.names,
                "topics": ("complete", "all")}[name]
    assert all(n in text for n in expected)


def test_every_qrels_policy_the_downloads_page_offers_works(client, track):
    offered = page(client, "/collections/robust/downloads/")
    links = [href for href in offered.links if "/downloads/qrels.txt" in href]
    linked = {dict(parse_qsl(urlsplit(h).query)).get("policy") for h in links} - {None}
    # no machine assessor judged here: the policies that read machine judgments are not offered
    assert linked == set(POLICIES.names) - set(MACHINE_POLICIES)
    for href in links:
        response = client.get(href)
        assert response.status_code == 200 and response.content.decode().startswith("301 "), href
    for form in offered.forms:
        for policy in form["selects"].get("policy", []):
            started = client.post(form["action"], {**form["fields"], "policy": policy})
            assert started.status_code == 302 and started["Location"].startswith("/jobs/"), (form["action"], policy)
            job = Job.objects.get(pk=started["Location"].strip("/").split("/")[-1])
            assert job.status == Job.Status.DONE, (form["action"], policy, job.result)
            assert job.params["policy"] == policy


def test_an_unknown_policy_on_a_download_is_a_400_naming_the_policies(client, track):
    response = client.get("/collections/robust/downloads/qrels.txt?policy=consensus")
    assert response.status_code == 400
    assert all(n in response.content.decode() for n in POLICIES.names)
    response = client.post("/collections/robust/downloads/release.zip", {"policy": "consensus"})
    assert response.status_code == 400 and "consensus" in response.content.decode()


def test_every_strategy_the_pool_form_offers_previews_or_says_what_is_missing(client, track):
    offered = page(client, "/console/robust/pools/")
    form = next(f for f in offered.forms if "strategy" in f["selects"])
    assert form["selects"]["strategy"]
    answers = {}
    for name, values in form["selects"].items():  # the strategies, and every other menu of the form
        for value in values:
            data = {**form["fields"], name: value, "name": f"try-{name}", "action": "preview"}
            response = client.post("/console/robust/pools/", data)
            answers[(name, value)] = response.status_code
            assert response.status_code in (200, 400), (name, value)
            if response.status_code == 400:  # a choice that needs more than the defaults names what is missing
                assert 'role="alert"' in response.content.decode(), (name, value)
    assert all(answers[("strategy", s)] == 200 for s in ("depth", "runs_per_team") if ("strategy", s) in answers)


# --- formats: every format documented on the upload page imports --------------------------------------------

TOPICS = {
    "trec": "<top>\n<num> Number: 901\n<title> solar sails\n<desc> Description:\nHow do solar sails work?\n</top>\n",
    "xml": '<topics>\n<topic number="901"><query>solar sails</query></topic>\n</topics>\n',
    "tsv": "901\tsolar sails\n",
    "jsonl": '{"qid": "901", "title": "solar sails"}\n',
}
DOCUMENTS = {
    "trec": "<DOC>\n<DOCNO> s1 </DOCNO>\n<TITLE>Sails</TITLE>\nLight pushes the sail.\n</DOC>\n",
    "jsonl": '{"docno": "s1", "title": "Sails", "text": "Light pushes the sail."}\n',
    "tsv": "s1\tSails\tLight pushes the sail.\ns2\tMasts\tA mast holds it.\n",
}
RUNS = {"trec": "301 Q0 a 1 9.5 sailrun\n301 Q0 b 2 8.5 sailrun\n"}
QRELS = {"trec": "301 0 a 1\n301 0 q 0\n"}
SAMPLES = {"topics": TOPICS, "documents": DOCUMENTS, "runs": RUNS, "qrels": QRELS}


def test_every_documented_format_has_a_sample_here():
    """A format added to a vocabulary without a sample in this file fails here, so it gets one."""
    assert {kind: set(v.names) for kind, v in FILE_FORMATS.items()} == {k: set(v) for k, v in SAMPLES.items()}


def _upload(client, kind: str, filename: str, content: bytes, fields: dict):
    data = {**fields, f"{kind}-files": SimpleUploadedFile(filename, content)}
    return client.post("/console/robust/upload/", data)


@pytest.mark.parametrize("gz", [False, True], ids=["plain", "gz"])
def test_every_format_the_upload_page_documents_is_accepted_by_its_importer(client, track, gz):
    offered = page(client, "/console/robust/upload/")
    forms = {f["fields"].get("kind"): f for f in offered.forms if f["fields"].get("kind")}
    for kind, vocabulary in FILE_FORMATS.items():
        form = forms[kind]
        help_text = " ".join(offered.muted)
        for choice in vocabulary:
            assert choice.label in help_text, f"the upload page does not document {kind} as {choice.label}"
            content = SAMPLES[kind][choice.name].encode()
            name = f"{kind}-{choice.name}.txt" + (".gz" if gz else "")
            fields = {k: v for k, v in form["fields"].items() if k != "csrfmiddlewaretoken"}
            fields[f"{kind}-replace"] = "on"  # each sample replaces the one before it
            response = _upload(client, kind, name, gzip.compress(content) if gz else content, fields)
            assert response.status_code == 302 and response["Location"].startswith("/jobs/"), (kind, choice.name)
            job = Job.objects.get(pk=response["Location"].strip("/").split("/")[-1])
            assert job.status == Job.Status.DONE, (kind, choice.name, job.result)
    assert track.documents.filter(docno="s2", title="Masts", text="A mast holds it.").exists()


@pytest.mark.parametrize("path", ["", "leaderboard/", "significance/", "curves/", "reusability/", "pool/",
                                  "topics/301/", "runs/alpha/"])
def test_every_menu_of_every_results_page_opens_each_of_its_options(client, track, path):
    url = f"/collections/robust/{path}"
    offered = page(client, url)
    for form in (f for f in offered.forms if f["method"] == "get"):
        for name, values in form["selects"].items():
            for value in values:
                response = client.get(form["action"] or url, {name: value})
                assert response.status_code == 200, (url, name, value)


#: how the README names each format in its upload list
README_WORDS = {"SGML": "trec", "XML": "xml", "TSV": "tsv", "JSONL": "jsonl"}


@pytest.mark.parametrize("kind", ["topics", "documents"])
def test_the_readme_documents_exactly_the_formats_the_readers_accept(kind):
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    listed = re.search(rf"\*\*Upload\*\*.*?\b{kind} \(([^)]*)\)", readme, re.DOTALL)
    assert listed, f"README's Upload step lists no {kind} formats"
    named = {README_WORDS[w] for w in re.findall(r"[A-Z]{3,}", listed.group(1)) if w in README_WORDS}
    assert named == set(FILE_FORMATS[kind].names), listed.group(1)


@pytest.mark.parametrize(("command", "kind"), [("import_documents", "documents"), ("import_topics", "topics")])
def test_the_import_commands_help_names_every_format(command, kind):
    from django.core.management import load_command_class

    help_text = load_command_class("workbench", command).help
    assert all(choice.label in help_text for choice in FILE_FORMATS[kind]), help_text

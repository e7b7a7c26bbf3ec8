"""The organizer's console: a collection created and edited from the web, uploads imported by jobs (all or
none, every problem named), pools previewed then built, and documents read with their topic."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from pooling.models import Pool, PoolEntry
from tests import factories
from workbench.models import Collection, Job

pytestmark = pytest.mark.django_db

TOPICS_TSV = "301\tInternational Organized Crime\n302\tPoliomyelitis and Post-Polio\n303\tHubble Telescope\n"


@pytest.fixture(autouse=True)
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    return settings.VAR_DIR


@pytest.fixture
def org_client(client, organizer):
    client.force_login(organizer)
    return client


def _new_collection(client, **overrides):
    data = {"slug": "track", "name": "A track", "description": "", "relevant_from": "1", "max_depth": "1000",
            "guidelines": "# Judge the topic\n\nNot the query.",
            "grade-TOTAL_FORMS": "4", "grade-INITIAL_FORMS": "0", "grade-MIN_NUM_FORMS": "0",
            "grade-MAX_NUM_FORMS": "12",
            "grade-0-grade": "0", "grade-0-label": "Not relevant", "grade-0-description": "Off topic.",
            "grade-1-grade": "1", "grade-1-label": "Relevant", "grade-1-description": "Answers part of it.",
            "grade-2-grade": "2", "grade-2-label": "Highly relevant", "grade-2-description": "Answers it all.",
            "grade-3-grade": "", "grade-3-label": "", "grade-3-description": ""}
    data.update(overrides)
    return client.post(reverse("workbench:collection_new"), data)


def test_an_organizer_creates_a_graded_collection_with_guidelines(org_client):
    response = _new_collection(org_client)
    assert response.status_code == 302 and response["Location"] == reverse("workbench:console", args=["track"])
    collection = Collection.objects.get(slug="track")
    assert collection.grade_labels == {0: "Not relevant", 1: "Relevant", 2: "Highly relevant"}
    assert collection.grade_descriptions[2] == "Answers it all."
    assert collection.relevant_from == 1
    page = org_client.get(reverse("workbench:console", args=["track"])).content.decode()
    assert "<h1>Judge the topic</h1>" in page and "Highly relevant" in page


@pytest.mark.parametrize(("overrides", "message"), [
    ({"grade-1-grade": "0"}, "Grades must be distinct"),
    ({"relevant_from": "7"}, "Must be one of the scale"),
    ({"slug": "Bad Slug!"}, "lowercase letters"),
    ({"grade-1-grade": "", "grade-1-label": "", "grade-1-description": "", "grade-2-grade": "", "grade-2-label": "",
      "grade-2-description": ""}, "at least two grades"),
    ({"grade-2-label": ""}, "This field is required"),
    ({"grade-1-gain": "0.6", "grade-2-gain": "0.5"}, "Gains must increase from one grade to the next"),
    ({"grade-1-gain": "-1"}, "greater than or equal to 0"),
    ({"grade-1-gain": "lots"}, "Enter a number"),
])
def test_a_wrong_collection_form_says_what_is_wrong_and_creates_nothing(org_client, overrides, message):
    response = _new_collection(org_client, **overrides)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Collection.objects.exists()


def test_gains_per_grade_are_kept_with_the_scale(org_client):
    response = _new_collection(org_client, **{"grade-1-gain": "0.6", "grade-2-gain": "1"})
    assert response.status_code == 302
    collection = Collection.objects.get(slug="track")
    assert collection.grade_gains == {0: 0.0, 1: 0.6, 2: 1.0}
    edit = org_client.get(reverse("workbench:collection_edit", args=["track"])).content.decode()
    assert 'name="grade-1-gain" value="0.6"' in edit
    assert Collection(scale=[{"grade": 0, "label": "No"}, {"grade": 1, "label": "Yes"}]).grade_gains is None


def test_a_second_collection_with_the_same_slug_is_refused(org_client):
    _new_collection(org_client)
    response = _new_collection(org_client, name="Other")
    assert response.status_code == 400 and "exists" in response.content.decode()
    assert Collection.objects.get(slug="track").name == "A track"


def test_editing_keeps_the_slug_and_changes_the_scale(org_client):
    _new_collection(org_client)
    collection = Collection.objects.get(slug="track")
    data = {"slug": "renamed", "name": "Renamed", "description": "d", "relevant_from": "2", "max_depth": "100",
            "guidelines": "", "grade-TOTAL_FORMS": "3", "grade-INITIAL_FORMS": "3", "grade-MIN_NUM_FORMS": "0",
            "grade-MAX_NUM_FORMS": "12"}
    for i, item in enumerate(collection.scale):
        data.update({f"grade-{i}-grade": item["grade"], f"grade-{i}-label": item["label"],
                     f"grade-{i}-description": item["description"]})
    data["grade-0-DELETE"] = ""
    response = org_client.post(reverse("workbench:collection_edit", args=["track"]), data)
    assert response.status_code == 302
    collection.refresh_from_db()
    assert (collection.slug, collection.name, collection.relevant_from, collection.max_depth) == (
        "track", "Renamed", 2, 100)


def _upload(client, slug, kind, files, **options):
    data = {"kind": kind, f"{kind}-files": files, **{f"{kind}-{k}": v for k, v in options.items()}}
    return client.post(reverse("workbench:upload", args=[slug]), data)


def _job(response) -> Job:
    assert response.status_code == 302, response.content[:500]
    return Job.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))


def test_topics_documents_runs_and_qrels_are_uploaded_as_jobs(org_client):
    _new_collection(org_client)
    job = _job(_upload(org_client, "track", "topics", [SimpleUploadedFile("topics.tsv", TOPICS_TSV.encode())]))
    assert job.status == "done" and job.result["lines"] == ["topics.tsv: 3 topics added"]
    docs = "".join(f"<DOC>\n<DOCNO>d{i}</DOCNO>\n<TEXT>text {i}</TEXT>\n</DOC>\n" for i in range(1, 10))
    job = _job(_upload(org_client, "track", "documents", [SimpleUploadedFile("a.sgml", docs.encode())]))
    assert job.status == "done", job.error
    alpha = factories.run_lines("alpha", {"301": ["d1", "d2", "d3"], "302": ["d4", "d5"]})
    beta = factories.run_lines("beta", {"301": ["d3", "d7"], "302": ["d5", "d8", "d9"]})
    job = _job(_upload(org_client, "track", "runs", [SimpleUploadedFile("alpha.run", alpha.encode()),
                                                      SimpleUploadedFile("beta.run", beta.encode())],
                       contributes="on", team="lab", pool_priority="1"))
    assert job.status == "done", job.error
    collection = Collection.objects.get(slug="track")
    assert sorted(collection.runs.values_list("tag", "team", "contributes")) == [
        ("alpha", "lab", True), ("beta", "lab", True)]
    job = _job(_upload(org_client, "track", "qrels", [SimpleUploadedFile("old.qrels", b"301 0 d1 2\n302 0 d4 0\n")]))
    assert job.status == "done", job.error
    assert "2 judgments on 2 topics" in job.result["lines"][0]
    page = org_client.get(reverse("job", args=[job.pk])).content.decode()
    assert "2 judgments on 2 topics" in page and "directory" not in page
    assert collection.documents.count() == 9 and collection.topics.count() == 3


def test_an_upload_with_a_bad_line_names_it_and_imports_nothing(org_client, collection):
    good = factories.run_lines("good", {"301": ["d1", "d2"]})
    bad = factories.run_lines("bad", {"301": ["d1", "d2"]}) + "302 Q0 d3 x 1.0 bad\n"
    job = _job(_upload(org_client, collection.slug, "runs", [SimpleUploadedFile("good.run", good.encode()),
                                                              SimpleUploadedFile("bad.run", bad.encode())]))
    assert job.status == "failed"
    assert any(p.startswith("bad.run:3:") for p in job.result["problems"]), job.result
    assert not collection.runs.exists()
    page = org_client.get(reverse("job", args=[job.pk])).content.decode()
    assert "bad.run:3:" in page and "Nothing was imported" in page
    assert not Path(job.params["directory"]).exists()  # the uploaded files are removed once the job ends


def test_a_one_file_kind_refuses_several_files_and_an_empty_upload(org_client, collection):
    response = _upload(org_client, collection.slug, "topics", [SimpleUploadedFile("a.tsv", TOPICS_TSV.encode()),
                                                               SimpleUploadedFile("b.tsv", TOPICS_TSV.encode())])
    assert response.status_code == 400 and "one file at a time" in response.content.decode()
    response = org_client.post(reverse("workbench:upload", args=[collection.slug]), {"kind": "runs"})
    assert response.status_code == 400 and "This field is required" in response.content.decode()
    response = org_client.post(reverse("workbench:upload", args=[collection.slug]), {"kind": "nonsense"})
    assert response.status_code == 302
    assert not Job.objects.exists()


def _pooled_collection(org_client, collection, run_files):
    from workbench.collections.services import RunSpec, runs_import

    runs_import(collection=collection, specs=[RunSpec(source=p) for p in run_files])
    return collection


def _pool_form(**overrides):
    data = {"name": "main", "strategy": "depth", "depth": "2", "order": "pool", "seed": "7"}
    data.update(overrides)
    return data


def test_a_pool_is_previewed_per_topic_then_built_by_a_job(org_client, collection, run_files):
    _pooled_collection(org_client, collection, run_files)
    url = reverse("pooling:pools", args=[collection.slug])
    response = org_client.post(url, {**_pool_form(), "action": "preview"})
    assert response.status_code == 200
    rows = {row["qid"]: row["documents"] for row in response.context["preview"].rows}
    # depth 2: alpha 301 d1 d2, beta 301 d3 d7; alpha 302 d4 d5, beta 302 d5 d8; alpha 303 d6
    assert rows == {"301": 4, "302": 3, "303": 1}
    assert not Pool.objects.exists()
    job = _job(org_client.post(url, {**_pool_form(), "action": "build"}))
    assert job.status == "done", job.error
    pool = Pool.objects.get(collection=collection, name="main")
    assert PoolEntry.objects.filter(pool=pool).count() == 8 and pool.seed == 7
    again = org_client.post(url, {**_pool_form(depth="3"), "action": "preview"}).context["preview"]
    # depth 3 adds only d9 (beta, 302): d3 of 301 was pooled already through beta
    assert again.extends and again.total == 9 and again.total_new == 1


@pytest.mark.parametrize(("overrides", "message"), [
    ({"depth": ""}, "depth pooling needs"),
    ({"strategy": "rrf"}, "needs a budget"),
    ({"strata": "1-x:0.5", "strategy": "sampled"}, "is not FIRST-LAST:RATE"),
    ({"topic_depth": "999=5"}, "names topics not in collection"),
])
def test_a_pool_form_that_cannot_build_says_why(org_client, collection, run_files, overrides, message):
    _pooled_collection(org_client, collection, run_files)
    response = org_client.post(reverse("pooling:pools", args=[collection.slug]),
                               {**_pool_form(**overrides), "action": "preview"})
    assert response.status_code == 400
    assert message in response.content.decode()


def test_reading_a_document_beside_its_topic(org_client, collection):
    factories.add_documents(collection, ["d1"])
    url = reverse("workbench:document", args=[collection.slug])
    page = org_client.get(url, {"docno": "d1", "qid": "301"}).content.decode()
    assert "Text of d1" in page and "International Organized Crime" in page
    response = org_client.get(url, {"docno": "nope<script>"})
    assert response.status_code == 404 and "No document" in response.content.decode()
    assert "<script>" not in response.content.decode().split("</header>")[1].replace("&lt;script&gt;", "")


CONSOLE_PAGES = [("workbench:collection_new", []), ("workbench:jobs", []), ("workbench:people", []),
                 ("workbench:console", ["robust"]), ("workbench:collection_edit", ["robust"]),
                 ("workbench:upload", ["robust"]), ("workbench:document", ["robust"]), ("pooling:pools", ["robust"])]


@pytest.mark.parametrize(("name", "args"), CONSOLE_PAGES)
def test_the_console_is_for_organizers_only(client, assessor, outsider, collection, name, args):
    url = reverse(name, args=args)
    assert client.get(url).status_code == 302  # to the login page
    for user in (assessor, outsider):
        client.force_login(user)
        assert client.get(url).status_code == 403
        assert client.post(url, {}).status_code == 403


@pytest.mark.parametrize(("name", "args"), CONSOLE_PAGES)
def test_every_console_page_opens_for_an_organizer(org_client, collection, name, args):
    assert org_client.get(reverse(name, args=args)).status_code == 200


def test_the_console_without_a_collection_leads_to_the_list_of_collections(org_client):
    factories.collection_with_topics()
    response = org_client.get("/console/", follow=True)
    assert response.redirect_chain[0] == ("/", 302) and response.status_code == 200
    assert "/console/robust/" in response.content.decode()

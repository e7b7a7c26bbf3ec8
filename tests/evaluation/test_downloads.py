"""Exports and the release bundle, and who may download them."""

from __future__ import annotations

import hashlib
import io
import zipfile
from io import StringIO

import pytest
from django.contrib.auth.models import Group
from django.core.management import call_command

from tests import factories


@pytest.fixture
def judged(db, tmp_path):
    collection = factories.collection_with_topics(grades=[{"grade": 0, "label": "No"}, {"grade": 1, "label": "Yes"},
                                                          {"grade": 2, "label": "Very"}])
    for tag, ranking in {"alpha": {"301": ["a", "b"], "302": ["c"]}, "beta": {"301": ["b", "d"]}}.items():
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", "robust", str(path), *(["--no-pool"] if tag == "beta" else []),
                     stdout=StringIO())
    call_command("build_pool", "robust", "--depth", "2", "--seed", "1", stdout=StringIO())
    for name, lines in {"nist": "301 0 a 2\n301 0 b 0\n302 0 c 1\n", "second": "301 0 a 1\n301 0 b 1\n"}.items():
        path = tmp_path / name
        path.write_text(lines)
        call_command("import_qrels", "robust", str(path), "--assessor", name, stdout=StringIO())
    return collection


@pytest.fixture
def researcher(db):
    from django.contrib.auth.models import User

    user = User.objects.create_user("rita", password="pw")
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    return user


def test_qrels_download_offers_graded_binary_and_per_assessor_files(client, judged, organizer):
    client.force_login(organizer)
    graded = client.get("/collections/robust/downloads/qrels.txt?policy=majority").content.decode()
    assert graded.splitlines() == ["301 0 a 1", "301 0 b 0", "302 0 c 1"]  # a: 2 vs 1 ties to the lower grade
    binary = client.get("/collections/robust/downloads/qrels.txt?policy=majority&binary=1").content.decode()
    assert binary.splitlines() == ["301 0 a 1", "301 0 b 0", "302 0 c 1"]
    nist = client.get("/collections/robust/downloads/qrels.txt?assessor=nist").content.decode()
    assert nist.splitlines() == ["301 0 a 2", "301 0 b 0", "302 0 c 1"]


def build_release(client, slug: str = "robust", policy: str = "adjudicated"):
    """Ask for the bundle (a background job; the tests' task backend runs it at once), follow the job's
    page to its download link, and download it."""
    started = client.post(f"/collections/{slug}/downloads/release.zip", {"policy": policy})
    assert started.status_code == 302 and started["Location"].startswith("/jobs/")
    page = client.get(started["Location"])
    assert page.status_code == 200 and "Done" in page.content.decode()
    link = page.context["job"].result["url"]
    return client.get(link)


def test_the_release_bundle_holds_every_file_with_a_matching_checksum(client, judged, organizer):
    client.force_login(organizer)
    response = build_release(client)
    assert response["Content-Type"] == "application/zip"
    archive = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    names = {n.split("/", 1)[1] for n in archive.namelist()}
    assert {"README.md", "topics.jsonl", "qrels.txt", "qrels.binary.txt", "runs.csv", "pool.txt", "pool.json",
            "qrels-by-assessor/nist.txt", "qrels-by-assessor/second.txt", "agreement/pairs.csv"} <= names
    readme = archive.read("robust/README.md").decode()
    assert "- topics: 3" in readme and "- runs: 2 (1 contributed to the pool)" in readme
    for name in names - {"README.md"}:
        digest = hashlib.sha256(archive.read(f"robust/{name}")).hexdigest()
        assert f"{digest}  {name}" in readme, name
    runs = archive.read("robust/runs.csv").decode().splitlines()
    assert runs[1].startswith("alpha,,yes") and runs[2].startswith("beta,,no")
    assert archive.read("robust/pool.txt").decode().splitlines() == ["301 a", "301 b", "302 c"]


def test_researchers_download_only_where_the_organizer_allows(client, judged, researcher):
    client.force_login(researcher)
    assert client.post("/collections/robust/downloads/release.zip").status_code == 403
    judged.researchers_may_download = True
    judged.save()
    assert build_release(client).status_code == 200
    assert client.get("/collections/robust/downloads/qrels.txt").status_code == 200


def test_assessors_cannot_download_qrels_pools_or_bundles(client, judged, assessor):
    judged.researchers_may_download = True
    judged.save()
    client.force_login(assessor)
    for path in ["/collections/robust/", "/collections/robust/downloads/", "/collections/robust/downloads/qrels.txt",
                 "/collections/robust/downloads/pool.txt", "/collections/robust/downloads/release.zip"]:
        assert client.get(path).status_code == 403, path
    assert client.post("/collections/robust/downloads/release.zip").status_code == 403


def test_the_overview_shows_topics_runs_pool_and_progress(client, judged, organizer):
    client.force_login(organizer)
    body = client.get("/collections/robust/").content.decode()
    assert "Hubble Telescope Achievements" in body
    assert "alpha" in body and "beta" in body
    assert 'role="progressbar"' in body and 'aria-valuenow="100"' in body  # all 3 pooled documents judged


def test_report_tables_export_as_csv(client, judged, organizer):
    client.force_login(organizer)
    response = client.get("/collections/robust/runs/alpha/?measure=map&_export=csv&_table=t-")
    assert response["Content-Type"].startswith("text/csv")
    lines = response.content.decode().splitlines()
    assert lines[0].startswith("Topic,alpha,Best,Median,Worst")
    assert len(lines) == 1 + 2  # the two judged topics


def test_a_topic_page_never_shows_an_undefined_interval_as_nan(client, judged, organizer, tmp_path):
    # topic 303: a relevant document no run retrieved, so R is known only (no upper bound to estimate)
    (tmp_path / "late.qrels").write_text("303 0 zz 1\n")
    call_command("import_qrels", "robust", str(tmp_path / "late.qrels"), stdout=StringIO())
    client.force_login(organizer)
    body = client.get("/collections/robust/topics/303/").content.decode()
    assert "estimated relevant in total: <strong>1.0</strong> (known only" in body
    assert "nan" not in body.lower()

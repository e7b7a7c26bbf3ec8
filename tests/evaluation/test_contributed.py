""""Contributed" is one fact: the runs a pool was built from. A pool of a SUBSET of a track's runs (some
offered but left out by runs-per-team, one never offered): the leaderboard (page, CSV and JSON), the
bundle's runs.csv and README, the pool page (and its CSV), the overview and the evaluation report agree
run by run. Also: the bundle README names only what the zip holds, and the job page's back link opens."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from evaluation.release import release_bundle
from pooling.services import pool_build
from tests import factories
from workbench.models import Job, Run

#: tag -> (team, priority, offered to the pool)
RUNS = {"a-best": ("alpha", 1, True), "a-base": ("alpha", 2, True), "b-one": ("beta", 1, True),
        "b-two": ("beta", 2, True), "solo": ("", 1, True), "late": ("beta", 3, False)}
POOLED = {"a-best", "b-one", "solo"}
RANKING = {"301": ["d1", "d2", "d3"], "302": ["e1", "e2"]}


@pytest.fixture
def track(db, tmp_path):
    collection = factories.collection_with_topics()
    for i, (tag, (team, priority, offered)) in enumerate(RUNS.items()):
        path = tmp_path / f"{tag}.run"
        ranking = {q: [f"{d}-{i % 3}" for d in docs] for q, docs in RANKING.items()}
        path.write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", "robust", str(path), stdout=StringIO())
        Run.objects.filter(tag=tag).update(team=team, pool_priority=priority, contributes=offered)
    pool_build(collection=collection, name="submissions", depth=2, runs_per_team=1, seed=1)
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("301 0 d1-0 1\n301 0 d1-1 0\n302 0 e1-2 1\n302 0 e2-0 0\n")
    call_command("import_qrels", "robust", str(qrels), "--assessor", "nist", stdout=StringIO())
    return collection


@pytest.fixture
def researcher(db):
    user = User.objects.create_user("rita", password="pw")
    user.groups.add(Group.objects.get_or_create(name="researchers")[0])
    return user


def csv_rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def yes(value) -> bool:
    return {"yes": True, "no": False, "True": True, "False": False, "✔": True, "✘": False}[str(value)]


def test_the_leaderboard_runs_csv_bundle_readme_and_pool_page_agree_run_by_run(client, organizer, track):
    client.force_login(organizer)
    expected = {tag: tag in POOLED for tag in RUNS}

    board = client.get("/collections/robust/leaderboard/?_export=json").json()
    assert {r["run"]: r["contributed"] for r in board["runs"]} == expected
    flagged = {r["run"] for r in board["runs"] if "did not contribute to the pool" in r["flags"]}
    assert flagged == set(RUNS) - POOLED
    board_csv = csv_rows(client.get("/collections/robust/leaderboard/?_export=csv").content.decode())
    contributed_header = next(k for k in board_csv[0] if "ontribut" in k or k == "Pooled")
    assert {r["Run"]: yes(r[contributed_header]) for r in board_csv} == expected

    archive = zipfile.ZipFile(io.BytesIO(release_bundle(track).data))
    runs_csv = csv_rows(archive.read("robust/runs.csv").decode())
    assert {r["tag"]: yes(r["contributed"]) for r in runs_csv} == expected
    assert {r["tag"]: yes(r["offered_to_pool"]) for r in runs_csv} == {t: v[2] for t, v in RUNS.items()}
    readme = archive.read("robust/README.md").decode()
    assert "- runs: 6 (3 contributed to the pool)" in readme
    assert "- runs that contributed to the pool: a-best, b-one, solo" in readme

    pool_csv = csv_rows(client.get("/collections/robust/pool/?name=submissions&_export=csv&_table=c-")
                        .content.decode())
    assert {r["Run"]: yes(r["Contributed to this pool"]) for r in pool_csv} == expected
    assert {r["Run"]: yes(r["Offered to the pool"]) for r in pool_csv} == {t: v[2] for t, v in RUNS.items()}
    page = client.get("/collections/robust/pool/?name=submissions").content.decode()
    assert "Contributed to this pool" in page

    overview = client.get("/collections/robust/").content.decode()
    assert "(3 pooled)" in overview
    run_page = client.get("/collections/robust/runs/a-base/").content.decode()
    assert "did not contribute to the pool" in run_page and "offered, not pooled" in run_page
    assert "did not contribute" not in client.get("/collections/robust/runs/solo/").content.decode()


def test_without_any_pool_the_runs_offered_to_the_pool_count_as_contributed(db, tmp_path):
    # imported judgments, no pool: nothing to derive the fact from, so a leaderboard flags no offered run
    from pooling.selectors import contributed_runs

    collection = factories.collection_with_topics()
    for tag, offered in (("kept", True), ("late", False)):
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, RANKING))
        call_command("import_runs", "robust", str(path), *([] if offered else ["--no-pool"]), stdout=StringIO())
    assert contributed_runs(collection) == {"kept": True, "late": False}


def readme_paths(readme: str) -> set[str]:
    """Every file or folder the README names: `name.ext` or `folder/` in backticks, and the checksum lines."""
    named = {n for n in re.findall(r"`([\w./-]+)`", readme) if "." in n or n.endswith("/")}
    named |= set(re.findall(r"^    [0-9a-f]{64}  (\S+)$", readme, re.M))
    return named


def test_the_bundle_readme_names_only_what_the_zip_holds(track):
    archive = zipfile.ZipFile(io.BytesIO(release_bundle(track).data))
    held = {n.split("/", 1)[1] for n in archive.namelist()}
    named = readme_paths(archive.read("robust/README.md").decode())
    assert {"qrels.txt", "runs.csv", "pool.txt", "pool.json"} <= named
    for name in named:
        assert name in held or (name.endswith("/") and any(h.startswith(name) for h in held)), name
    assert not any(n.startswith("agreement/") for n in named)  # one assessor: no agreement to report


def test_the_bundle_readme_names_the_agreement_files_when_the_zip_has_them(track, tmp_path):
    second = tmp_path / "second.txt"
    second.write_text("301 0 d1-0 0\n301 0 d1-1 0\n302 0 e1-2 1\n302 0 e2-0 1\n")
    call_command("import_qrels", "robust", str(second), "--assessor", "second", stdout=StringIO())
    archive = zipfile.ZipFile(io.BytesIO(release_bundle(track).data))
    held = {n.split("/", 1)[1] for n in archive.namelist()}
    named = readme_paths(archive.read("robust/README.md").decode())
    assert {"agreement/pairs.csv", "agreement/topics.csv"} <= named & held
    for name in named:
        assert name in held or (name.endswith("/") and any(h.startswith(name) for h in held)), name


def test_the_bundle_pool_file_holds_the_pool_the_contributed_runs_built(track):
    archive = zipfile.ZipFile(io.BytesIO(release_bundle(track).data))
    pairs = archive.read("robust/pool.txt").decode().splitlines()
    assert len(pairs) > 0 and pairs == sorted(pairs, key=lambda p: (int(p.split()[0]), p.split()[1]))


def back_link(client, job_id: int) -> str:
    page = client.get(f"/jobs/{job_id}/").content.decode()
    return re.search(r'<a href="([^"]+)">Back to', page).group(1)


def test_the_bundle_job_page_links_each_reader_back_to_a_page_they_may_open(client, track, organizer, researcher):
    track.researchers_may_download = True
    track.save()
    for user, expected in ((researcher, "/collections/robust/downloads/"), (organizer, "/console/robust/")):
        client.force_login(user)
        response = client.post("/collections/robust/downloads/release.zip", {"policy": "adjudicated"})
        job = Job.objects.filter(started_by=user).latest("pk")
        assert response.status_code == 302
        link = back_link(client, job.pk)
        assert link == expected
        assert client.get(link).status_code == 200


def test_a_pool_not_named_main_is_the_pool_page_and_the_pool_download(client, organizer, track):
    client.force_login(organizer)
    page = client.get("/collections/robust/pool/")
    assert page.status_code == 200 and "Pool submissions" in page.content.decode()
    assert "Built from <strong>3</strong> of the collection's runs (5 offered to the pool)" in page.content.decode()
    bundle = zipfile.ZipFile(io.BytesIO(release_bundle(track).data)).read("robust/pool.txt").decode()
    assert client.get("/collections/robust/downloads/pool.txt").content.decode() == bundle != ""
    assert client.get("/collections/robust/downloads/pool.txt?name=submissions").content.decode() == bundle
    assert client.get("/collections/robust/downloads/pool.txt?name=nope").status_code == 404

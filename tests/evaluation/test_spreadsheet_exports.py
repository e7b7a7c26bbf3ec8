"""No CSV or TSV the pages, jobs and bundles offer holds a live formula: a participant's run tag
``=HYPERLINK("http://x","y")`` and a manifest cell ``@SUM(1)`` come out as text (a leading ``'``, OWASP's
rule) in the leaderboard CSV, every table's CSV export, the curves' CSV, every CSV of the evaluation zip and of
the release bundle, while numbers (negative ones too) stay exactly as they were and TREC files stay exact."""

from __future__ import annotations

import csv
import io
import re
import zipfile
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from tests import factories
from tests.evaluation.test_downloads import build_release
from workbench.formats.spreadsheet import FORMULA_STARTS, safe_cell
from workbench.models import Job

EVIL_TAG = '=HYPERLINK("http://x","y")'
EVIL_TEAM = "@SUM(1)"
RANKINGS = {EVIL_TAG: {"301": ["a", "b", "c"], "302": ["c", "d"]}, "alpha": {"301": ["b", "a"], "302": ["d", "e"]},
            "beta": {"301": ["c", "x"], "302": ["e", "c"]}}


def _number(cell: str) -> bool:
    try:
        float(cell.rstrip("*"))
    except ValueError:
        return False
    return True


def _formulas(name: str, text: str) -> list[str]:
    """The cells of a CSV/TSV file a spreadsheet would run as formulas."""
    dialect = "excel-tab" if name.endswith(".tsv") else "excel"
    return [f"{name}: {cell!r}" for row in csv.reader(io.StringIO(text), dialect) for cell in row
            if cell.startswith(FORMULA_STARTS) and not _number(cell)]


@pytest.fixture
def hostile(client, organizer, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    collection = factories.collection_with_topics()
    client.force_login(organizer)
    manifest = io.StringIO()
    writer = csv.writer(manifest)
    writer.writerows([["tag", "team", "description", "contributes"], [EVIL_TAG, EVIL_TEAM, "-2+3 was the tuning", "yes"],
                      ["alpha", "+team", "plain", "yes"], ["beta", "uni", "=1+1", "no"]])
    files = [SimpleUploadedFile(f"run{i}.txt", factories.run_lines(tag, ranking).encode())
             for i, (tag, ranking) in enumerate(RANKINGS.items())]
    response = client.post(reverse("workbench:upload", args=["robust"]), {
        "kind": "runs", "runs-files": files, "runs-manifest": SimpleUploadedFile("manifest.csv", manifest.getvalue().encode())})
    assert response.status_code == 302, response.content[:500]
    job = Job.objects.order_by("-pk").first()
    assert job.status == "done", (job.error, job.result)
    assert set(collection.runs.values_list("tag", flat=True)) == set(RANKINGS)
    call_command("build_pool", "robust", "--depth", "3", "--seed", "1", stdout=StringIO())
    for name, lines in {"nist": "301 0 a 1\n301 0 b 0\n301 0 c 1\n302 0 c 1\n302 0 d 0\n302 0 e 1\n",
                        "+second": "301 0 a 1\n301 0 b 1\n302 0 c 0\n"}.items():
        path = tmp_path / name
        path.write_text(lines)
        call_command("import_qrels", "robust", str(path), "--assessor", name, stdout=StringIO())
    return collection


_LINK = re.compile(r'href="([^"]*(?:_export=csv|download=csv)[^"]*)"')


def _page_csvs(client) -> dict[str, str]:
    """Every CSV a results page links to (table exports, the leaderboard's, the curves'), by its link."""
    pages = ["/collections/robust/leaderboard/", "/collections/robust/pool/", "/collections/robust/significance/",
             "/collections/robust/reusability/", "/collections/robust/curves/?all=1",
             "/collections/robust/topics/301/", *(reverse("evaluation:run", args=["robust", t]) for t in RANKINGS)]
    found = {}
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
        for link in _LINK.findall(response.content.decode()):
            link = link.replace("&amp;", "&")
            url = link if link.startswith("/") else page.split("?")[0] + link
            download = client.get(url)
            assert download.status_code == 200, url
            found[url] = download.content.decode()
    return found


def _zip_texts(data: bytes) -> dict[str, str]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    return {name: archive.read(name).decode() for name in archive.namelist() if name.endswith((".csv", ".tsv"))}


def test_no_csv_offered_holds_a_formula_and_numbers_stay_numbers(client, hostile):
    offered = _page_csvs(client)
    assert sum("_export=csv" in url for url in offered) >= 8 and any("download=csv" in url for url in offered)
    started = client.post("/collections/robust/downloads/evaluation/", {"measures": "map P.2"})
    job = Job.objects.get(pk=int(started["Location"].rstrip("/").split("/")[-1]))
    assert job.status == "done", job.error
    evaluation = _zip_texts(b"".join(client.get(job.result["url"]).streaming_content))
    bundle = _zip_texts(b"".join(build_release(client).streaming_content))
    assert {"robust-evaluation/leaderboard.csv", "robust-evaluation/per_topic.csv",
            "robust-evaluation/leave_one_run_out.csv"} <= set(evaluation)
    assert {"robust/runs.csv", "robust/agreement/pairs.csv", "robust/agreement/topics.csv"} <= set(bundle)
    everything = {**offered, **evaluation, **bundle}
    assert [cell for name, text in everything.items() for cell in _formulas(name, text)] == []
    # the hostile cells are there, as text a spreadsheet shows as it was typed
    board = client.get("/collections/robust/leaderboard/?_export=csv").content.decode()
    assert _formulas("leaderboard", board) == [] and any(f"'{EVIL_TAG}" in row for row in csv.reader(io.StringIO(board)))
    runs = {row["tag"]: row for row in csv.DictReader(io.StringIO(bundle["robust/runs.csv"]))}
    assert runs[f"'{EVIL_TAG}"]["team"] == f"'{EVIL_TEAM}" and runs[f"'{EVIL_TAG}"]["description"] == "'-2+3 was the tuning"
    assert runs["alpha"]["team"] == "'+team" and runs["beta"]["description"] == "'=1+1"
    for name in ("robust-evaluation/leaderboard.csv", "robust-evaluation/per_topic.csv"):
        assert any(row[0] == f"'{EVIL_TAG}" for row in csv.reader(io.StringIO(evaluation[name]))), name


def test_trec_files_and_the_stored_tag_stay_exact(client, hostile):
    assert hostile.runs.filter(tag=EVIL_TAG, team=EVIL_TEAM).exists()
    pool = client.get("/collections/robust/downloads/pool.txt").content.decode()
    assert pool.splitlines()[0] == "301 a"


def test_numbers_stay_exactly_as_they_were():
    import pandas as pd

    from workbench.formats.spreadsheet import frame_csv

    frame = pd.DataFrame({"run": ["-x", "ok"], "delta": [-1.5, -0.25], "rank": [-1, 2], "mark": ["-0.7389*", "@x"]})
    assert frame_csv(frame, index=False).splitlines() == ["run,delta,rank,mark", "'-x,-1.5,-1,-0.7389*", "ok,-0.25,2,'@x"]
    assert [safe_cell(v) for v in ("-1.5", "+2", "1e-3", "-", "\tx", "\rx")] == ["-1.5", "+2", "1e-3", "'-", "'\tx",
                                                                                  "'\rx"]

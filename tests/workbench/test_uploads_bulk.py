"""Uploads of real size and number through the console, with Django's own multipart parser (the test
Client posts real multipart bodies, spooled to disk by the upload handler): a run file over 3 MB, more
than 100 files in one upload, archives of runs, a manifest giving every run its team, messages naming files
as the user named them, and nothing left on disk when the job ends."""

from __future__ import annotations

import gzip
import io
import os
import tarfile
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from tests import factories
from workbench.collections.services import collection_create
from workbench.models import Job, Run, Topic

QIDS = [str(q) for q in range(1, 51)]


@pytest.fixture
def org_client(client, organizer):
    client.force_login(organizer)
    return client


@pytest.fixture
def var_dir(settings, tmp_path):
    settings.VAR_DIR = tmp_path
    return tmp_path


@pytest.fixture
def track(db, var_dir):
    collection = collection_create(slug="track", name="Track")
    Topic.objects.bulk_create(Topic(collection=collection, qid=q, title=f"topic {q}") for q in QIDS)
    return collection


def _run(tag: str, qids=("1", "2"), depth: int = 3) -> str:
    return factories.run_lines(tag, {q: [f"{tag}/d{q}-{i}" for i in range(depth)] for q in qids})


def _upload(client, kind: str, files, slug: str = "track", manifest=None, **options):
    data = {"kind": kind, f"{kind}-files": files, **{f"{kind}-{k}": v for k, v in options.items()}}
    if manifest is not None:
        data[f"{kind}-manifest"] = manifest
    return client.post(reverse("workbench:upload", args=[slug]), data)


def _job(response) -> Job:
    assert response.status_code == 302, response.content[:800]
    return Job.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))


def _leftovers(var_dir: Path) -> list[str]:
    uploads = var_dir / "uploads"
    return [p.name for p in uploads.iterdir() if p.name != "tmp"] if uploads.exists() else []


def test_a_run_file_over_3_mb_is_uploaded_and_imported(org_client, track, var_dir):
    lines = [f"{q} Q0 clueweb12-0000tw-{q:0>2}-{i:05d} {i + 1} {1000 - i / 1000:.6f} big-run-tag-of-team-x"
             for q in QIDS for i in range(1000)]
    body = ("\n".join(lines) + "\n").encode()
    assert len(body) > 3 * 1024 * 1024
    job = _job(_upload(org_client, "runs", [SimpleUploadedFile("big.run", body)], contributes="on"))
    assert job.status == "done", job.error
    run = Run.objects.get(collection=track)
    assert (run.tag, run.num_entries, run.num_topics, run.source_file) == ("big-run-tag-of-team-x", 50_000, 50, "big.run")
    assert _leftovers(var_dir) == []


def test_more_than_100_run_files_arrive_in_one_upload(org_client, track, var_dir):
    files = [SimpleUploadedFile(f"r{i:03d}.run", _run(f"r{i:03d}").encode()) for i in range(120)]
    job = _job(_upload(org_client, "runs", files, contributes="on", team="lab"))
    assert job.status == "done", job.error
    assert track.runs.count() == 120 and set(track.runs.values_list("team", flat=True)) == {"lab"}
    page = org_client.get(reverse("job", args=[job.pk])).content.decode()
    assert "files: 120 files (r000.run, r001.run, r002.run, …, r119.run)" in page
    assert _leftovers(var_dir) == []


def test_the_upload_page_states_the_limit_and_an_upload_over_it_gets_a_plain_page(org_client, track, settings,
                                                                                    tmp_path):
    settings.DATA_UPLOAD_MAX_NUMBER_FILES = 5
    # a spool of this test's own: the shared one also holds what a test running beside it receives
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "spool")
    Path(settings.FILE_UPLOAD_TEMP_DIR).mkdir()
    page = org_client.get(reverse("workbench:upload", args=["track"])).content.decode()
    assert "at most <strong>5</strong> files in one upload" in page and ".tar.gz" in page
    assert 'data-max-files="5"' in page and "workbench/upload.js" in page
    files = [SimpleUploadedFile(f"r{i}.run", _run(f"r{i}").encode()) for i in range(6)]
    spool = Path(settings.FILE_UPLOAD_TEMP_DIR)
    before = set(spool.iterdir())
    response = _upload(org_client, "runs", files)
    text = response.content.decode()
    assert response.status_code == 400
    assert "more than 5 files, the most one upload may carry" in text and "Traceback" not in text
    assert not Job.objects.exists() and not track.runs.exists()
    assert set(spool.iterdir()) <= before  # the files received before the refusal are not kept


def _zip(members: dict[str, bytes], links: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (0o120777 << 16)
            archive.writestr(info, target)
    return buffer.getvalue()


def _tar(members: dict[str, bytes], mode: str = "w:gz", symlinks: dict[str, str] | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for name, target in (symlinks or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            archive.addfile(info)
    return buffer.getvalue()


def test_archives_and_plain_files_mix_in_one_upload_with_folders_flattened(org_client, track, var_dir):
    zipped = _zip({"team-a/alpha.run": _run("alpha").encode(), "team-a/deep/beta.run.gz": gzip.compress(
        _run("beta").encode()), "__MACOSX/team-a/._alpha.run": b"\x00junk", "team-a/.DS_Store": b"\x00"})
    tarred = _tar({"gamma.run": _run("gamma").encode(), "../../escape.run": _run("escape").encode()})
    files = [SimpleUploadedFile("runs.zip", zipped), SimpleUploadedFile("runs.tar.gz", tarred),
             SimpleUploadedFile("delta.run", _run("delta").encode()),
             SimpleUploadedFile("more.tar", _tar({"eps.run": _run("eps").encode()}, mode="w")),
             SimpleUploadedFile("more.tgz", _tar({"zeta.run": _run("zeta").encode()}))]
    job = _job(_upload(org_client, "runs", files, contributes="on"))
    assert job.status == "done", job.error
    assert dict(track.runs.values_list("tag", "source_file")) == {
        "alpha": "runs.zip:team-a/alpha.run", "beta": "runs.zip:team-a/deep/beta.run.gz",
        "gamma": "runs.tar.gz:gamma.run", "escape": "runs.tar.gz:../../escape.run", "delta": "delta.run",
        "eps": "more.tar:eps.run", "zeta": "more.tgz:zeta.run"}
    assert not (var_dir.parent / "escape.run").exists() and not list(var_dir.rglob("escape.run"))
    assert _leftovers(var_dir) == []


def _cut(data: bytes) -> bytes:
    return data[: len(data) // 2]


def test_links_and_broken_archives_are_refused_by_member_name_and_nothing_is_imported(org_client, track, var_dir):
    files = [SimpleUploadedFile("runs.zip", _zip({"alpha.run": _run("alpha").encode()},
                                                  links={"evil.run": "/etc/passwd"})),
             SimpleUploadedFile("t.tar.gz", _tar({"beta.run": _run("beta").encode()}, symlinks={"x.run": "/etc"})),
             SimpleUploadedFile("broken.zip", b"PK\x03\x04 not really a zip"),
             SimpleUploadedFile("empty.tar", _tar({}, mode="w")),
             SimpleUploadedFile("cut.tar.gz", _cut(_tar({"c.run": os.urandom(50_000).hex().encode()})))]
    job = _job(_upload(org_client, "runs", files))
    assert job.status == "failed"
    problems = job.result["problems"]
    assert "runs.zip:evil.run: a link, not a file (links are not followed)" in problems
    assert "t.tar.gz:x.run: a link, not a file (links are not followed)" in problems
    assert any(p.startswith("broken.zip: cannot read: not a valid zip archive") for p in problems)
    assert "empty.tar: the archive holds no files" in problems
    assert "cut.tar.gz: cannot read: not a valid tar archive (unexpected end of data)" in problems
    assert not track.runs.exists() and _leftovers(var_dir) == []
    assert not any("/uploads/" in p for p in problems)


def test_an_archive_that_would_fill_the_disk_is_refused_and_removed(org_client, track, var_dir, monkeypatch):
    from workbench.collections import uploads

    monkeypatch.setattr(uploads, "DISK_RESERVE", 1 << 62)  # "less than this free": any disk is full
    job = _job(_upload(org_client, "runs", [SimpleUploadedFile("runs.zip", _zip({"a.run": _run("a").encode()}))]))
    assert job.status == "failed" and job.error.startswith("runs.zip: unpacking it would fill the server's disk")
    assert _leftovers(var_dir) == []


def test_a_bad_line_inside_an_archive_is_named_archive_member_and_line(org_client, track):
    bad = _run("alpha") + "2 Q0 dx x 1.0 alpha\n"  # line 7
    job = _job(_upload(org_client, "runs", [SimpleUploadedFile("runs.tar.gz", _tar({"alpha.run": bad.encode()}))]))
    assert job.status == "failed"
    assert job.result["problems"] == ["runs.tar.gz:alpha.run:7: rank 'x' is not an integer"]
    assert job.error.startswith("runs.tar.gz:alpha.run:7:")


HEADER = ("# ir_metadata.start\n# tag: hdr\n# actor:\n#   team: header-team\n# method:\n#   automatic: false\n"
          "# description: from the header\n# ir_metadata.end\n")


def test_a_manifest_gives_each_run_its_team_contribution_priority_and_type(org_client, track):
    files = [SimpleUploadedFile(f"{tag}.run", _run(tag).encode()) for tag in ("a1", "a2", "b1", "c1", "plain")]
    files.append(SimpleUploadedFile("hdr.run", (HEADER + _run("hdr")).encode()))
    manifest = SimpleUploadedFile("manifest.csv", b"tag,team,contributes,priority,type,description\n"
                                  b"a1,uni-a,yes,1,automatic,BM25\na2,uni-a,yes,2,manual,\n"
                                  b"b1,uni-b,no,1,,\nc1,uni-c,,,,\nhdr,,,3,,\n")
    job = _job(_upload(org_client, "runs", files, manifest=manifest, contributes="on", team="default-team",
                       pool_priority="4", description="given in the form"))
    assert job.status == "done", job.error
    rows = {r.tag: (r.team, r.contributes, r.pool_priority, r.run_type, r.description) for r in track.runs.all()}
    assert rows == {
        "a1": ("uni-a", True, 1, "automatic", "BM25"),
        "a2": ("uni-a", True, 2, "manual", "given in the form"),
        "b1": ("uni-b", False, 1, "", "given in the form"),
        "c1": ("uni-c", True, 4, "", "given in the form"),
        "hdr": ("header-team", True, 3, "manual", "from the header"),  # the header where the manifest is silent
        "plain": ("default-team", True, 4, "", "given in the form"),  # not in the manifest: the form's values
    }
    assert "run a1: 6 lines on 2 topics (offered to the pool); team uni-a, priority 1, automatic" in (
        job.result["lines"])
    assert "manifest: manifest.csv" in org_client.get(reverse("job", args=[job.pk])).content.decode()
    # team-based pooling now has teams to work with: one run per team, the best priority, contributing runs only
    from pooling.services import pool_build

    summary = pool_build(collection=track, name="teams", depth=2, runs_per_team=1)
    pooled = {docno.split("/")[0] for docno in summary.pool.entries.values_list("docno", flat=True)}
    assert pooled == {"a1", "c1", "hdr", "plain"}  # a2: uni-a's second run; b1: does not contribute


@pytest.mark.parametrize(("manifest", "problem"), [
    (b"tag,team\na1,uni-a\nzz,uni-z\n", "manifest.csv:3: run tag 'zz' is not among the uploaded runs (a1, b1)"),
    (b"tag,contributes\na1,perhaps\n", "manifest.csv:2: contributes 'perhaps' is not yes or no"),
    (b"tag,priority\na1,1\nb1,-2\n", "manifest.csv:3: priority '-2' is not a whole number of 1 or more"),
    (b"tag,team\na1,x\na1,y\n", "manifest.csv:3: run tag 'a1' appears twice (first at line 2)"),
])
def test_a_bad_manifest_line_is_named_and_nothing_is_imported(org_client, track, var_dir, manifest, problem):
    files = [SimpleUploadedFile(f"{tag}.run", _run(tag).encode()) for tag in ("a1", "b1")]
    job = _job(_upload(org_client, "runs", files, manifest=SimpleUploadedFile("manifest.csv", manifest)))
    assert job.status == "failed" and job.result["problems"] == [problem]
    assert not track.runs.exists() and _leftovers(var_dir) == []


def test_warnings_and_errors_name_files_as_the_user_did_on_the_job_page(org_client, track):
    # rank 2 scores higher than rank 1: a warning on line 2, the run is still imported
    warned = "1 Q0 d1 1 1.0 bert\n1 Q0 d2 2 2.0 bert\n"
    job = _job(_upload(org_client, "runs", [SimpleUploadedFile("BERT.gz", gzip.compress(warned.encode()))]))
    assert job.status == "done", job.error
    assert job.result["warnings"] and job.result["warnings"][0].startswith("BERT.gz:2: the rank column disagrees")
    page = org_client.get(reverse("job", args=[job.pk])).content.decode()
    assert "BERT.gz:2:" in page and "/uploads/" not in page and "/uploads/" not in str(job.result)
    broken = "1 Q0 d1 1 1.0 t5\n1 Q0 d2 2 x t5\n"
    job = _job(_upload(org_client, "runs", [SimpleUploadedFile("T5 run.gz", gzip.compress(broken.encode()))]))
    assert job.status == "failed" and job.error.startswith("T5 run.gz:2: score 'x' is not a number")
    page = org_client.get(reverse("job", args=[job.pk])).content.decode()
    assert "T5 run.gz:2:" in page and "/uploads/" not in page and "/uploads/" not in job.error


def test_documents_come_as_several_files_plain_gzipped_or_archived(org_client, track, var_dir):
    def sgml(start: int, stop: int) -> bytes:
        return "".join(f"<DOC>\n<DOCNO>d{i}</DOCNO>\n<TEXT>text {i}</TEXT>\n</DOC>\n" for i in range(start, stop)).encode()

    files = [SimpleUploadedFile("a.sgml", sgml(0, 5)), SimpleUploadedFile("b.sgml.gz", gzip.compress(sgml(5, 9))),
             SimpleUploadedFile("c.zip", _zip({"part/c.sgml": sgml(9, 12)}))]
    job = _job(_upload(org_client, "documents", files))
    assert job.status == "done", job.error
    assert track.documents.count() == 12 and _leftovers(var_dir) == []
    dupe = _job(_upload(org_client, "documents", [SimpleUploadedFile("d.zip", _zip({"x/dup.sgml": sgml(20, 21) * 2}))]))
    assert dupe.status == "failed" and dupe.error.startswith(
        "d.zip:x/dup.sgml:5: document 'd20' appears more than once")

"""Identifiers full of what breaks URLs, HTML, CSV, plots and TREC files, at their maximum lengths, go
through every import and every page (workbench.formats.identifiers says what is allowed)."""

from __future__ import annotations

import io
import json
import zipfile
from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from judging.assignments import assignments_create
from judging.models import AssignmentItem
from pooling.models import Pool
from tests.evaluation.test_downloads import build_release
from workbench.models import Collection

QIDS = ["a/b", "$\\foo$", "%41#x?", "<q>\"'&", "日本", "q" * 64]
TAGS = ["run/with/slashes/", "$\\mathrm{x}$", "100%#?&=", "<script>alert(1)</script>", "ünï\"'\\", "t" * 200]
DOCNOS = ["d/1", "$d$", "%2F#?", "<b>x</b>", "\\x\"'", "d" * 200]


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


@pytest.fixture
def hostile(db, tmp_path):
    run("create_collection", "hostile")
    (tmp_path / "topics.tsv").write_text("".join(f"{q}\ttopic {i}\n" for i, q in enumerate(QIDS)))
    run("import_topics", "hostile", str(tmp_path / "topics.tsv"))
    for r, tag in enumerate(TAGS):
        lines = [f"{q} Q0 {d} {k + 1} {10 - k - r / 10:.3f} {tag}\n"
                 for q in QIDS for k, d in enumerate(DOCNOS[r:] + DOCNOS[:r])]
        path = tmp_path / f"run{r}.txt"
        path.write_text("".join(lines))
        run("import_runs", "hostile", str(path), *(["--no-pool"] if r == len(TAGS) - 1 else []))
    run("build_pool", "hostile", "--depth", "3", "--seed", "1")
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 {d} {(i + j) % 2}\n" for i, q in enumerate(QIDS)
                                                for j, d in enumerate(DOCNOS[:4])))
    run("import_qrels", "hostile", str(tmp_path / "qrels.txt"))
    organizer = User.objects.create_user("olivia", password="pw")
    organizer.groups.add(Group.objects.get_or_create(name="organizers")[0])
    assessor = User.objects.create_user("arthur", password="pw")
    assignments_create(pool=Pool.objects.get(collection__slug="hostile"), assessors=[assessor])
    return Collection.objects.get(slug="hostile"), organizer, assessor


def test_the_identifiers_are_stored_exactly(hostile):
    collection, _, _ = hostile
    assert sorted(collection.topics.values_list("qid", flat=True)) == sorted(QIDS)
    assert sorted(collection.runs.values_list("tag", flat=True)) == sorted(TAGS)


def test_every_results_page_renders_with_hostile_identifiers(hostile):
    collection, organizer, _ = hostile
    client = Client()
    client.force_login(organizer)
    slug = collection.slug
    pages = [reverse(f"evaluation:{name}", args=[slug]) for name in
             ["overview", "downloads", "leaderboard", "significance", "curves", "reusability", "pool"]]
    pages += [reverse("evaluation:run", args=[slug, tag]) for tag in TAGS]
    pages += [reverse("evaluation:topic", args=[slug, qid]) for qid in QIDS]
    pages += [reverse("judging:dashboard", args=[slug]), reverse("judging:agreement", args=[slug])]
    for url in pages:
        response = client.get(url, {"run": TAGS})
        assert response.status_code == 200, url
        body = response.content.decode()
        assert "<script>alert(1)</script>" not in body, url  # escaped wherever it is shown
    run_page = client.get(reverse("evaluation:run", args=[slug, "run/with/slashes/"])).content.decode()
    assert "run/with/slashes/" in run_page
    topic_page = client.get(reverse("evaluation:topic", args=[slug, "$\\foo$"])).content.decode()
    assert "$\\foo$" in topic_page  # the plot shows it as typed, not as maths


def test_exports_carry_hostile_identifiers_intact(hostile):
    collection, organizer, _ = hostile
    client = Client()
    client.force_login(organizer)
    board = json.loads(client.get(reverse("evaluation:leaderboard", args=[collection.slug]),
                                  {"_export": "json"}).content)
    assert sorted(r["run"] for r in board["runs"]) == sorted(TAGS)
    csv = client.get(reverse("evaluation:leaderboard", args=[collection.slug]), {"_export": "csv"})
    assert csv.status_code == 200 and "<script>alert(1)</script>" in csv.content.decode()
    qrels = client.get(reverse("evaluation:download_qrels", args=[collection.slug])).content.decode()
    assert {line.split(" ")[0] for line in qrels.splitlines()} == set(QIDS)
    response = build_release(client, collection.slug)
    bundle = zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))
    assert any(name.endswith("qrels.txt") for name in bundle.namelist())


def test_the_assessor_judges_documents_with_hostile_ids(hostile):
    _, _, assessor = hostile
    client = Client()
    client.force_login(assessor)
    for item in AssignmentItem.objects.filter(assignment__assessor=assessor)[:6]:
        response = client.get(reverse("judging:item", args=[item.pk]))
        assert response.status_code == 200
        assert "<b>x</b>" not in response.content.decode()


def test_an_identifier_over_its_length_is_refused_naming_the_line(db, tmp_path):
    run("create_collection", "c")
    (tmp_path / "t.tsv").write_text("1\tok\n" + "q" * 65 + "\ttoo long\n")
    with pytest.raises(Exception) as refused:
        run("import_topics", "c", str(tmp_path / "t.tsv"))
    assert f"{tmp_path / 't.tsv'}:2: topic id is 65 characters long, more than 64" in str(refused.value)
    (tmp_path / "r.txt").write_text("1 Q0 " + "d" * 201 + " 1 1.0 tag\n")
    with pytest.raises(Exception) as refused:
        run("import_runs", "c", str(tmp_path / "r.txt"))
    assert f"{tmp_path / 'r.txt'}:1: docno is 201 characters long, more than 200" in str(refused.value)


def test_a_nul_is_refused_in_runs_qrels_topics_and_documents_alike(db, tmp_path):
    run("create_collection", "c")
    (tmp_path / "t.tsv").write_text("1\tok\n2\tnul\x00here\n")
    with pytest.raises(Exception, match=":2: topic '2''s title contains a NUL character"):
        run("import_topics", "c", str(tmp_path / "t.tsv"))
    (tmp_path / "t.tsv").write_text("1\tok\n")
    run("import_topics", "c", str(tmp_path / "t.tsv"))
    (tmp_path / "r.txt").write_text("1 Q0 d\x001 1 1.0 tag\n")
    with pytest.raises(Exception, match="r.txt:1: docno 'd\\\\x001' contains a control character"):
        run("import_runs", "c", str(tmp_path / "r.txt"))
    (tmp_path / "q.txt").write_text("1 0 d\x001 1\n")
    with pytest.raises(Exception, match="q.txt:1: docno"):
        run("import_qrels", "c", str(tmp_path / "q.txt"))
    (tmp_path / "d.trec").write_text("<DOC>\n<DOCNO> d1 </DOCNO>\nte\x00xt\n</DOC>\n")
    with pytest.raises(Exception, match="d.trec:1: document 'd1''s text contains a NUL character"):
        run("import_documents", "c", str(tmp_path / "d.trec"))


def test_a_docno_that_is_not_utf8_is_refused_not_mangled(db, tmp_path):
    run("create_collection", "c")
    (tmp_path / "d.trec").write_bytes(b"<DOC>\n<DOCNO> D\xff4 </DOCNO>\ntext\n</DOC>\n")
    with pytest.raises(Exception, match="d.trec:1: docno is not valid UTF-8"):
        run("import_documents", "c", str(tmp_path / "d.trec"))

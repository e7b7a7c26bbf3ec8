"""Teams submit their own runs: checked by the same checker as the CLI, within the window and the limit;
a tag submitted again replaces the run (the earlier file is kept); every refusal says why."""

from __future__ import annotations

import hashlib
import html
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from participation.models import Submission
from participation.services import submission_check
from tests.participation.conftest import run_upload, submit
from workbench.collections import files as store
from workbench.models import Run

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def _receipt(response) -> Submission:
    assert response.status_code == 302, response.content.decode()[:2000]
    return Submission.objects.get(pk=int(response["Location"].rstrip("/").split("/")[-1]))


def test_a_team_submits_a_run_and_gets_its_receipt(client, track, teams):
    team, user = teams["red"]
    client.force_login(user)
    submission = _receipt(submit(client, track, run_upload("red-bm25", {"301": ["d1", "d2", "d3"], "302": ["d4"]})))
    assert submission.status == "accepted" and submission.tag == "red-bm25"
    run = Run.objects.get(tag="red-bm25")
    assert (run.team, run.contributes, run.pool_priority, run.description) == ("red", True, 1, "BM25, k1=0.9")
    assert any("no results for 1 of 3 topics (303)" in w for w in submission.warnings)
    assert any("1 of 2 topics have fewer than the 3 documents" in w for w in submission.warnings)
    page = client.get(f"/participate/{track.collection.slug}/submissions/{submission.pk}/").content.decode()
    assert submission.sha256 in page and "Accepted as run" in page and "red-bm25" in page
    kept = client.get(f"/participate/{track.collection.slug}/submissions/{submission.pk}/file")
    assert b"".join(kept.streaming_content).startswith(b"301 Q0 d1 1")


def test_a_bad_line_is_refused_naming_it_as_the_cli_and_the_console_do_and_nothing_is_stored(client, track, teams,
                                                                                              tmp_path, organizer):
    team, user = teams["red"]
    client.force_login(user)
    upload = run_upload("red-x", extra="302 Q0 d9 seven 1.0 red-x\n", name="mine.run")
    sent = upload.read()
    upload.seek(0)
    submission = _receipt(submit(client, track, upload))
    assert submission.status == "refused" and not Run.objects.exists()
    assert submission.problems == ["mine.run:10: rank 'seven' is not an integer"]
    # a refused file is not kept (its report says why); the receipt says so and offers no link to it
    assert not store.exists(submission.stored)
    receipt = client.get(f"/participate/{track.collection.slug}/submissions/{submission.pk}/").content.decode()
    assert "a refused file is not kept" in receipt and "the file as received" not in receipt
    assert submission.sha256 == hashlib.sha256(sent).hexdigest() and submission.size == len(sent)
    # the same file through the command line: the same line
    (tmp_path / "mine.run").write_bytes(sent)
    env = {**os.environ, "WORKBENCH_VAR_DIR": str(tmp_path / "cli-var"), "DATABASE_URL": f"sqlite:///{tmp_path}/c.db"}
    subprocess.run([sys.executable, str(ROOT / "manage.py"), "migrate", "-v0"], env=env, check=True, cwd=tmp_path)
    subprocess.run([sys.executable, str(ROOT / "manage.py"), "create_collection", "robust"], env=env, check=True,
                   cwd=tmp_path, capture_output=True)
    cli = subprocess.run([sys.executable, str(ROOT / "manage.py"), "import_runs", "robust", "mine.run"], env=env,
                         cwd=tmp_path, capture_output=True, text=True)
    assert cli.returncode != 0 and cli.stderr.strip() == f"Error: {submission.problems[0]}"
    # and through the organizer's console: the same line again
    from django.core.files.uploadedfile import SimpleUploadedFile

    from workbench.models import Job

    client.force_login(organizer)
    client.post(f"/console/{track.collection.slug}/upload/",
                {"kind": "runs", "runs-files": [SimpleUploadedFile("mine.run", sent)]})
    assert Job.objects.get(kind="runs import").result["problems"] == submission.problems


def test_at_the_run_limit_the_form_closes_a_third_tag_is_refused_and_a_run_may_still_be_replaced(
        client, track, teams, settings, tmp_path):
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path / "upload-tmp")
    Path(settings.FILE_UPLOAD_TEMP_DIR).mkdir()
    team, user = teams["red"]
    client.force_login(user)
    first = _receipt(submit(client, track, run_upload("red-a")))
    _receipt(submit(client, track, run_upload("red-b")))
    page = html.unescape(client.get(f"/participate/{track.collection.slug}/").content.decode())
    assert "2 of 2 runs submitted" in page and "the track's limit: no new run can be sent" in page
    assert ">Replace the run</button>" in page and ">Submit</button>" not in page
    # a new tag posted anyway: refused before the file is kept, with the reason, and nothing left on disk
    response = submit(client, track, run_upload("red-c"))
    assert response.status_code == 400
    assert ("your team has submitted 2 of 2 runs, the track's limit; to send a run again, choose which of your "
            "runs it replaces (red-a, red-b)") in html.unescape(response.content.decode())
    assert Submission.objects.count() == 2 and not any(Path(settings.FILE_UPLOAD_TEMP_DIR).iterdir())
    kept = list((Path(settings.VAR_DIR) / "submissions").rglob("*.run"))
    assert sorted(p.name for p in kept) == ["red-a.run", "red-b.run"]
    # a file whose tag is not the run chosen to be replaced: the checker refuses it
    wrong = _receipt(submit(client, track, run_upload("red-c"), replaces="red-b"))
    assert wrong.status == "refused"
    assert wrong.problems == ["red-c.run: the run tag in the file is 'red-c', not 'red-b', the run you chose to replace"]
    again = _receipt(submit(client, track, run_upload("red-a", {"301": ["d3", "d2", "d1"]}), priority="2",
                            replaces="red-a"))
    first.refresh_from_db()
    assert again.status == "accepted" and first.status == "replaced"
    assert "Sent to replace run red-a." in client.get(f"/participate/{track.collection.slug}/submissions/"
                                                      f"{again.pk}/").content.decode()
    assert store.exists(first.stored)  # the earlier file stays in the history
    assert Run.objects.get(tag="red-a").num_entries == 3 and Run.objects.filter(team="red").count() == 2
    # the checker keeps its own limit check (two uploads sent at once both pass the form)
    kept = store.put_bytes("submissions/robust/red/sneaked/red-d.run", run_upload("red-d").read())
    sneaked = Submission.objects.create(team=team, file_name="red-d.run", stored=kept)
    assert submission_check(sneaked).status == "refused"
    assert "team 'red' has 2 runs, the track's limit" in sneaked.problems[0]


def test_after_the_deadline_an_upload_is_refused_with_the_reason(client, track, teams):
    track.closes_at = timezone.now() - timedelta(minutes=1)
    track.save()
    client.force_login(teams["red"][1])
    response = submit(client, track, run_upload("red-late"))
    assert response.status_code == 400
    assert "the deadline passed on" in response.content.decode()
    assert not Submission.objects.exists() and not Run.objects.exists()


def test_a_closed_track_and_a_missing_description_are_refused(client, track, teams):
    client.force_login(teams["red"][1])
    response = submit(client, track, run_upload("red-a"), description="")
    assert response.status_code == 400 and "Describe how the run was made" in response.content.decode()
    track.open = False
    track.save()
    assert "not open for submissions" in submit(client, track, run_upload("red-a")).content.decode()
    assert not Submission.objects.exists()


def test_a_tag_of_another_team_is_refused_and_a_duplicate_file_is_flagged(client, track, teams):
    client.force_login(teams["red"][1])
    _receipt(submit(client, track, run_upload("shared")))
    client.force_login(teams["blue"][1])
    taken = _receipt(submit(client, track, run_upload("shared")))
    assert taken.status == "refused" and "taken by another run" in taken.problems[0]
    assert Run.objects.get(tag="shared").team == "red"
    client.force_login(teams["red"][1])
    copy = _receipt(submit(client, track, run_upload("shared"), priority="3"))
    assert any("the same file" in w and "your team's earlier submission" in w for w in copy.warnings)


def test_an_ir_metadata_header_is_accepted_kept_and_sets_the_run_type(client, track, teams):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests import factories

    header = ("# ir_metadata.start\n# schema-version: 0.1\n# tag: red-meta\n# method:\n#   automatic: false\n"
              "#   retrieval:\n#   - name: bm25\n#     k1: 0.9\n# ir_metadata.end\n")
    body = factories.run_lines("red-meta", {"301": ["d1", "d2", "d3"]})
    client.force_login(teams["red"][1])
    submission = _receipt(submit(client, track, SimpleUploadedFile("meta.run", (header + body).encode())))
    assert submission.status == "accepted", submission.problems
    assert submission.run_type == "manual" and submission.metadata["method"]["retrieval"][0]["k1"] == 0.9
    page = client.get(f"/participate/{track.collection.slug}/submissions/{submission.pk}/").content.decode()
    assert "ir_metadata header" in page and "k1: 0.9" in page
    broken = header.replace("#   automatic: false", "#   automatic: [unclosed") + body + "301 Q0 d9 x 1 red-meta\n"
    refused = _receipt(submit(client, track, SimpleUploadedFile("bad.run", broken.encode())))
    assert refused.status == "refused"
    assert any(p.startswith("bad.run:") and "not valid YAML" in p for p in refused.problems)
    assert "bad.run:13: rank 'x' is not an integer" in refused.problems  # line numbers count the header

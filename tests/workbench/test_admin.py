"""The admin shows every model of a collection to staff, and nothing to others."""
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from tests import factories


@pytest.fixture
def staff_client(client, db):
    admin = User.objects.create_superuser("root", password="pw")
    client.force_login(admin)
    return client


@pytest.mark.parametrize("path,needle", [
    ("/admin/workbench/collection/", "robust"),
    ("/admin/workbench/topic/", "Hubble Telescope Achievements"),
    ("/admin/workbench/document/", "d1"),
    ("/admin/workbench/run/", "alpha"),
    ("/admin/judging/judgment/", "d2"),
])
def test_admin_lists_the_collection_content(staff_client, collection, run_files, tmp_path, path, needle):
    factories.add_documents(collection, ["d1", "d2"])
    call_command("import_runs", "robust", str(run_files[0]), stdout=StringIO())
    qrels = tmp_path / "q"
    qrels.write_text("301 0 d2 1\n")
    call_command("import_qrels", "robust", str(qrels), stdout=StringIO())
    response = staff_client.get(path)
    assert response.status_code == 200
    assert needle in response.content.decode()


def test_admin_search_finds_topics_by_words_of_their_title(staff_client, collection):
    response = staff_client.get("/admin/workbench/topic/", {"q": "Poliomyelitis"})
    body = response.content.decode()
    assert "Poliomyelitis and Post-Polio" in body and "Hubble" not in body


def test_judgments_cannot_be_edited_or_deleted_in_the_admin(staff_client, collection, tmp_path):
    qrels = tmp_path / "q"
    qrels.write_text("301 0 d2 1\n")
    call_command("import_qrels", "robust", str(qrels), stdout=StringIO())
    from judging.models import Judgment

    judgment = Judgment.objects.get()
    response = staff_client.post(f"/admin/judging/judgment/{judgment.pk}/delete/", {"post": "yes"})
    assert response.status_code == 403
    assert Judgment.objects.filter(pk=judgment.pk).exists()


def test_assessors_cannot_open_the_admin(client, assessor):
    client.force_login(assessor)
    response = client.get("/admin/workbench/run/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]


def test_anonymous_users_are_sent_to_the_login_page(client, db):
    response = client.get("/")
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_home_page_lists_collections_for_organizers(client, organizer, collection):
    client.force_login(organizer)
    body = client.get("/").content.decode()
    assert "Robust sample" in body and "/judge/organize/robust/" in body


def test_the_home_page_sends_assessors_to_their_queue(client, assessor, collection):
    client.force_login(assessor)
    response = client.get("/")
    assert response.status_code == 302 and response["Location"] == "/judge/"


@pytest.mark.parametrize("path", ["/admin/workbench/run/add/", "/admin/pooling/pool/add/",
                                  "/admin/pooling/poolentry/add/", "/admin/judging/judgment/add/"])
def test_the_admin_cannot_make_runs_without_data_or_pools_without_entries(staff_client, path):
    assert staff_client.get(path).status_code == 403
    assert staff_client.post(path, {"tag": "empty", "name": "main"}).status_code == 403


def test_the_admin_edits_a_runs_safe_fields_but_not_its_tag(staff_client, collection, run_files):
    from workbench.models import Run

    call_command("import_runs", "robust", str(run_files[0]), stdout=StringIO())
    run = Run.objects.get()
    page = staff_client.get(f"/admin/workbench/run/{run.pk}/change/").content.decode()
    assert 'name="team"' in page and 'name="tag"' not in page
    response = staff_client.post(f"/admin/workbench/run/{run.pk}/change/", {
        "team": "lab", "description": "bm25", "contributes": "", "pool_priority": "2", "tag": "renamed"})
    assert response.status_code == 302
    run.refresh_from_db()
    assert (run.tag, run.team, run.contributes, run.pool_priority) == ("alpha", "lab", False, 2)


def test_a_run_that_lost_its_data_is_named_on_the_results_pages_not_a_500(client, organizer, collection, run_files):
    from workbench.models import Run, RunData

    call_command("import_runs", "robust", str(run_files[0]), stdout=StringIO())
    RunData.objects.all().delete()  # e.g. removed by hand in the database
    client.force_login(organizer)
    for page in ["leaderboard/", "significance/", "curves/", "reusability/", "runs/alpha/", ""]:
        response = client.get(f"/collections/robust/{page}")
        assert response.status_code < 500, page
    leaderboard = client.get("/collections/robust/leaderboard/").content.decode()
    assert "run &#x27;alpha&#x27; of collection &#x27;robust&#x27; has no stored lines" in leaderboard
    assert Run.objects.count() == 1

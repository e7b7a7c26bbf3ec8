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

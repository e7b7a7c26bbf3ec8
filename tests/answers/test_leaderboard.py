"""Results -> Answers: the four scores per run, flags, CSV and JSON; strangers refused."""

from __future__ import annotations

import csv
import io

import pytest

from answers.imports import answers_import
from answers.imports_nuggets import assignments_import, nuggets_import
from tests.answers.generated import write_track
from workbench.collections.services import collection_create
from workbench.models import Topic


@pytest.fixture
def scored(db, tmp_path):
    collection = collection_create(slug="rag", name="RAG sample")
    Topic.objects.bulk_create(Topic(collection=collection, qid=q, title=q) for q in ("1", "2", "3"))
    files = write_track(tmp_path, runs=3, qids=["1", "2", "3"], nuggets=5)
    answers_import(collection=collection, sources=files["answers"])
    nuggets_import(collection=collection, source=files["banks"])
    assignments_import(collection=collection, source=files["assignments"], assessor="nist")
    return collection


def test_organizer_sees_each_answer_run_with_the_four_scores_and_the_unjudged_flag(client, organizer, scored):
    client.force_login(organizer)
    overview = client.get("/collections/rag/").content.decode()
    assert 'href="/answers/rag/leaderboard/"' in overview
    page = client.get("/answers/rag/leaderboard/").content.decode()
    for text in ("run000", "run001", "run002", "Strict vital", "Strict all", "Vital", "All", "Support precision",
                 "cited segments unjudged", "Citation coverage"):
        assert text in page
    data = client.get("/answers/rag/leaderboard/?_export=json").json()
    assert [r["run"] for r in data["runs"]] == sorted((r["run"] for r in data["runs"]),
                                                       key=lambda tag: -next(x["all_score"] for x in data["runs"]
                                                                             if x["run"] == tag))
    assert len(data["answers"]) == 9 and all(r["qid"] == "all" for r in data["runs"])
    rows = list(csv.DictReader(io.StringIO(client.get("/answers/rag/leaderboard/?_export=csv").content.decode())))
    assert len(rows) == 12 and {"strict_vital_score", "vital_score", "support_recall"} <= set(rows[0])


def test_an_outsider_may_not_see_the_answer_leaderboard(client, outsider, scored):
    client.force_login(outsider)
    assert client.get("/answers/rag/leaderboard/").status_code in (403, 404)
    assert client.get("/answers/rag/leaderboard/?_export=json").status_code in (403, 404)


def test_a_collection_without_assignments_says_what_to_do(client, organizer, db):
    collection_create(slug="empty", name="Empty")
    client.force_login(organizer)
    page = client.get("/answers/empty/leaderboard/")
    assert page.status_code == 200 and "No answer has nugget assignments yet" in page.content.decode()

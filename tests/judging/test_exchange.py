"""The JSON-lines judgment export round-trips: imported into a new collection it gives the same qrels
(every policy) and the same comments, passages and "cannot judge" records; bad lines are named."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging.assignments import assignments_create
from judging.exchange import judgments_jsonl
from judging.models import AssignmentItem, Judgment
from judging.qrels import qrels
from judging.services import judgment_record
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def judged(pool, assessor, outsider):
    assignments_create(pool=pool, assessors=[assessor, outsider], topics=["301"], overlap=2)
    for user, grades in ((assessor, [2, 1, 0, None]), (outsider, [2, 0, 0, 1])):
        items = AssignmentItem.objects.filter(assignment__assessor=user).order_by("judging_order")
        for n, (item, grade) in enumerate(zip(items, grades, strict=True)):
            judgment_record(item_id=item.pk, user=user, grade=grade, cannot_judge=grade is None,
                            client_token=f"{user.pk}-{n}", time_spent_ms=4000 + n, comment=f"why {n}",
                            rationale=f"passage {n}" if n == 1 else "", passages=[[0, 4]] if n == 1 else [])
    first = AssignmentItem.objects.filter(assignment__assessor=assessor).order_by("judging_order").first()
    judgment_record(item_id=first.pk, user=assessor, grade=0, client_token="revise", comment="changed my mind")
    return pool.collection


def test_the_export_round_trips_into_a_new_collection(judged, tmp_path):
    path = tmp_path / "j.jsonl"
    call_command("export_judgments", "robust", "-o", str(path), stdout=StringIO(), stderr=StringIO())
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(lines) == Judgment.objects.count() == 9
    assert any(r["cannot_judge"] and r["grade"] is None for r in lines)
    assert [r["revision"] for r in lines if r["comment"] == "changed my mind"] == [2]
    assert sum(1 for r in lines if r["passages"] == [[0, 4]]) == 2
    copy = factories.collection_with_topics(slug="copy", grades=judged.scale)
    out = StringIO()
    call_command("import_judgments", "copy", str(path), stdout=out)
    assert "imported 9 judgment records by 2 assessors on 1 topics" in out.getvalue()
    for policy in ("majority", "adjudicated"):
        assert qrels(copy, policy=policy).to_dict("records") == qrels(judged, policy=policy).to_dict("records")
    assert judgments_jsonl(copy) == judgments_jsonl(judged)  # comments, passages, times, revisions alike


@pytest.mark.parametrize(("line", "message"), [
    ("not json", "j.jsonl:2: not JSON"),
    ('{"qid": "999", "docno": "d1", "assessor": "a", "grade": 1}', "j.jsonl:2: topic '999' is not in the collection"),
    ('{"qid": "301", "docno": "d1", "assessor": "a", "grade": 7}', "j.jsonl:2: grade 7 is not on the collection's"),
    ('{"qid": "301", "docno": "d1"}', "j.jsonl:2: a judgment needs qid, docno and assessor"),
])
def test_a_bad_line_is_named_and_nothing_is_imported(collection, tmp_path, line, message):
    path = tmp_path / "j.jsonl"
    path.write_text('{"qid": "301", "docno": "d1", "assessor": "a", "grade": 1}\n' + line + "\n")
    with pytest.raises(CommandError, match=message):
        call_command("import_judgments", "robust", str(path), stdout=StringIO())
    assert not Judgment.objects.exists()


def test_the_release_bundle_and_the_downloads_page_carry_the_judgments(judged, client, organizer):
    import io
    import zipfile

    from evaluation.release import release_bundle

    bundle = release_bundle(judged)
    text = zipfile.ZipFile(io.BytesIO(bundle.data)).read("robust/judgments.jsonl").decode()
    assert "changed my mind" in text and "passage 1" in text
    client.force_login(organizer)
    assert client.get("/collections/robust/downloads/judgments.jsonl").content.decode() == text

"""Documents the workbench holds no text for: the organizer is told before assigning them, the assessor is told
what to do, and no grade is recorded for a text nobody saw (unless the collection allows judging by link)."""

from __future__ import annotations

import html
import re

import pytest

from judging.assignments import assignments_create
from judging.models import AssignmentItem, Judgment
from judging.selectors import pooled_without_text
from judging.services import JudgmentRefused, judgment_record
from pooling.models import Pool, PoolEntry
from workbench.collections.services import documents_import
from workbench.models import Document


@pytest.fixture
def textless(pool):
    """The conftest pool (d1..d6 with text) plus, on topic 302, d9 (no document row) and d10 (an empty row)."""
    topic = pool.collection.topics.get(qid="302")
    Document.objects.create(collection=pool.collection, docno="d10", title="", text="")
    for order, docno in enumerate(["d9", "d10"], start=3):
        PoolEntry.objects.create(pool=pool, topic=topic, docno=docno, judging_order=order, pool_rank=order)
    return pool


def item(user, docno: str) -> AssignmentItem:
    return AssignmentItem.objects.get(assignment__assessor=user, docno=docno)


def post_grade(client, entry: AssignmentItem, **data):
    return client.post(f"/judge/item/{entry.pk}/", {"client_token": f"t-{entry.pk}-{len(data)}", **data})


def test_the_selector_counts_pooled_documents_with_no_row_or_an_empty_one(textless):
    Pool.objects.create(collection=textless.collection, name="empty")
    rows = {row["pool"].name: row for row in pooled_without_text(textless.collection)}
    assert (rows["main"]["pooled"], rows["main"]["without_text"]) == (8, 2)
    assert rows["main"]["examples"] == ["d10", "d9"]
    assert (rows["empty"]["pooled"], rows["empty"]["without_text"]) == (0, 0)


def test_the_console_and_the_assign_page_say_how_many_pooled_documents_have_no_text(client, organizer, textless):
    client.force_login(organizer)
    for url in ("/console/robust/", "/judge/organize/robust/assign/"):
        page = client.get(url).content.decode()
        text = re.sub(r"<[^>]+>", "", page)
        assert "Pool main: 2 of 8 pooled documents have no text (e.g. d10, d9)." in text, url
        assert "Assessors cannot grade a document without text" in text, url


def test_a_pool_whose_documents_all_have_text_says_so(client, organizer, pool):
    client.force_login(organizer)
    text = re.sub(r"<[^>]+>", "", client.get("/console/robust/").content.decode())
    assert "Pool main: all 6 pooled documents have text." in text


def test_assigning_a_pool_with_documents_without_text_says_so(client, organizer, assessor, textless):
    client.force_login(organizer)
    response = client.post("/judge/organize/robust/assign/", {"pool": textless.pk, "assessors": [assessor.pk],
                                                               "overlap": 1}, follow=True)
    assert "2 of the pool's 8 documents have no text: assessors cannot grade them until the documents are " \
           "uploaded." in html.unescape(response.content.decode())
    assert AssignmentItem.objects.count() == 8


def test_only_organizers_see_the_figure(client, assessor, outsider, textless):
    for user in (assessor, outsider):
        client.force_login(user)
        for url in ("/console/robust/", "/judge/organize/robust/assign/"):
            response = client.get(url)
            assert response.status_code in (302, 403), (user, url)
            assert b"have no text" not in response.content


def test_the_assessor_is_told_what_to_do_and_the_grade_buttons_are_off(client, assessor, textless):
    assignments_create(pool=textless, assessors=[assessor])
    client.force_login(assessor)
    page = client.get(f"/judge/item/{item(assessor, 'd9').pk}/").content.decode()
    assert "The workbench holds no text for this document." in page
    assert "Skip for now" in page and "Cannot judge" in page and "tell your organizer" in page
    assert 'target="_blank"' not in page, "no document URL: nothing to link"
    grades = re.findall(r'<button type="submit" name="grade"[^>]*>', page)
    assert len(grades) == 3 and all(" disabled" in b for b in grades)


def test_a_grade_for_a_document_without_text_is_refused_and_nothing_is_recorded(client, assessor, textless):
    assignments_create(pool=textless, assessors=[assessor])
    for docno in ("d9", "d10"):
        with pytest.raises(JudgmentRefused, match="holds no text for this document"):
            judgment_record(item_id=item(assessor, docno).pk, user=assessor, grade=1, client_token=f"s{docno}")
    client.force_login(assessor)
    response = post_grade(client, item(assessor, "d9"), grade=2)
    assert response.status_code == 400
    assert "No grade was recorded: the workbench holds no text for this document" in response.content.decode()
    assert not Judgment.objects.exists()
    assert item(assessor, "d9").latest is None


def test_cannot_judge_and_skip_still_work_for_a_document_without_text(client, assessor, textless):
    assignments_create(pool=textless, assessors=[assessor])
    client.force_login(assessor)
    d9 = item(assessor, "d9")
    response = post_grade(client, d9, skip="1")
    assert response.status_code == 302
    d9.refresh_from_db()
    assert d9.judging_order > item(assessor, "d10").judging_order, "skipped to the end of the topic"
    assert post_grade(client, d9, cannot_judge="on").status_code == 302
    judgment = Judgment.objects.get()
    assert (judgment.docno, judgment.cannot_judge, judgment.grade) == ("d9", True, None)


def test_the_document_url_is_linked_in_a_new_tab_but_grades_need_judging_by_link(client, assessor, textless):
    collection = textless.collection
    collection.document_url = "https://example.org/doc/{docno}?from=workbench"
    collection.save()
    Document.objects.create(collection=collection, docno="a b/7", title="", text="")
    PoolEntry.objects.create(pool=textless, topic=collection.topics.get(qid="302"), docno="a b/7",
                             judging_order=9, pool_rank=9)
    assignments_create(pool=textless, assessors=[assessor])
    client.force_login(assessor)
    page = client.get(f"/judge/item/{item(assessor, 'a b/7').pk}/").content.decode()
    link = re.search(r'<a class="open-link" href="([^"]+)" target="_blank" rel="noopener noreferrer">', page)
    assert link and link.group(1) == "https://example.org/doc/a%20b%2F7?from=workbench"
    assert "the organizer has not allowed grading by link" in page
    assert post_grade(client, item(assessor, "a b/7"), grade=1).status_code == 400
    assert not Judgment.objects.exists()


def test_with_judging_by_link_the_assessor_grades_from_the_documents_page(client, assessor, textless):
    collection = textless.collection
    collection.document_url = "https://example.org/doc/{docno}"
    collection.judge_by_link = True
    collection.save()
    assignments_create(pool=textless, assessors=[assessor])
    client.force_login(assessor)
    page = client.get(f"/judge/item/{item(assessor, 'd9').pk}/").content.decode()
    assert 'href="https://example.org/doc/d9" target="_blank" rel="noopener noreferrer"' in page
    assert "Read it on that page, then choose its grade as usual" in page
    assert not re.search(r'name="grade"[^>]* disabled', page)
    assert post_grade(client, item(assessor, "d9"), grade=2).status_code == 302
    assert list(Judgment.objects.values_list("docno", "grade")) == [("d9", 2)]


def test_judging_by_link_without_a_document_url_records_no_grade(assessor, textless):
    collection = textless.collection
    collection.judge_by_link = True  # the settings form refuses this; the service does not rely on it
    collection.save()
    assignments_create(pool=textless, assessors=[assessor])
    with pytest.raises(JudgmentRefused):
        judgment_record(item_id=item(assessor, "d9").pk, user=assessor, grade=1, client_token="x")


def test_importing_the_documents_later_fills_them_in(client, assessor, textless, tmp_path):
    assignments_create(pool=textless, assessors=[assessor])
    client.force_login(assessor)
    d9 = item(assessor, "d9")
    assert "holds no text" in client.get(f"/judge/item/{d9.pk}/").content.decode()
    source = tmp_path / "late.jsonl"
    source.write_text('{"docno": "d9", "title": "Hubble at last", "text": "The telescope saw far galaxies."}\n')
    documents_import(collection=textless.collection, sources=[source])
    page = client.get(f"/judge/item/{d9.pk}/").content.decode()
    assert "The telescope saw far galaxies." in page and "holds no text" not in page
    rows = {row["pool"].name: row for row in pooled_without_text(textless.collection)}
    assert rows["main"]["without_text"] == 1  # d10 only
    assert post_grade(client, d9, grade=1).status_code == 302
    assert Judgment.objects.get().grade == 1


@pytest.mark.parametrize(("url", "says"), [
    ("https://example.org/doc/", "must contain {docno}"),
    ("ftp://example.org/{docno}", "must start with http:// or https://"),
    ("javascript:alert(1)//{docno}", "must start with http:// or https://"),
    ("https://exa mple.org/{docno}", "not a valid web address"),
])
def test_the_settings_refuse_a_document_url_that_is_not_a_web_address_with_a_docno(client, organizer, collection,
                                                                                    url, says):
    client.force_login(organizer)
    response = client.post("/console/robust/edit/", _settings(collection, document_url=url))
    assert response.status_code == 400
    assert says in response.content.decode()
    collection.refresh_from_db()
    assert collection.document_url == ""


def test_the_settings_save_a_document_url_and_judging_by_link(client, organizer, collection):
    client.force_login(organizer)
    response = client.post("/console/robust/edit/", _settings(collection, judge_by_link="on"))
    assert response.status_code == 400
    assert "Judging by link needs a document URL" in response.content.decode()
    response = client.post("/console/robust/edit/", _settings(collection, judge_by_link="on",
                                                               document_url="https://example.org/d/{docno}"))
    assert response.status_code == 302
    collection.refresh_from_db()
    assert (collection.document_url, collection.judge_by_link) == ("https://example.org/d/{docno}", True)


def _settings(collection, **changes) -> dict:
    data = {"name": collection.name, "description": "", "relevant_from": 1, "max_depth": 1000, "guidelines": "",
            "document_url": "", "grade-TOTAL_FORMS": 2, "grade-INITIAL_FORMS": 0, "grade-MIN_NUM_FORMS": 0,
            "grade-MAX_NUM_FORMS": 12}
    for n, g in enumerate(collection.scale):
        data[f"grade-{n}-grade"], data[f"grade-{n}-label"] = g["grade"], g["label"]
    return data | changes


def test_a_document_url_that_is_not_http_is_never_linked(assessor, client, textless):
    collection = textless.collection
    collection.document_url = "javascript:alert(1)//{docno}"  # set around the form's validation
    collection.save()
    assignments_create(pool=textless, assessors=[assessor])
    client.force_login(assessor)
    page = client.get(f"/judge/item/{item(assessor, 'd9').pk}/").content.decode()
    assert "javascript:" not in page and "holds no text" in page

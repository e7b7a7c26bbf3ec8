"""Judgments propagated inside accepted near-duplicate classes: their own records, only in the "with
duplicates" qrels, revocable, and skipped in the judging queue."""

from __future__ import annotations

import pytest

from evaluation.release import qrels_text
from judging.agreement import majority_qrels
from judging.assignments import assignments_create
from judging.duplicates import duplicate_class_set, qrels_with_duplicates
from judging.models import AssignmentItem, Judgment, PropagatedJudgment
from judging.qrels import assessor_judgments, qrels
from judging.selectors import assignment_counts, next_item_for
from judging.services import adjudication_record, judgment_record
from workbench.models import DuplicateClass, DuplicateMember


@pytest.fixture
def klass(pool):
    """d1 (representative) with near-duplicates d2 (0.9) and d4 (0.8); pool: 301 -> d3, d1, d4, d2."""
    c = DuplicateClass.objects.create(collection=pool.collection, representative="d1", similarity=0.8,
                                      threshold=0.7, shingle=3)
    DuplicateMember.objects.create(duplicate_class=c, collection=pool.collection, docno="d2", similarity=0.9)
    DuplicateMember.objects.create(duplicate_class=c, collection=pool.collection, docno="d4", similarity=0.8)
    return c


def judge(user, qid, docno, grade):
    item = AssignmentItem.objects.get(assignment__assessor=user, assignment__topic__qid=qid, docno=docno)
    return judgment_record(item_id=item.pk, user=user, grade=grade)


def test_propagated_judgments_appear_in_the_with_duplicates_qrels_only(pool, klass, assessor, organizer):
    assignments_create(pool=pool, assessors=[assessor])
    duplicate_class_set(duplicate_class=klass, status="accepted", user=organizer)
    source = judge(assessor, "301", "d1", 2)
    judge(assessor, "301", "d3", 0)
    propagated = PropagatedJudgment.objects.order_by("docno")
    assert [(p.docno, p.grade, p.source_id, p.duplicate_class_id, p.similarity) for p in propagated] == [
        ("d2", 2, source.pk, klass.pk, 0.9), ("d4", 2, source.pk, klass.pk, 0.8)]
    assert qrels_text(pool.collection) == "301 0 d1 2\n301 0 d3 0\n"  # the default qrels: as before
    assert qrels_text(pool.collection, duplicates=True) == "301 0 d1 2\n301 0 d2 2\n301 0 d3 0\n301 0 d4 2\n"
    # never the assessor's own work, never in agreement
    assert Judgment.objects.count() == 2 and len(assessor_judgments(pool.collection)) == 2
    assert len(majority_qrels(assessor_judgments(pool.collection))) == 2


def test_the_queue_skips_a_document_whose_class_is_judged_unless_the_organizer_wants_it_judged(
        pool, klass, assessor, organizer):
    assignments_create(pool=pool, assessors=[assessor])
    duplicate_class_set(duplicate_class=klass, status="accepted", user=organizer)
    judge(assessor, "301", "d3", 0)
    judge(assessor, "301", "d1", 1)
    assert next_item_for(assessor).docno == "d6"  # d4 and d2 (topic 301) are covered by d1's grade
    assert assignment_counts(AssignmentItem.objects.get(docno="d1").assignment_id) == (4, 4)
    duplicate_class_set(duplicate_class=klass, judge_members=True, user=organizer)
    assert next_item_for(assessor).docno == "d4"


def test_a_members_own_judgment_wins_over_the_propagated_one(pool, klass, assessor, organizer):
    assignments_create(pool=pool, assessors=[assessor])
    duplicate_class_set(duplicate_class=klass, status="accepted", user=organizer, judge_members=True)
    judge(assessor, "301", "d1", 2)
    judge(assessor, "301", "d4", 0)
    assert list(PropagatedJudgment.objects.values_list("docno", flat=True)) == ["d2"]
    with_dups = qrels_with_duplicates(pool.collection)
    assert dict(zip(with_dups["docno"], with_dups["rel"], strict=True)) == {"d1": 2, "d2": 2, "d4": 0}
    # an adjudication of the representative changes what is propagated
    adjudication_record(collection=pool.collection, qid="301", docno="d1", grade=1, user=organizer)
    assert list(PropagatedJudgment.objects.values_list("docno", "grade")) == [("d2", 1)]


def test_revoking_a_class_removes_its_propagated_judgments_and_nothing_else(pool, klass, assessor, organizer):
    other = DuplicateClass.objects.create(collection=pool.collection, representative="d5", similarity=1.0,
                                          threshold=0.7, shingle=3)
    DuplicateMember.objects.create(duplicate_class=other, collection=pool.collection, docno="d6", similarity=1.0)
    assignments_create(pool=pool, assessors=[assessor])
    for c in (klass, other):
        duplicate_class_set(duplicate_class=c, status="accepted", user=organizer)
    judge(assessor, "301", "d1", 2)
    judge(assessor, "302", "d5", 1)
    judgments_before, own_qrels = Judgment.objects.count(), qrels(pool.collection)
    assert PropagatedJudgment.objects.count() == 3
    duplicate_class_set(duplicate_class=klass, status="split", user=organizer)
    assert list(PropagatedJudgment.objects.values_list("docno", flat=True)) == ["d6"]
    assert Judgment.objects.count() == judgments_before and qrels(pool.collection).equals(own_qrels)
    assert qrels_text(pool.collection, duplicates=True) == "301 0 d1 2\n302 0 d5 1\n302 0 d6 1\n"
    assert next_item_for(assessor).docno in {"d3", "d4", "d2"}  # the split class's members are judged again


def test_a_proposed_class_propagates_nothing(pool, klass, assessor):
    assignments_create(pool=pool, assessors=[assessor])
    judge(assessor, "301", "d1", 2)
    assert not PropagatedJudgment.objects.exists()
    assert qrels_text(pool.collection, duplicates=True) == qrels_text(pool.collection)


# --- the organizer's pages ------------------------------------------------------------------------

def pages(slug, class_id):
    return [f"/judge/organize/{slug}/duplicates/", f"/judge/organize/{slug}/duplicates/{class_id}/"]


def test_the_organizer_sees_the_classes_and_the_two_texts_side_by_side(client, pool, klass, organizer):
    from workbench.models import Document

    Document.objects.filter(collection=pool.collection, docno="d1").update(text="bz2.BZ2File.read reads bytes")
    Document.objects.filter(collection=pool.collection, docno="d2").update(text="lzma.LZMAFile.read reads bytes")
    client.force_login(organizer)
    listing = client.get(pages(pool.collection.slug, klass.pk)[0]).content.decode()
    assert "d1" in listing and "0.800" in listing and "Proposed" in listing
    page = client.get(pages(pool.collection.slug, klass.pk)[1]).content.decode()
    # the two texts, the words that differ marked in each
    assert "<del>bz2.BZ2File.read</del> reads bytes" in page and "<ins>lzma.LZMAFile.read</ins> reads bytes" in page
    assert "2 words differ" in page and "0.900" in page  # the titles (Title of d1, of d2) and the first words


def test_accepting_and_splitting_a_class_from_its_page(client, pool, klass, assessor, organizer):
    assignments_create(pool=pool, assessors=[assessor])
    judge(assessor, "301", "d1", 2)
    client.force_login(organizer)
    url = pages(pool.collection.slug, klass.pk)[1]
    answer = client.post(url, {"status": "accepted"}, follow=True).content.decode()
    assert "2 propagated judgments (were 0)" in answer and "d1 judged by arthur" in answer
    answer = client.post(url, {"status": "split"}, follow=True).content.decode()
    assert "0 propagated judgments (were 2)" in answer and not PropagatedJudgment.objects.exists()
    assert client.post(url, {"status": "nonsense"}).status_code == 200  # re-rendered with one clear message


def test_detection_is_started_from_the_page_and_a_bad_threshold_is_one_clear_message(client, pool, organizer):
    client.force_login(organizer)
    slug = pool.collection.slug
    answer = client.post(f"/judge/organize/{slug}/duplicates/find/", {"threshold": "3", "shingle": "3"}, follow=True)
    assert "threshold: Ensure this value is less than or equal to 1" in answer.content.decode()
    started = client.post(f"/judge/organize/{slug}/duplicates/find/", {"threshold": "0.7", "shingle": "3"})
    assert started.status_code == 302 and started["Location"].startswith("/jobs/")


@pytest.mark.parametrize("who, status", [("assessor", 403), ("outsider", 403), (None, 302)])
def test_only_organizers_reach_the_near_duplicate_pages(client, pool, klass, request, who, status):
    if who:
        client.force_login(request.getfixturevalue(who))
    slug = pool.collection.slug
    for url in pages(slug, klass.pk):
        assert client.get(url).status_code == status
    assert client.post(pages(slug, klass.pk)[1], {"status": "accepted"}).status_code == status
    assert client.post(f"/judge/organize/{slug}/duplicates/find/", {"threshold": "0.7", "shingle": "3"}
                       ).status_code == status
    klass.refresh_from_db()
    assert klass.status == "proposed"


def test_a_class_of_another_collection_is_not_found(client, pool, klass, organizer):
    from tests import factories

    other = factories.collection_with_topics(slug="other")
    client.force_login(organizer)
    assert client.get(f"/judge/organize/{other.slug}/duplicates/{klass.pk}/").status_code == 404


def test_the_leaderboard_says_it_scores_without_propagated_judgments(client, pool, klass, assessor, organizer,
                                                                     tmp_path):
    from io import StringIO

    from django.core.management import call_command

    from tests import factories

    for tag in ("alpha", "beta"):
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, {"301": ["d1", "d2"] if tag == "alpha" else ["d3", "d1"]}))
        call_command("import_runs", pool.collection.slug, str(path), "--no-pool", stdout=StringIO())
    assignments_create(pool=pool, assessors=[assessor])
    duplicate_class_set(duplicate_class=klass, status="accepted", user=organizer)
    judge(assessor, "301", "d1", 2)
    client.force_login(organizer)
    page = client.get(f"/collections/{pool.collection.slug}/leaderboard/").content.decode()
    assert "Scored on the qrels <strong>without</strong> the grades propagated" in page
    download = client.get(f"/collections/{pool.collection.slug}/downloads/qrels.txt?duplicates=1")
    assert download.content.decode() == "301 0 d1 2\n301 0 d2 2\n301 0 d4 2\n"
    assert "with-duplicates" in download["Content-Disposition"]


def test_taking_one_document_out_of_a_class_revokes_its_propagated_judgment_only(client, pool, klass, assessor,
                                                                                 organizer):
    assignments_create(pool=pool, assessors=[assessor])
    duplicate_class_set(duplicate_class=klass, status="accepted", user=organizer)
    judge(assessor, "301", "d1", 2)
    client.force_login(organizer)
    url = pages(pool.collection.slug, klass.pk)[1]
    answer = client.post(url, {"remove": "d4"}, follow=True).content.decode()
    assert "d4 taken out" in answer and "1 propagated judgments (were 2)" in answer
    assert list(PropagatedJudgment.objects.values_list("docno", flat=True)) == ["d2"]
    klass.refresh_from_db()
    assert klass.similarity == 0.9 and klass.status == "accepted"
    answer = client.post(url, {"remove": "d9"}, follow=True).content.decode()
    assert "&#x27;d9&#x27; is not a member" in answer
    judge(assessor, "301", "d3", 0)
    assert next_item_for(assessor).docno == "d4"  # taken out of the class: judged on its own again


def test_the_release_bundle_adds_the_with_duplicates_qrels_beside_the_qrels(pool, klass, assessor, organizer):
    import io
    import zipfile

    from evaluation.release import release_bundle

    assignments_create(pool=pool, assessors=[assessor])
    assert "qrels.with-duplicates.txt" not in release_bundle(pool.collection).files
    duplicate_class_set(duplicate_class=klass, status="accepted", user=organizer)
    judge(assessor, "301", "d1", 1)
    bundle = zipfile.ZipFile(io.BytesIO(release_bundle(pool.collection).data))
    assert bundle.read("robust/qrels.txt").decode() == "301 0 d1 1\n"
    assert bundle.read("robust/qrels.with-duplicates.txt").decode() == "301 0 d1 1\n301 0 d2 1\n301 0 d4 1\n"
    assert "`qrels.with-duplicates.txt`" in bundle.read("robust/README.md").decode()

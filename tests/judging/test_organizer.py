"""Organizer pages of judging: dashboard figures, assigning from the web, and who may see them."""

from judging.assignments import assignments_create
from judging.models import AssignmentItem
from judging.services import judgment_record


def test_dashboard_shows_judged_over_assigned_rate_and_median_time(client, pool, organizer, assessor):
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    items = list(AssignmentItem.objects.order_by("judging_order"))
    judgment_record(item_id=items[0].pk, user=assessor, grade=1, client_token="a", time_spent_ms=10_000)
    judgment_record(item_id=items[1].pk, user=assessor, grade=0, client_token="b", time_spent_ms=20_000)
    client.force_login(organizer)
    body = client.get("/judge/organize/robust/").content.decode()
    row = body[body.index(">arthur<"):]
    row = row[: row.index("</tr>")]
    cells = [c.split(">")[-1] for c in row.split("</td>")]
    assert cells[1:5] == ["2", "4", "240", "15.0"], cells  # judged, assigned, per hour, median seconds


def test_an_organizer_assigns_topics_from_the_web(client, pool, organizer, assessor, outsider):
    client.force_login(organizer)
    response = client.post("/judge/organize/robust/assign/", {
        "pool": pool.pk, "assessors": [assessor.pk, outsider.pk], "overlap": 2})
    assert response.status_code == 302
    assert AssignmentItem.objects.count() == 12


def test_the_assign_form_names_the_problem(client, pool, organizer, assessor):
    client.force_login(organizer)
    response = client.post("/judge/organize/robust/assign/", {
        "pool": pool.pk, "assessors": [assessor.pk], "overlap": 3})
    assert response.status_code == 400 and b"overlap 3 needs between 1 and 1" in response.content
    assert AssignmentItem.objects.count() == 0


def test_assessors_and_outsiders_cannot_open_the_organizer_pages(client, pool, assessor, outsider):
    for user in (assessor, outsider):
        client.force_login(user)
        assert client.get("/judge/organize/robust/").status_code == 403
        assert client.post("/judge/organize/robust/assign/", {"pool": pool.pk, "assessors": [user.pk],
                                                              "overlap": 1}).status_code == 403
    assert AssignmentItem.objects.count() == 0


def _two_assessors_disagree(pool, assessor, outsider):
    assignments_create(pool=pool, assessors=[assessor, outsider], topics=["301"], overlap=2)
    for user, grades in ((assessor, [2, 1, 0, 0]), (outsider, [2, 0, 0, 1])):
        items = AssignmentItem.objects.filter(assignment__assessor=user).order_by("judging_order")
        for n, (item, grade) in enumerate(zip(items, grades, strict=True)):
            judgment_record(item_id=item.pk, user=user, grade=grade, client_token=f"{user.pk}-{n}")


def test_agreement_page_shows_kappa_and_lists_disagreements(client, pool, organizer, assessor, outsider):
    _two_assessors_disagree(pool, assessor, outsider)
    client.force_login(organizer)
    body = client.get("/judge/organize/robust/agreement/").content.decode()
    assert "Disagreements (2)" in body
    assert "arthur: 1, oscar: 0" in body and "arthur: 0, oscar: 1" in body
    assert "0.500" in body  # same grade on 2 of 4 shared documents


def test_an_adjudicated_grade_replaces_the_majority_in_the_qrels(client, pool, organizer, assessor, outsider):
    from judging.qrels import qrels

    _two_assessors_disagree(pool, assessor, outsider)
    disputed = AssignmentItem.objects.filter(assignment__assessor=assessor).order_by("judging_order")[1].docno
    before = qrels(pool.collection).set_index("docno")["rel"]
    assert before[disputed] == 0, "a 1-vs-0 tie goes to the lower grade"
    client.force_login(organizer)
    response = client.post("/judge/organize/robust/agreement/", {"qid": "301", "docno": disputed, "grade": "1"})
    assert response.status_code == 302
    assert qrels(pool.collection).set_index("docno")["rel"][disputed] == 1
    assert qrels(pool.collection, policy="majority").set_index("docno")["rel"][disputed] == 0


def test_assessors_cannot_see_agreement_or_adjudicate(client, pool, assessor, outsider):
    _two_assessors_disagree(pool, assessor, outsider)
    client.force_login(assessor)
    assert client.get("/judge/organize/robust/agreement/").status_code == 403
    response = client.post("/judge/organize/robust/agreement/", {"qid": "301", "docno": "d1", "grade": "2"})
    assert response.status_code == 403
    from judging.models import Judgment

    assert not Judgment.objects.filter(source="adjudication").exists()

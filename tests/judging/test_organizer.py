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

"""Organizer pages of judging: dashboard figures, assigning from the web, and who may see them."""

import re

from judging.assignments import assignments_create
from judging.models import AssignmentItem
from judging.services import judgment_record
from tests import factories


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
    from django.contrib.auth.models import Group

    outsider.groups.add(Group.objects.get_or_create(name="assessors")[0])
    client.force_login(organizer)
    response = client.post("/judge/organize/robust/assign/", {
        "pool": pool.pk, "assessors": [assessor.pk, outsider.pk], "overlap": 2})
    assert response.status_code == 302
    assert AssignmentItem.objects.count() == 12


def test_the_assign_form_names_the_problem(client, pool, organizer, assessor):
    client.force_login(organizer)
    response = client.post("/judge/organize/robust/assign/", {
        "pool": pool.pk, "assessors": [assessor.pk], "overlap": 3})
    assert response.status_code == 400 and b"overlap 3 needs between 1 and 1 assessors" in response.content
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
    assert re.search(r"arthur: 1 (<span[^>]*>[^<]*</span>)?<br>oscar: 0", body)
    assert re.search(r"arthur: 0 (<span[^>]*>[^<]*</span>)?<br>oscar: 1", body)
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


def _assessor(name):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(name, password=f"pw-{name}-1")
    user.groups.add(Group.objects.get_or_create(name="assessors")[0])
    return user


def test_a_second_assessor_is_added_to_a_topic_with_overlap_two(client, pool, organizer, assessor):
    client.force_login(organizer)
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    bea = _assessor("bea")
    topic = pool.collection.topics.get(qid="301")
    response = client.post("/judge/organize/robust/assign/", {"pool": pool.pk, "assessors": [bea.pk],
                                                               "topics": [topic.pk], "overlap": 2})
    assert response.status_code == 302
    held = sorted(AssignmentItem.objects.filter(assignment__assessor=bea).values_list("docno", flat=True))
    assert held == ["d1", "d2", "d3", "d4"]
    again = client.post("/judge/organize/robust/assign/", {"pool": pool.pk, "assessors": [bea.pk],
                                                            "topics": [topic.pk], "overlap": 2})
    assert again.status_code == 400 and "nothing to assign: every document of these topics already has 2" in \
        again.content.decode()


def test_the_assign_form_offers_only_assessors(client, pool, organizer, assessor, outsider):
    client.force_login(organizer)
    page = client.get("/judge/organize/robust/assign/").content.decode()
    offered = set(re.findall(r'name="assessors" value="(\d+)"', page))
    assert offered == {str(assessor.pk)}  # not the outsider, not the organizer
    response = client.post("/judge/organize/robust/assign/", {"pool": pool.pk, "assessors": [outsider.pk]})
    assert response.status_code == 400 and not AssignmentItem.objects.exists()


def test_the_dashboard_reassigns_and_unassigns_the_unjudged_documents(client, pool, organizer, assessor):
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    first = AssignmentItem.objects.order_by("judging_order").first()
    judgment_record(item_id=first.pk, user=assessor, grade=1, client_token="kept")
    bea = _assessor("bea")
    client.force_login(organizer)
    assignment = first.assignment
    url = f"/judge/organize/robust/assignments/{assignment.pk}/"
    page = client.get("/judge/organize/robust/").content.decode()
    assert url in page and "1 / 4" in page
    client.post(url, {"action": "transfer", "to": bea.pk})
    assert sorted(AssignmentItem.objects.filter(assignment__assessor=bea).values_list("docno", flat=True)) == \
        sorted({"d1", "d2", "d3", "d4"} - {first.docno})
    assert list(AssignmentItem.objects.filter(assignment__assessor=assessor).values_list("docno", flat=True)) == \
        [first.docno]  # the judged one stays with its judge
    bea_assignment = AssignmentItem.objects.filter(assignment__assessor=bea).first().assignment
    client.post(f"/judge/organize/robust/assignments/{bea_assignment.pk}/", {"action": "withdraw"})
    assert not AssignmentItem.objects.filter(assignment__assessor=bea).exists()
    response = client.post(url, {"action": "transfer"}, follow=True)
    assert "Choose the assessor who takes the documents over." in response.content.decode()


def test_only_organizers_change_assignments(client, pool, assessor, outsider):
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    assignment = AssignmentItem.objects.first().assignment
    for user in (assessor, outsider):
        client.force_login(user)
        response = client.post(f"/judge/organize/robust/assignments/{assignment.pk}/", {"action": "withdraw"})
        assert response.status_code == 403
    assert AssignmentItem.objects.count() == 4


def test_cannot_judge_counts_apart_and_bot_speed_is_flagged(client, pool, organizer, assessor):
    from judging.models import Assignment
    from pooling.models import PoolEntry

    topic = pool.collection.topics.get(qid="303")
    for n in range(22):
        PoolEntry.objects.create(pool=pool, topic=topic, docno=f"fast{n}", judging_order=n + 1, pool_rank=n + 1)
    factories.add_documents(pool.collection, [f"fast{n}" for n in range(22)])  # grades need a text to read
    assignments_create(pool=pool, assessors=[assessor], topics=["301", "303"])
    items = list(AssignmentItem.objects.filter(assignment__topic__qid="301").order_by("judging_order"))
    judgment_record(item_id=items[0].pk, user=assessor, grade=None, cannot_judge=True, client_token="c")
    judgment_record(item_id=items[1].pk, user=assessor, grade=1, client_token="g", time_spent_ms=30_000)
    for n, item in enumerate(AssignmentItem.objects.filter(assignment__topic__qid="303")):
        judgment_record(item_id=item.pk, user=assessor, grade=0, client_token=f"f{n}", time_spent_ms=300)
    client.force_login(organizer)
    body = client.get("/judge/organize/robust/").content.decode()
    topic_row = body[body.index(">301<"):]
    topic_row = topic_row[: topic_row.index("</tr>")]
    cells = [c.split(">")[-1] for c in topic_row.split("</td>")]
    assert cells[1] == "1" and cells[5] == "1"  # judged with a grade: 1; cannot judge: 1, counted apart
    assert "implausibly fast: median under 2 s" in body
    assert Assignment.objects.count() == 2


def test_adjudication_shows_each_assessors_evidence_and_records_the_reason(client, pool, organizer, assessor,
                                                                           outsider):
    from judging.models import Judgment

    assignments_create(pool=pool, assessors=[assessor, outsider], topics=["301"], overlap=2)
    for user, grade, comment in ((assessor, 2, "clearly on topic"), (outsider, 0, "only mentions it")):
        item = AssignmentItem.objects.filter(assignment__assessor=user, docno="d3").get()
        judgment_record(item_id=item.pk, user=user, grade=grade, client_token=f"e{user.pk}", time_spent_ms=12_300,
                        comment=comment, rationale="the passage" if grade else "",
                        passages=[[0, 4]] if grade else [])
    client.force_login(organizer)
    body = client.get("/judge/organize/robust/agreement/").content.decode()
    assert "International Organized Crime" in body and "Text of d3" in body
    assert "arthur</strong>: Highly relevant after 12.3 s; comment: “clearly on topic”; why: “the passage”" in body
    assert "oscar</strong>: Not relevant after 12.3 s; comment: “only mentions it”" in body
    assert "passage: <mark>Text</mark>" in body  # the offsets [0, 4) of "Text of d3", as the assessor marked them
    client.post("/judge/organize/robust/agreement/", {"qid": "301", "docno": "d3", "grade": "1",
                                                      "comment": "partly relevant: both are half right"})
    final = Judgment.objects.filter(source=Judgment.Source.ADJUDICATION).get()
    assert (final.grade, final.comment) == (1, "partly relevant: both are half right")


def test_partly_judged_topics_are_named_on_the_leaderboard_and_in_the_release(client, pool, organizer, assessor,
                                                                             tmp_path):
    import io
    import zipfile

    from evaluation.release import release_bundle
    from judging.completeness import topic_completeness
    from workbench.collections.services import RunSpec, runs_import

    (tmp_path / "a.run").write_text("301 Q0 d1 1 2 a\n301 Q0 d2 2 1 a\n302 Q0 d5 1 1 a\n")
    runs_import(collection=pool.collection, specs=[RunSpec(source=tmp_path / "a.run")])
    assignments_create(pool=pool, assessors=[assessor], topics=["301", "302"])
    for n, item in enumerate(AssignmentItem.objects.order_by("assignment__topic__qid", "judging_order")):
        if item.assignment.topic.qid == "302" or n == 0:  # 302 whole, 301 one document of four
            judgment_record(item_id=item.pk, user=assessor, grade=1, client_token=f"c{n}")
    state = topic_completeness(pool.collection)
    assert state.complete == ["302"] and state.partial == {"301": (1, 4)}
    client.force_login(organizer)
    body = client.get("/collections/robust/leaderboard/").content.decode()
    assert "1 topic only partly judged" in body and "301: 1 of 4" in body
    # scores use the fully judged topics by default, and say so; the choice is shown and can be changed
    assert '<option value="complete" selected>fully judged only</option>' in body
    assert "they are left out of these scores" in body
    default = client.get("/collections/robust/leaderboard/?_export=json").json()
    everything = client.get("/collections/robust/leaderboard/?topics=all&_export=json").json()
    assert default["topics"] == ["302"] and everything["topics"] == ["301", "302"]
    report = client.get("/collections/robust/runs/a/").content.decode()
    assert "302" in report and ">301<" not in report  # the run's page follows the same default
    # every results page answers under that default (the curves page once refused its policy)
    for page in ("", "significance/", "curves/", "curves/?all=1", "curves/?all=1&kind=roc&topic=302",
                 "curves/?all=1&download=csv", "reusability/", "pool/", "downloads/", "topics/301/", "topics/302/"):
        response = client.get(f"/collections/robust/{page}")
        assert response.status_code == 200, (page, response.content.decode()[:300])
        assert "unknown qrels policy" not in response.content.decode(), page
    readme = zipfile.ZipFile(io.BytesIO(release_bundle(pool.collection).data)).read("robust/README.md").decode()
    assert "topics fully judged (every document of the main pool): 1" in readme and "301 (1 of 4)" in readme


def test_ids_beyond_the_database_are_refused_not_a_crash(client, pool, organizer, assessor):
    client.force_login(organizer)
    big = str(2**63)
    for data in ({"pool": pool.pk, "assessors": [big]}, {"pool": big, "assessors": [assessor.pk]},
                 {"pool": pool.pk, "assessors": [assessor.pk], "topics": [big]}):
        response = client.post("/judge/organize/robust/assign/", data)
        assert response.status_code == 400 and "Select a valid choice" in response.content.decode()
    assert not AssignmentItem.objects.exists()


def test_assessor_analytics_time_spread_agreement_and_last_activity(client, pool, organizer, assessor, outsider):
    _two_assessors_disagree(pool, assessor, outsider)
    for n, item in enumerate(AssignmentItem.objects.filter(assignment__assessor=assessor).order_by("judging_order")):
        item.latest.time_spent_ms = (n + 1) * 4000  # 4, 8, 12, 16 s
        item.latest.save()
    client.force_login(organizer)
    body = client.get("/judge/organize/robust/").content.decode()
    row = body[body.index(">arthur<"):]
    row = row[: row.index("</tr>")]
    assert "7.0–13.0" in row  # quartiles of 4, 8, 12, 16 s
    # binary (relevant from 1): arthur 1 1 0 0, oscar 1 0 0 1: p_o = 0.5, p_e = 0.5, so Cohen's kappa 0
    assert ">0.00<" in row
    from datetime import date
    assert date.today().isoformat()[:4] in row  # the last judgment's date

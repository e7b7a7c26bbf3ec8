"""Tracks with their own people: two organizers (staff, not superusers) each organize one collection. Walking
every URL pattern of the project, neither reaches the other's console, pages, jobs, downloads or admin rows
(403 or 404, never 200, never 500), while each reaches their own; the audit log records who changed what and
shows it to the collection's organizers only."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from judging.assignments import assignments_create
from judging.models import Assignment, AssignmentItem, MachineJudge
from participation.models import Submission, Team, Track
from pooling.models import Pool
from tests import factories
from workbench.access.people import person_set_roles
from workbench.access.tokens import token_create
from workbench.models import Collection, DuplicateClass, DuplicateMember, Job

pytestmark = pytest.mark.django_db

#: not walked: Django's own account pages (a password-reset token is not a collection's) and the admin's
#: regex routes (walked model by model below)
SKIP = re.compile(r"^(accounts/|admin/|favicon)")


def _organizer(name: str) -> User:
    user = User.objects.create_user(name, password="pw")
    person_set_roles(user=user, roles=["organizer"])  # staff, not a superuser
    # as a deployment may grant: every admin permission of the project's models, so that only the
    # collection filter stands between an organizer and another track's rows
    user.user_permissions.add(*Permission.objects.filter(
        content_type__app_label__in=["workbench", "pooling", "judging", "answers", "participation"]))
    user = User.objects.get(pk=user.pk)
    user.api_token = token_create(user=user, name="walk")[1]  # the HTTP API takes a token, not the session
    return user


def _track(slug: str, organizer: User, assessor: User, tmp_path) -> dict:
    """A collection with runs, a pool, judgments, an assignment, a track with a team and a submission, a
    duplicate class, a machine judge and a finished release job: what the URL patterns name."""
    collection = factories.collection_with_topics(slug)
    collection.organizers.add(organizer)
    factories.add_documents(collection, ["d1", "d2", "d3", "d4", "d5", "d6"])
    tag = f"{slug}-run"
    path = tmp_path / f"{slug}.run"
    path.write_text(factories.run_lines(tag, {"301": ["d1", "d2", "d3"], "302": ["d4", "d5"]}))
    out = StringIO()
    call_command("import_runs", slug, str(path), "--team", "t1", stdout=out)
    call_command("build_pool", slug, "--depth", "2", stdout=out)
    qrels = tmp_path / f"{slug}.qrels"
    qrels.write_text("301 0 d1 1\n302 0 d4 0\n")
    call_command("import_qrels", slug, str(qrels), stdout=out)
    pool = Pool.objects.get(collection=collection)
    assignments_create(pool=pool, assessors=[assessor], topics=["301"], created_by=organizer)
    assignment = Assignment.objects.get(pool=pool)
    track = Track.objects.create(collection=collection, open=True, results_released=True)
    team = Team.objects.create(track=track, name="t1")
    submission = Submission.objects.create(team=team, file_name="x.run", stored="x", sha256="0" * 64)
    klass = DuplicateClass.objects.create(collection=collection, representative="d1", similarity=0.8,
                                          threshold=0.7, shingle=3)
    DuplicateMember.objects.create(duplicate_class=klass, collection=collection, docno="d2", similarity=0.9)
    judge = MachineJudge.objects.create(collection=collection, name=f"{slug}-judge", kind="embedding",
                                        user=User.objects.create_user(f"machine:{slug}"))
    job = Job.objects.create(kind="release bundle", collection=collection, started_by=organizer,
                             status=Job.Status.DONE)
    return {"collection": collection, "values": {
        "slug": slug, "pool_id": pool.pk, "assignment_id": assignment.pk, "class_id": klass.pk, "job_id": job.pk,
        "name": judge.name, "tag": tag, "qid": "301", "item_id": AssignmentItem.objects.filter(
            assignment=assignment).first().pk, "done_id": assignment.pk, "next_id": assignment.pk,
        "submission_id": submission.pk, "format": "trec", "user_id": organizer.pk}}


@pytest.fixture
def two_tracks(tmp_path):
    assessor = User.objects.create_user("ann", password="pw")
    person_set_roles(user=assessor, roles=["assessor"])
    amy, bob = _organizer("amy"), _organizer("bob")
    return {amy: _track("amytrack", amy, assessor, tmp_path), bob: _track("bobtrack", bob, assessor, tmp_path)}


@pytest.fixture
def two_collections(db):
    """The same two organizers with a bare collection each (amy's a track): for the tests that need no runs."""
    amy, bob = _organizer("amy"), _organizer("bob")
    for user in (amy, bob):
        factories.collection_with_topics(f"{user.username}track").organizers.add(user)
    Track.objects.create(collection=Collection.objects.get(slug="amytrack"), results_released=True)
    return amy, bob


#: what the API's POSTs send: a valid pool build (the one POST of an organizer's API), so that only access refuses it
#: a body every organizer's POST endpoint takes as well formed (a pool build's, and an assignment's assessors), so
#: that only access decides its answer
BUILD = '{"name": "walked", "strategy": "depth", "parameters": {"depth_value": 2}, "assessors": ["nobody"]}'


def _routes(resolver=None, prefix: str = ""):
    """Every URL pattern of the project as a route with its ``<converter:name>`` parts (the admin apart)."""
    for entry in (resolver or get_resolver()).url_patterns:
        route = prefix + str(entry.pattern)
        if SKIP.match(route):
            continue
        if isinstance(entry, URLResolver):
            yield from _routes(entry, route)
        elif isinstance(entry, URLPattern):
            yield route


def _fill(route: str, values: dict) -> str:
    return "/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(values[m.group(1)]), route)


def _collection_routes() -> list[str]:
    return [r for r in _routes() if "<slug:slug>" in r and not r.startswith("participate/")]


def test_every_url_pattern_refuses_the_other_collections_organizer(client, two_tracks):
    """GET and POST on every pattern filled with the other collection's objects: 403, 404 or 405, never 200
    or 500 (the API's with a token and a well-formed body); with their own collection's slug and the other's
    ids, still never 200."""
    (amy, mine), (bob, theirs) = two_tracks.items()
    before = {c.slug: c.audit_entries.count() for c in Collection.objects.all()}
    walked = 0
    for user, own, other in ((amy, mine, theirs), (bob, theirs, mine)):
        client.force_login(user)
        for route in _routes():
            if "<" not in route:
                continue
            path = _fill(route, other["values"])
            api = route.startswith("api/")
            headers = {"HTTP_AUTHORIZATION": f"Bearer {user.api_token}"} if api else {}
            for method in (client.get, client.post):
                if "<int:user_id>" in route and method == client.get:
                    continue  # the People pages are the deployment's: another's account is shown, not changed
                body = {"data": BUILD, "content_type": "application/json"} if api and method == client.post else {}
                status = method(path, **body, **headers).status_code
                # a participant's upload (multipart, and they are on no team) may be refused for its body first
                refusals = (400, 403, 404, 405) if route.startswith("api/v1/tracks/") else (403, 404, 405)
                assert status in refusals, f"{user} {method.__name__.upper()} {path}: {status}"
                walked += 1
            ids = {k: v for k, v in other["values"].items() if k.endswith("_id") and k != "user_id"}
            if "<slug:slug>" in route and any(f":{k}>" in route for k in ids):
                crossed = _fill(route, {**other["values"], "slug": own["values"]["slug"]})
                assert client.get(crossed).status_code in (403, 404, 405), crossed
    assert walked > 60
    # nothing of either collection was changed by the posts
    assert {c.slug: c.audit_entries.count() for c in Collection.objects.all()} == before
    assert Team.objects.count() == 2 and all(t.results_released for t in Track.objects.all())


def test_each_organizer_reaches_their_own_pages_and_lists_only_their_own(client, two_tracks):
    (amy, mine), (bob, theirs) = two_tracks.items()
    client.force_login(amy)
    for route in _collection_routes():
        if re.search(r"<(?!slug:slug>)", route) or route.endswith(("release.zip", "evaluation/", "release/",
                                                                   "route/", "teams/", "find/")):
            continue  # pages with more parameters, or POST-only actions
        path = _fill(route, mine["values"])
        assert client.get(path).status_code == 200, path
    assert client.get(f"/jobs/{mine['values']['job_id']}/").status_code == 200
    home = client.get("/").content.decode()
    assert "amytrack" in home and "bobtrack" not in home
    jobs_page = client.get(reverse("workbench:jobs")).content.decode()
    assert f"/jobs/{mine['values']['job_id']}/" in jobs_page and f"/jobs/{theirs['values']['job_id']}/" not in jobs_page
    assert client.get(reverse("evaluation:download_qrels", args=["amytrack"])).status_code == 200
    listed = client.get("/api/v1/collections", HTTP_AUTHORIZATION=f"Bearer {amy.api_token}").json()
    assert [c["slug"] for c in listed] == ["amytrack"]
    assert client.get("/api/v1/collections/amytrack/runs", HTTP_AUTHORIZATION=f"Bearer {amy.api_token}"
                      ).status_code == 200
    built = client.post("/api/v1/collections/amytrack/pools", data=BUILD, content_type="application/json",
                        HTTP_AUTHORIZATION=f"Bearer {amy.api_token}")
    assert built.status_code == 202, built.content
    client.post(reverse("evaluation:download_release", args=["amytrack"]), {"policy": "adjudicated"})
    log = client.get(reverse("workbench:audit", args=["amytrack"])).content.decode()
    assert "release bundle built" in log and "qrels policy adjudicated" in log


def test_the_admin_lists_only_rows_of_the_organizers_own_collection(client, two_tracks):
    (amy, mine), (bob, theirs) = two_tracks.items()
    scoped = [(model, model_admin) for model, model_admin in admin.site._registry.items()
              if hasattr(model_admin, "collection_path")]
    assert len(scoped) >= 12
    for user, own, other in ((amy, mine, theirs), (bob, theirs, mine)):
        client.force_login(user)
        for model, model_admin in scoped:
            info = (model._meta.app_label, model._meta.model_name)
            listing = client.get(reverse("admin:{}_{}_changelist".format(*info)))
            assert listing.status_code == 200, info
            path = model_admin.collection_path
            shown = listing.context["cl"].result_list
            slugs = {getattr(row, "slug", None) if not path else _collection_of(row, path).slug for row in shown}
            assert other["collection"].slug not in slugs, info
            foreign = model.objects.filter(**{f"{path}__slug" if path else "slug": other["collection"].slug}).first()
            if foreign is not None:
                change = client.get(reverse("admin:{}_{}_change".format(*info), args=[foreign.pk]))
                # Django's admin answers a row it cannot find with a redirect to its index ("does not exist")
                assert change.status_code in (302, 403, 404), info
                assert change.status_code != 302 or change.url == reverse("admin:index"), info
        own_runs = client.get(reverse("admin:workbench_run_changelist")).content.decode()
        assert own["values"]["tag"] in own_runs and other["values"]["tag"] not in own_runs


def _collection_of(row, path: str):
    for part in path.split("__"):
        row = getattr(row, part)
    return row


def test_an_organizer_of_one_track_cannot_take_over_the_other_organizers_account(client, two_collections):
    amy, bob = two_collections
    client.force_login(amy)
    for action in ("link", "deactivate", "roles"):
        assert client.post(reverse("workbench:person", args=[bob.pk]), {"action": action}).status_code == 403
    bob.refresh_from_db()
    assert bob.is_active and bob.is_staff


def test_a_collection_without_organizers_is_every_organizers_and_says_so(client, two_collections):
    amy, bob = two_collections
    call_command("create_collection", "shared", stdout=StringIO())
    for user in (amy, bob):
        client.force_login(user)
        page = client.get(reverse("workbench:console", args=["shared"]))
        assert page.status_code == 200 and "No organizers assigned: every organizer manages it." in page.content.decode()
    client.post(reverse("workbench:collection_people", args=["shared"]), {"action": "add", "user": bob.pk})
    assert client.get(reverse("workbench:console", args=["shared"])).status_code == 200
    client.force_login(amy)
    assert client.get(reverse("workbench:console", args=["shared"])).status_code == 403


def test_the_command_gives_the_collection_its_organizers(two_collections):
    amy, _ = two_collections
    out = StringIO()
    call_command("create_collection", "robust04", "--organizer", "amy", stdout=out)
    assert "organizers: amy" in out.getvalue()
    assert list(Collection.objects.get(slug="robust04").organizers.all()) == [amy]


def test_a_new_collection_made_in_the_console_is_its_creators(client, two_collections):
    amy, bob = two_collections
    client.force_login(amy)
    client.post(reverse("workbench:collection_new"), {
        "slug": "fresh", "name": "Fresh", "relevant_from": 1, "max_depth": 1000,
        "grade-TOTAL_FORMS": 2, "grade-INITIAL_FORMS": 0, "grade-0-grade": 0, "grade-0-label": "No",
        "grade-1-grade": 1, "grade-1-label": "Yes"})
    assert list(Collection.objects.get(slug="fresh").organizers.all()) == [amy]
    client.force_login(bob)
    assert client.get(reverse("workbench:console", args=["fresh"])).status_code == 403


def test_an_organizers_change_of_settings_is_in_the_audit_log_of_that_collection_only(client, two_collections):
    amy, bob = two_collections
    client.force_login(amy)
    edit = client.get(reverse("workbench:collection_edit", args=["amytrack"]))
    form = edit.context["form"]
    data = {name: form.initial.get(name) or "" for name in form.fields}
    data.update({"name": "Amy's renamed track", "researchers_may_download": "on", "grade-TOTAL_FORMS": 2,
                 "grade-INITIAL_FORMS": 0, "grade-0-grade": 0, "grade-0-label": "Not relevant",
                 "grade-1-grade": 1, "grade-1-label": "Relevant"})
    data.pop("judge_by_link", None)
    assert client.post(reverse("workbench:collection_edit", args=["amytrack"]), data).status_code == 302
    log = client.get(reverse("workbench:audit", args=["amytrack"]))
    body = log.content.decode()
    assert log.status_code == 200 and "settings changed" in body and "amy" in body and "name" in body
    client.force_login(bob)
    assert client.get(reverse("workbench:audit", args=["amytrack"])).status_code == 403
    assert "settings changed" not in client.get(reverse("workbench:audit", args=["bobtrack"])).content.decode()


def test_releasing_results_and_changing_organizers_are_audited(client, two_collections):
    amy, _ = two_collections
    carl = User.objects.create_user("carl")
    person_set_roles(user=carl, roles=["organizer"])
    client.force_login(amy)
    client.post(reverse("participation_console:release", args=["amytrack"]), {"released": "0"})
    client.post(reverse("workbench:collection_people", args=["amytrack"]), {"action": "add", "user": carl.pk})
    client.post(reverse("workbench:collection_people", args=["amytrack"]), {"action": "remove", "user": amy.pk})
    assert [u.username for u in Collection.objects.get(slug="amytrack").organizers.all()] == ["carl"]
    # she no longer manages it, and the last organizer is never removed
    assert client.get(reverse("workbench:console", args=["amytrack"])).status_code == 403
    client.force_login(carl)
    client.post(reverse("workbench:collection_people", args=["amytrack"]), {"action": "remove", "user": carl.pk})
    assert [u.username for u in Collection.objects.get(slug="amytrack").organizers.all()] == ["carl"]
    actions = list(Collection.objects.get(slug="amytrack").audit_entries.values_list("action", "detail"))
    assert actions[:3] == [("organizer removed", "amy"), ("organizer added", "carl"), ("results withdrawn", "")]
    assert Group.objects.filter(name="organizers", user=carl).exists()

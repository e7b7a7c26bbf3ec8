"""A pool from the submissions: a new named pool of each team's first N runs by priority at the track's
depth; the preview lists the runs it will use; the form ticks runs by team without JavaScript."""

from __future__ import annotations

import html
import re
from collections import Counter
from io import StringIO

import pytest
from django.core.management import call_command

from participation.models import Track
from pooling.models import Pool, PoolEntry
from pooling.services import pool_build
from tests import factories
from workbench.models import Run

#: tag -> (team, priority, offered to the pool, ranking)
RUNS = {
    "a-base": ("alpha", 2, True, {"301": ["d1", "d2", "d3"], "302": ["e1"]}),
    "a-best": ("alpha", 1, True, {"301": ["d4", "d5", "d6"], "302": ["e2"]}),
    "b-one": ("beta", 1, True, {"301": ["d1", "d7", "d8"], "302": ["e1"]}),
    "b-two": ("beta", 1, True, {"301": ["d9", "d10", "d11"], "302": ["e3"]}),  # tied priority: b-one first
    "g-upper": ("Gamma", 1, True, {"301": ["d12"], "302": ["e4"]}),
    "g-lower": (" gamma ", 2, True, {"301": ["d13"], "302": ["e5"]}),  # the same team, typed differently
    "solo": ("", 1, True, {"301": ["d14"], "302": ["e6"]}),  # no team: a team of its own
    "late": ("alpha", 3, False, {"301": ["d15"], "302": ["e7"]}),  # not offered to the pool
}
POOLED = ["a-best", "b-one", "g-upper", "solo"]


@pytest.fixture
def track(db, tmp_path):
    collection = factories.collection_with_topics()
    for tag, (team, priority, offered, ranking) in RUNS.items():
        path = tmp_path / f"{tag}.run"
        path.write_text(factories.run_lines(tag, ranking))
        call_command("import_runs", "robust", str(path), stdout=StringIO())
        Run.objects.filter(tag=tag).update(team=team, pool_priority=priority, contributes=offered)
    return collection


def preview(client, **fields):
    data = {"name": "submissions", "strategy": "depth", "depth": "2", "order": "shuffled", "seed": "3",
            "action": "preview", **fields}
    return client.post("/console/robust/pools/", data)


def test_the_preview_uses_each_teams_best_priority_run_and_lists_them_by_team(client, organizer, track):
    client.force_login(organizer)
    response = preview(client, runs_per_team="1")
    assert response.status_code == 200
    shown = response.context["preview"]
    assert shown.runs == POOLED
    assert shown.offered == 7 and not shown.extends
    text = html.unescape(re.sub(r"<[^>]+>", "", response.content.decode()))
    assert "over 4 runs of the 7 offered" in text
    assert "A new pool named submissions" in text
    by_team = {g["team"]: [(r["tag"], r["used"]) for r in g["runs"]] for g in shown.groups}
    assert by_team["alpha"] == [("a-best", True), ("a-base", False)]
    assert by_team["beta"] == [("b-one", True), ("b-two", False)]
    assert by_team["gamma"] == [("g-upper", True), ("g-lower", False)]  # one team, however typed
    assert by_team["no team"] == [("solo", True)]
    assert "late" not in str(by_team)
    assert [g["team"] for g in shown.groups if g["tie"]] == ["beta"]
    assert "beta (1 of 2; runs tied at p1: the first by tag was taken)" in text
    # what each topic's pool will hold: the top 2 of the four pooled runs
    assert {row["qid"]: row["documents"] for row in shown.rows} == {"301": 6, "302": 4}  # d4 d5 d1 d7 d12 d14


def test_a_pool_records_only_the_runs_it_pooled_and_offers_them_as_contributed(track):
    summary = pool_build(collection=track, name="submissions", depth=2, runs_per_team=1, seed=1)
    pool = Pool.objects.get(name="submissions")
    assert sorted(pool.params["runs"]) == POOLED and summary.runs == POOLED
    assert sorted(pool.params["offered"]) == sorted(t for t, v in RUNS.items() if v[2])
    from pooling.selectors import contributed_runs

    assert [t for t, c in contributed_runs(track).items() if c] == sorted(POOLED)


def test_the_link_on_the_participation_page_prefills_a_new_pool_at_the_tracks_depth(client, organizer, track):
    Track.objects.create(collection=track, depth=50, pooled_runs_per_team=1)
    pool_build(collection=track, name="main", depth=1, seed=1)
    pool_build(collection=track, name="submissions", depth=1, seed=1)
    client.force_login(organizer)
    page = client.get("/console/robust/participation/").content.decode()
    link = html.unescape(re.search(r'href="([^"]*/pools/\?[^"]*)">Pool from the submissions', page).group(1))
    assert "name=submissions-2" in link and "depth=50" in link and "runs_per_team=1" in link
    form = client.get(link).context["form"]
    assert form["name"].value() == "submissions-2" and str(form["depth"].value()) == "50"
    assert str(form["runs_per_team"].value()) == "1"


def test_the_pool_form_never_prefills_the_name_of_an_existing_pool(client, organizer, track):
    pool_build(collection=track, name="main", depth=1, seed=1)
    client.force_login(organizer)
    assert client.get("/console/robust/pools/").context["form"]["name"].value() == "main-2"


def test_previewing_an_existing_pools_name_says_the_build_adds_to_it(client, organizer, track):
    pool_build(collection=track, name="submissions", depth=1, seed=1)
    client.force_login(organizer)
    response = preview(client, runs_per_team="1")
    assert "Pool submissions exists: building adds these documents to it." in response.content.decode()


def ticked(response) -> list[str]:
    return re.findall(r'<input type="checkbox" name="runs" value="([^"]+)"[^>]*checked', response.content.decode())


def test_runs_are_ticked_all_none_or_by_team_without_javascript(client, organizer, track):
    client.force_login(organizer)
    form = {"name": "submissions", "strategy": "depth", "depth": "5", "order": "shuffled"}
    team = client.post("/console/robust/pools/", {**form, "runs": ["solo"], "select": "team:gamma"})
    assert team.status_code == 200 and sorted(ticked(team)) == ["g-lower", "g-upper", "solo"]
    assert team.context["form"]["depth"].value() == "5"  # the other fields are kept
    assert sorted(ticked(client.post("/console/robust/pools/", {**form, "select": "all"}))) == sorted(RUNS)
    assert ticked(client.post("/console/robust/pools/", {**form, "runs": ["solo"], "select": "none"})) == []
    offered = ticked(client.post("/console/robust/pools/", {**form, "select": "offered"}))
    assert "late" not in offered and len(offered) == 7
    assert not Pool.objects.exists()  # ticking never builds


def test_the_pool_form_lists_runs_by_team_with_their_priority(client, organizer, track):
    client.force_login(organizer)
    page = client.get("/console/robust/pools/").content.decode()
    alpha = page[page.index('data-team="alpha"'):page.index('data-team="beta"')]
    assert alpha.index("a-best") < alpha.index("a-base") < alpha.index("late")
    assert "not offered" in alpha
    assert page.index('value="preview"') < page.index('name="runs"')  # the buttons come before the runs


@pytest.mark.parametrize("user", ["assessor", "outsider"])
def test_only_organizers_open_the_pool_form(client, track, user, request):
    client.force_login(request.getfixturevalue(user))
    assert client.get("/console/robust/pools/").status_code == 403
    assert client.post("/console/robust/pools/", {"select": "all"}).status_code == 403


def test_the_preview_reads_only_the_lines_within_the_depth_and_counts_what_the_build_pools(track, tmp_path):
    """The preview reads each kept run's lines within the depth only (a real track's 150 runs read whole
    took 240 MB in the web server); its sizes are the build's, with scores out of file order and ties."""
    from pooling.preview import pool_preview
    from pooling.strategies import registry

    lines = "".join(f"301 Q0 x{n} {n} {(n * 7) % 5}.0 shuffled\n" for n in range(1, 40))  # unsorted, tied scores
    (tmp_path / "shuffled.run").write_text(lines + "302 Q0 e1 1 3.0 shuffled\n302 Q0 x99 2 9.0 shuffled\n")
    call_command("import_runs", "robust", str(tmp_path / "shuffled.run"), stdout=StringIO())
    Run.objects.filter(tag="shuffled").update(team="delta", pool_priority=1)
    for depth in (1, 3, 10):
        shown = pool_preview(collection=track, name=f"p{depth}", params=registry.PoolParams(depth=depth,
                                                                                            runs_per_team=1))
        pool_build(collection=track, name=f"p{depth}", depth=depth, runs_per_team=1, seed=1)
        built = {str(q): n for q, n in Counter(PoolEntry.objects.filter(pool__name=f"p{depth}")
                                               .values_list("topic__qid", flat=True)).items()}
        assert {row["qid"]: row["documents"] for row in shown.rows} == built, depth
        assert "shuffled" in shown.runs and shown.offered == 8

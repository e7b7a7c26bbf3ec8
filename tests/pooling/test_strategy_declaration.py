"""A strategy is declared once, in its own module, and the form, the command, the docs' table and the
validation messages come from the declaration: a strategy added in one new file shows up in all of them."""

from __future__ import annotations

import re
import sys
import textwrap
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from pooling.management.commands.build_pool import Command as BuildPool
from pooling.models import Pool, PoolEntry
from pooling.strategies import registry
from tests import factories

WIDEST = '''
"""Widest first: each run's top ``width`` documents (a strategy of the test, declared in one file)."""

from dataclasses import dataclass

from pooling.strategies.declaration import Strategy, declared, param
from pooling.strategies.depth import depth_pool


@dataclass(frozen=True)
class WidestParams:
    width: int = param(5, min=1, max=50, unit="documents", help="Documents taken from each run per topic")


def build(runs, p):
    return depth_pool(runs, p.options["width"], **p.selection())


STRATEGY = Strategy("widest", "Widest first", False, build, params=declared(WidestParams),
                    help="Each run's top width documents.")
'''


@pytest.fixture
def widest(tmp_path, monkeypatch):
    """The strategy ``widest`` in a package of its own on the path, registered as the built-in ones are."""
    package = tmp_path / "extra_strategies"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "widest.py").write_text(textwrap.dedent(WIDEST))
    monkeypatch.syspath_prepend(str(tmp_path))
    assert registry.autodiscover("extra_strategies") == ["widest"]
    yield registry.get("widest")
    registry.unregister("widest")
    for name in ("extra_strategies", "extra_strategies.widest"):
        sys.modules.pop(name, None)


@pytest.fixture
def track(db, tmp_path):
    collection = factories.collection_with_topics()
    ranking = {"301": [f"a{i}" for i in range(8)], "302": [f"b{i}" for i in range(8)]}
    path = tmp_path / "alpha.run"
    path.write_text(factories.run_lines("alpha", ranking))
    call_command("import_runs", "robust", str(path), stdout=StringIO(), stderr=StringIO())
    return collection


def form_of(client, slug="robust", **data) -> str:
    response = client.post(f"/console/{slug}/pools/", data) if data else client.get(f"/console/{slug}/pools/")
    return response.status_code, response.content.decode()


def test_a_strategy_in_one_new_module_is_offered_with_a_number_input_under_its_heading(widest, track, organizer,
                                                                                     client):
    client.force_login(organizer)
    status, page = form_of(client)
    assert status == 200
    assert '<option value="widest">Widest first</option>' in page
    group = re.search(r'<fieldset class="strategy-params" data-strategies="widest">(.*?)</fieldset>', page, re.S)
    assert group and "<legend>Widest first</legend>" in group.group(1)
    width = re.search(r'<input type="number" name="width"[^>]*>', group.group(1)).group(0)
    assert 'value="5"' in width and 'min="1"' in width and 'max="50"' in width and 'step="1"' in width
    assert "Documents taken from each run per topic (1 to 50; default 5 documents)." in group.group(1)


def test_the_new_strategy_and_its_parameter_are_build_pool_options_with_bounds_and_default(widest):
    parser = BuildPool().create_parser("manage.py", "build_pool")
    strategy = next(a for a in parser._actions if a.dest == "strategy")
    assert list(strategy.choices)[-1] == "widest"
    text = " ".join(parser.format_help().split())
    assert "--width N Documents taken from each run per topic (1 to 50; default 5 documents). [widest]" in text


def test_the_strategies_table_lists_the_new_strategy_and_its_parameter(widest):
    row = next(r for r in registry.table() if r["name"] == "widest")
    assert row["label"] == "Widest first" and row["capabilities"] == []
    assert row["params"] == [{"name": "width", "type": "int", "default": 5, "min": 1, "max": 50, "bounds": "1 to 50",
                              "unit": "documents", "help": "Documents taken from each run per topic"}]
    assert [p.name for p in registry.STRATEGIES["widest"].params] == ["width"]


def test_a_value_out_of_bounds_is_one_line_naming_the_parameter_on_the_form_and_the_command(widest, track,
                                                                                           organizer, client):
    client.force_login(organizer)
    status, page = form_of(client, name="wide", strategy="widest", width="99", order="pool", seed="1",
                           action="preview")
    assert status == 400 and "width must be at most 50, not 99" in page
    with pytest.raises(CommandError, match=r"^--width must be at least 1, not 0$"):
        call_command("build_pool", "robust", "--strategy", "widest", "--width", "0", stdout=StringIO())
    with pytest.raises(CommandError, match=r"^--width applies to widest, not to depth$"):
        call_command("build_pool", "robust", "--depth", "2", "--width", "3", stdout=StringIO())
    assert not Pool.objects.exists()


def test_the_new_strategy_builds_with_its_parameter_from_the_form_and_the_command(widest, track, organizer, client):
    client.force_login(organizer)
    status, page = form_of(client, name="wide", strategy="widest", width="3", order="pool", seed="1",
                           action="preview")
    assert status == 200 and "Width <strong>3</strong>" in page
    assert "Preview of pool wide: 6 documents" in page
    call_command("build_pool", "robust", "--strategy", "widest", "--width", "2", "--name", "wide", stdout=StringIO())
    assert PoolEntry.objects.filter(pool__name="wide").count() == 4


def test_only_the_chosen_strategys_fields_are_checked_and_the_preview_keeps_cals_parameters(track, organizer,
                                                                                           client):
    client.force_login(organizer)
    # a cal field out of bounds does not stop a depth-k preview
    status, page = form_of(client, name="deep", strategy="depth", depth="3", target_recall="7", order="pool",
                           seed="1", action="preview")
    assert status == 200 and "Preview of pool deep" in page
    factories.add_documents(track, ["a0", "b0"])
    status, page = form_of(client, name="learned", strategy="cal", budget="4", target_recall="0.7", stop="qbcb",
                           order="pool", seed="1", action="preview")
    assert status == 200
    assert "Stopping rule <strong>qbcb</strong>" in page and "Target recall <strong>0.7</strong>" in page
    status, page = form_of(client, name="learned", strategy="cal", budget="4", target_recall="1.5", order="pool",
                           seed="1", action="preview")
    assert status == 400 and "target_recall must be between 0 and 1, not 1.5" in page


def test_every_built_in_strategy_is_declared_in_its_own_module_of_the_declared_package():
    before = list(registry.STRATEGIES)
    assert sorted(registry.autodiscover()) == sorted(before)  # again: nothing new
    assert before == ["depth", "rrf", "borda", "sampled", "mtf", "maxmean", "bandit", "cal"]
    assert list(registry.STRATEGIES) == before
    assert all(sys.modules[f"pooling.strategies.declared.{name}"].STRATEGY is registry.STRATEGIES[name]
               for name in before)


def test_only_a_strategy_that_stops_topics_has_topics_to_stop(track, organizer, client):
    """The stopping state and the stop button follow the declared capability, not a strategy's name; a pool
    of imported judgments (no strategy at all) is refused in one line, not with an error page."""
    call_command("build_pool", "robust", "--depth", "2", stdout=StringIO())
    imported = Pool.objects.create(collection=track, name="old", strategy=registry.IMPORTED[0])
    client.force_login(organizer)
    for pool in (Pool.objects.get(name="main"), imported):
        response = client.post(f"/console/robust/pools/{pool.pk}/stop-topic", {"qid": "301"})
        assert response.status_code == 400
        assert "has no topics to stop: only cal pools stop by topic" in response.content.decode()
    assert "Stopping state of" not in client.get("/console/robust/pools/").content.decode()


def test_cals_parameters_are_options_of_their_own_and_the_words_of_cal_take_precedence(track):
    factories.add_documents(track, ["a0", "a1", "b0", "b1"])
    call_command("build_pool", "robust", "--strategy", "cal", "--budget", "4", "--stop", "qbcb", "--target-recall",
                 "0.7", "--sample-size", "10", "--growth", "0.2", "--cal", "growth=0.3", stdout=StringIO())
    cal = Pool.objects.get().params["cal"]
    assert (cal["stop"], cal["target_recall"], cal["sample_size"], cal["growth"]) == ("qbcb", 0.7, 10, 0.3)
    with pytest.raises(CommandError, match=r"^--target-recall must be between 0 and 1, not 1$"):
        call_command("build_pool", "robust", "--strategy", "cal", "--budget", "4", "--target-recall", "1",
                     "--name", "other", stdout=StringIO())
    with pytest.raises(CommandError, match=r"^--cal applies to cal, not to depth$"):
        call_command("build_pool", "robust", "--depth", "2", "--cal", "stop=knee", "--name", "other",
                     stdout=StringIO())

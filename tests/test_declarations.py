"""A machine judge and a measure family are each declared once, in one file of their own, and the command's options,
the form's fields, the docs' tables and the validation messages come from the declaration: one added in a new
file (a temporary module here) shows up in all of them. (The same for pool strategies:
tests/pooling/test_strategy_declaration.py.)"""

from __future__ import annotations

import importlib
import json
import re
import sys
import textwrap
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from judging import machine
from judging.management.commands.machine_judge import Command as MachineJudge
from judging.models import MachineJudge as MachineJudgeRow
from judging.models import MachineVerdict
from pooling.models import Pool
from tests.judging.machine_fixtures import machine_collection
from workbench.models import Document

ROOT = Path(__file__).resolve().parent.parent

DICE = '''
"""The dice judge: grade 1 for a document whose text has at least ``rounds`` words (a judge of the test)."""

from dataclasses import dataclass

from judging.machine.base import Provenance, Verdict
from judging.machine.declaration import JudgeKind
from workbench.formats.declarations import declared, param


@dataclass(frozen=True)
class DiceOptions:
    rounds: int = param(3, min=1, max=50, help="Words a relevant document has at least")


class DiceJudge:
    def __init__(self, config=None, *, scale, calibration=None):
        self.rounds = JUDGE.read(config or {})["rounds"]

    def provenance(self):
        return Provenance(model="dice")

    def judge(self, topics, wanted=None):
        for pairs in topics:
            for p in pairs:
                if wanted is None or (p.qid, p.docno) in wanted:
                    yield Verdict(p.qid, p.docno, ok=True, grade=int(len(p.text.split()) >= self.rounds), score=1.0)


JUDGE = JudgeKind("dice", "Dice (counts words)", judge_class=DiceJudge, options=declared(DiceOptions),
                  help="Grade 1 when the text has enough words.")
'''


def _package(tmp_path, monkeypatch, name: str, module: str, text: str) -> None:
    package = tmp_path / name
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / f"{module}.py").write_text(textwrap.dedent(text))
    monkeypatch.syspath_prepend(str(tmp_path))


def _forget(*names: str) -> None:
    for name in names:
        sys.modules.pop(name, None)


@pytest.fixture
def dice(tmp_path, monkeypatch):
    """The judge ``dice`` in a package of its own on the path, registered as the built-in ones are."""
    _package(tmp_path, monkeypatch, "extra_judges", "dice", DICE)
    assert machine.autodiscover("extra_judges") == ["dice"]
    yield machine.JUDGES.get("dice")
    machine.unregister("dice")
    _forget("extra_judges", "extra_judges.dice")


@pytest.fixture
def collection(assessor):
    return machine_collection(assessor=assessor)[0]


def _docs_hook(name: str):
    spec = importlib.util.spec_from_file_location(f"hook_{name}", ROOT / "docs" / "hooks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_judge_in_one_new_module_is_a_choice_of_the_console_with_a_number_input(dice, collection, organizer,
                                                                                 client):
    client.force_login(organizer)
    page = client.get(reverse("judging:machine", args=[collection.slug])).content.decode()
    assert '<option value="dice">Dice (counts words)</option>' in page
    rounds = re.search(r'<input type="number" name="rounds"[^>]*>', page).group(0)
    assert 'value="3"' in rounds and 'min="1"' in rounds and 'max="50"' in rounds and 'step="1"' in rounds
    assert "Words a relevant document has at least (1 to 50; default 3)." in page


def test_the_new_judge_and_its_option_are_machine_judge_options_with_bounds_and_default(dice):
    parser = MachineJudge().create_parser("manage.py", "machine_judge")
    text = " ".join(parser.format_help().split())
    assert "--rounds N Words a relevant document has at least (1 to 50; default 3). [dice]" in text
    assert "(embedding, openai, dice)" in text


def test_the_judges_table_and_the_docs_page_list_the_new_judge_and_its_option(dice):
    row = next(r for r in machine.table() if r["name"] == "dice")
    assert row["label"] == "Dice (counts words)" and row["capabilities"] == ["needs_text"]
    assert row["options"] == [{"name": "rounds", "type": "int", "default": 3, "min": 1, "max": 50, "bounds": "1 to 50",
                               "unit": "", "help": "Words a relevant document has at least"}]
    page = _docs_hook("reference").judges_page()
    assert "| `dice` | Dice (counts words) | `rounds` |" in page
    assert "| `rounds` | int | `3` | 1 to 50 |" in page


def test_a_value_out_of_bounds_is_one_line_naming_the_option_on_the_form_and_the_command(dice, collection,
                                                                                       organizer, client):
    client.force_login(organizer)
    pool = Pool.objects.get(collection=collection, name="main")
    answer = client.post(reverse("judging:machine", args=[collection.slug]),
                         {"name": "dice", "kind": "dice", "pool": pool.pk, "rounds": "60"})
    assert answer.status_code == 400 and "rounds must be at most 50, not 60" in answer.content.decode()
    with pytest.raises(CommandError, match=r"^--rounds must be at least 1, not 0$"):
        call_command("machine_judge", collection.slug, "--judge", "dice", "--rounds", "0", stdout=StringIO())
    with pytest.raises(CommandError, match=r"^--rounds applies to dice, not to embedding$"):
        call_command("machine_judge", collection.slug, "--judge", "e5", "--rounds", "2", stdout=StringIO())
    with pytest.raises(CommandError, match=r"^--samples must be at most 15, not 99$"):
        call_command("machine_judge", collection.slug, "--judge", "gpt", "--kind", "openai", "--base-url",
                     "http://127.0.0.1:9/v1", "--model", "m", "--samples", "99", stdout=StringIO())
    assert not MachineVerdict.objects.exists()


def test_the_new_judge_judges_with_its_option_from_the_form_and_the_command(dice, collection, organizer, client):
    client.force_login(organizer)
    pool = Pool.objects.get(collection=collection, name="main")
    answer = client.post(reverse("judging:machine", args=[collection.slug]),
                         {"name": "dice", "kind": "dice", "pool": pool.pk, "rounds": "14"})
    assert answer.status_code == 302
    assert MachineJudgeRow.objects.get(name="dice").config == {"rounds": 14}
    out = StringIO()
    call_command("machine_judge", collection.slug, "--judge", "many", "--kind", "dice", "--rounds", "1", stdout=out)
    many = dict(MachineVerdict.objects.filter(judge__name="many").values_list("docno", "parsed_grade"))
    few = dict(MachineVerdict.objects.filter(judge__name="dice").values_list("docno", "parsed_grade"))
    words = {d.docno: len(f"{d.title}\n{d.text}".split()) for d in Document.objects.filter(collection=collection)}
    assert set(many.values()) == {1} and len(many) == len(words) == 10
    assert few == {docno: int(n >= 14) for docno, n in words.items()} and set(few.values()) == {0, 1}


def test_every_built_in_judge_is_declared_in_its_own_module():
    before = list(machine.JUDGES.names)
    assert sorted(machine.autodiscover()) == sorted(before) == ["embedding", "openai"]
    assert all(sys.modules[f"judging.machine.{m}"].JUDGE is machine.JUDGES.get(n)
               for n, m in (("embedding", "embedding"), ("openai", "openai_chat")))


HITS = '''
"""Hits at k: relevant documents among the first k (a measure family of the test, declared in one file)."""

import numpy as np

from evaluation.engine.spec import CUT_LONG, MeasureSpec
from workbench.formats.declarations import Param


def kernel(ctx, m):
    return [(ctx.isrel & (ctx.pos < k)).sum(axis=1).astype(np.float64) for k in m.params]


MEASURE = MeasureSpec("hits", CUT_LONG, (10,), trec=False, label="Hits at k", kernel=kernel,
                      help="Relevant documents among the first k.",
                      params=(Param("cutoff", "int", min=1, max=1000, help="k: documents read"),))
'''


@pytest.fixture
def hits(tmp_path, monkeypatch):
    """The measure family ``hits`` in a package of its own on the path, registered as declared families are."""
    from evaluation.engine import measure_families, spec

    _package(tmp_path, monkeypatch, "extra_measures", "hits", HITS)
    assert measure_families.autodiscover("extra_measures") == ["hits"]
    yield spec.SPECS["hits"]
    measure_families.unregister("hits")
    _forget("extra_measures", "extra_measures.hits")


def _trec_eval(*args) -> tuple[int, str, str]:
    from evaluation.engine.cli import main

    out, err = StringIO(), StringIO()
    return main([str(a) for a in args], out, err), out.getvalue(), err.getvalue()


def test_a_measure_family_in_one_new_module_is_computed_by_trec_eval_and_evaluate(hits, tmp_path, db):
    from tests.evaluation.tracks import RANKINGS, build_track, run, write_qrels
    from tests.factories import run_lines

    qrels = write_qrels(tmp_path / "q.txt", {("301", "a"): 1, ("301", "x"): 1, ("302", "f"): 1, ("302", "e"): 0})
    beta = tmp_path / "beta.txt"
    beta.write_text(run_lines("beta", RANKINGS["beta"]))
    code, out, _ = _trec_eval("-m", "hits.1,3", "-m", "map", qrels, beta)
    assert code == 0 and out.split("\n")[1:3] == ["hits_1                \tall\t0.5000",
                                                  "hits_3                \tall\t1.5000"]
    assert "hits_10" in _trec_eval("-m", "all_ext", qrels, beta)[1]  # its default cut-off, among the own measures
    build_track(tmp_path)
    scores = json.loads(run("evaluate", "robust", "-m", "hits.3", "--format", "json"))
    assert {r["run"]: r["measures"]["hits_3"] for r in scores["runs"]} == {"alpha": 1.0, "beta": 1.5, "late": 1.0}


def test_a_measure_out_of_its_declared_bounds_is_one_line_naming_the_parameter(hits, tmp_path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("301 0 a 1\n")
    code, out, err = _trec_eval("-m", "hits.5000", qrels, qrels)
    assert code == 2 and err.strip() == "trec_eval: measure 'hits.5000': cutoff must be at most 1,000, not 5,000"
    assert out == ""


def test_the_measures_table_and_the_docs_page_list_the_new_family_and_its_parameter(hits):
    from evaluation.engine import measure_families

    row = next(r for r in measure_families.table() if r["name"] == "hits")
    assert row["label"] == "Hits at k" and row["default"] == (10,) and row["trec"] is False
    assert row["params"] == [{"name": "cutoff", "type": "int", "min": 1, "max": 1000, "bounds": "1 to 1,000",
                              "help": "k: documents read"}]
    page = _docs_hook("reference").measures_page()
    assert ("| `hits` | cut-offs (integers) (`cutoff` 1 to 1,000) | `10` | mean | – | "
            "Relevant documents among the first k. |") in page


def test_the_leaderboard_offers_the_new_family_and_refuses_it_out_of_bounds(hits, tmp_path, organizer, client):
    from tests.evaluation.tracks import build_track

    build_track(tmp_path)
    client.force_login(organizer)
    board = client.get("/collections/robust/leaderboard/", {"measures": "hits.3 map", "_export": "json"}).json()
    assert {r["run"]: r["measures"]["hits_3"] for r in board["runs"]} == {"alpha": 1.0, "beta": 1.5, "late": 1.0}
    page = client.get("/collections/robust/leaderboard/", {"measures": "hits.3000"})
    assert page.status_code == 400
    assert "measure &#x27;hits.3000&#x27;: cutoff must be at most 1,000, not 3,000" in page.content.decode()


def test_every_job_kind_is_declared_once_and_known_to_a_worker_that_imported_no_page():
    """A worker (``db_worker``: Django set up, no URL or view imported) knows every kind and the sweep's plan for
    each of its tasks: registration is the apps' autodiscover, not a side effect of importing ``urls.py``."""
    import subprocess

    code = ("import django, json, sys; django.setup(); from workbench.jobs import kinds as job_kinds; from workbench.jobs import lifecycle as jobs; "
            "print(json.dumps({'urls': sorted(m for m in sys.modules if m.endswith('urls') and m.split('.')[0] in "
            "('workbench', 'pooling', 'judging', 'evaluation', 'participation')), 'kinds': job_kinds.table(), "
            "'plans': {k: v['retry'] for k, v in jobs._RECOVERY.items()}}))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                            env={**__import__("os").environ, "DJANGO_SETTINGS_MODULE": "workbench.settings"})
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["urls"] == []
    kinds = {k["name"]: k for k in found["kinds"]}
    assert len(kinds) == len(found["kinds"]) == 24  # 18 (with the machine agreement), and the answers app's 6
    assert {"runs import", "qrels import", "pool build", "machine judge", "evaluation", "board", "leave-one-out",
            "submission check", "budget plan", "active-learning features", "nugget draft",
            "nugget machine assignment"} <= set(kinds)
    plans = found["plans"]
    assert plans["evaluation.tasks.build_board"] is True and plans["evaluation.tasks.join_board"] is True
    assert plans["participation.tasks.check_submission"] is True and plans["pooling.tasks.pool_part"] is True
    assert all(plans.get(k["task"]) is True for k in kinds.values() if k["retry"])
    assert "pooling.tasks.build_pool" not in plans  # a pool build that died is not safe to run again
    table = _docs_hook("jobs").jobs_table(found["kinds"])
    assert table.startswith(f"{len(kinds)} kinds of job")
    assert "| `board` | Board | `evaluation.tasks.build_board` | `policies` | yes | yes |" in table

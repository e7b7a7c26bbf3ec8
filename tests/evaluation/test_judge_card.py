"""The judge card: a release built under a policy that reads machine labels holds judge_card.json (the judge,
its model and the file digest, kappa against the humans with base rates, human/machine share per topic);
one built under ``human`` does not."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from io import StringIO

import pytest
from django.core.management import call_command
from sklearn.metrics import cohen_kappa_score

from evaluation.release import release_bundle
from tests import factories

GRADES = [{"grade": 0, "label": "No"}, {"grade": 1, "label": "Yes"}, {"grade": 2, "label": "Very"}]
HUMAN = "301 0 a 2\n301 0 b 0\n301 0 c 1\n301 0 d 0\n302 0 e 1\n"
MACHINE = "301 0 a 2\n301 0 b 1\n301 0 c 1\n301 0 d 0\n302 0 e 0\n302 0 f 2\n303 0 g 1\n303 0 h 0\n"


@pytest.fixture
def hybrid(db, tmp_path):
    collection = factories.collection_with_topics(grades=GRADES)
    (tmp_path / "nist").write_text(HUMAN)
    (tmp_path / "umbrela.qrels").write_text(MACHINE)
    call_command("import_qrels", "robust", str(tmp_path / "nist"), "--assessor", "nist", stdout=StringIO())
    call_command("import_machine_judgments", "robust", str(tmp_path / "umbrela.qrels"), "--judge", "umbrela",
                 "--model", "gpt-4o-2024-08-06", stdout=StringIO())
    return collection, tmp_path


def _files(bundle) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(bundle.data)) as archive:
        return {name.split("/", 1)[1]: archive.read(name).decode() for name in archive.namelist()}


def test_a_release_under_human_over_machine_carries_the_judge_card(hybrid):
    collection, folder = hybrid
    files = _files(release_bundle(collection, policy="human-over-machine"))
    card = json.loads(files["judge_card.json"])
    assert "judge_card.json" in files["README.md"]
    [judge] = card["judges"]
    assert judge["judge"] == "umbrela" and judge["models"] == ["gpt-4o-2024-08-06"] and judge["labels"] == 8
    assert judge["imported_files"][0]["sha256"] == hashlib.sha256((folder / "umbrela.qrels").read_bytes()).hexdigest()
    human = [2, 0, 1, 0, 1]
    machine = [2, 1, 1, 0, 0]  # the machine's grades of the five pairs the humans graded
    agreement = judge["agreement_with_humans"]
    assert agreement["pairs"] == 5
    assert agreement["kappa_binary"] == pytest.approx(cohen_kappa_score([g >= 1 for g in machine], [g >= 1 for g in human]))
    assert agreement["kappa_graded"] == pytest.approx(
        cohen_kappa_score(machine, human, weights="linear", labels=[0, 1, 2]))
    assert agreement["relevant_share_human"] == pytest.approx(3 / 5)
    assert agreement["relevant_share_machine"] == pytest.approx(3 / 5)
    shares = {t["qid"]: (t["human"], t["machine"]) for t in card["per_topic"]}
    assert shares == {"301": (4, 0), "302": (1, 1), "303": (0, 2)}
    assert card["machine_lines"] == 3 and card["qrels_lines"] == 8
    assert files["qrels.txt"].count("\n") == 8  # human grades and machine ones, written as one file


def test_a_release_under_human_has_no_judge_card(hybrid):
    collection, _ = hybrid
    files = _files(release_bundle(collection, policy="human"))
    assert "judge_card.json" not in files and "judge_card.json" not in files["README.md"]
    assert "judge_card.json" in _files(release_bundle(collection, policy="machine"))

"""manage.py compare_qrels and the Compare qrels page: human against machine qrels of a collection's runs,
a qrels file against a policy, and who may compare what."""

from __future__ import annotations

import json
import random
from io import StringIO

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import CommandError, call_command
from scipy.stats import kendalltau
from sklearn.metrics import cohen_kappa_score

from tests import factories

GRADES = [{"grade": 0, "label": "No"}, {"grade": 1, "label": "Yes"}, {"grade": 2, "label": "Very"}]
DOCS = [f"d{i}" for i in range(12)]


@pytest.fixture
def judged(db, tmp_path):
    """Five runs on three topics, human qrels and a machine judge that disagrees on a third of the pairs."""
    collection = factories.collection_with_topics(grades=GRADES)
    rng = random.Random(41)
    human, machine = [], []
    for qid in factories.TOPICS:
        for docno in DOCS:
            grade = rng.choice([0, 0, 1, 2])
            human.append(f"{qid} 0 {docno} {grade}")
            machine.append(f"{qid} 0 {docno} {grade if rng.random() > 0.35 else rng.choice([0, 1, 2])}")
    (tmp_path / "human.qrels").write_text("\n".join(human) + "\n")
    (tmp_path / "machine.qrels").write_text("\n".join(machine) + "\n")
    for r in range(5):
        ranking = {qid: rng.sample(DOCS, len(DOCS)) for qid in factories.TOPICS}
        (tmp_path / f"run{r}.run").write_text(factories.run_lines(f"run{r}", ranking))
        call_command("import_runs", "robust", str(tmp_path / f"run{r}.run"), stdout=StringIO())
    call_command("import_qrels", "robust", str(tmp_path / "human.qrels"), "--assessor", "nist", stdout=StringIO())
    call_command("import_machine_judgments", "robust", str(tmp_path / "machine.qrels"), "--judge", "umbrela",
                 stdout=StringIO())
    return collection, tmp_path


def _compare(*args) -> str:
    out = StringIO()
    call_command("compare_qrels", "robust", *args, stdout=out)
    return out.getvalue()


def _grades(path) -> dict:
    return {(q, d): int(g) for q, _, d, g in (line.split() for line in path.read_text().splitlines())}


def test_human_against_machine_policies_as_json(judged):
    _, folder = judged
    result = json.loads(_compare("human", "machine", "--format", "json"))
    h, m = _grades(folder / "human.qrels"), _grades(folder / "machine.qrels")
    keys = sorted(h)
    labels = result["labels"]
    assert labels["shared"] == len(keys) == 36
    assert labels["kappa_binary"] == pytest.approx(cohen_kappa_score([h[k] >= 1 for k in keys], [m[k] >= 1 for k in keys]))
    assert labels["kappa_graded"] == pytest.approx(
        cohen_kappa_score([h[k] for k in keys], [m[k] for k in keys], weights="linear", labels=[0, 1, 2]))
    systems = result["rankings"]["systems"]
    assert result["rankings"]["runs"] == 5 and len(systems) == 5
    assert result["rankings"]["tau"] == pytest.approx(
        kendalltau([s["a"] for s in systems], [s["b"] for s in systems]).statistic)


def test_a_qrels_file_against_a_judge_by_name_as_text(judged):
    _, folder = judged
    text = _compare(str(folder / "machine.qrels"), "umbrela")
    assert "kappa binary 1.000" in text and "Kendall's tau 1.000, tau_AP 1.000" in text
    assert "0 pairs significant under one qrels and swapped or tied under the other" in text


def test_a_side_that_is_nothing_known_is_one_line(judged):
    with pytest.raises(CommandError, match="'nobody' is not a qrels file, a qrels policy"):
        _compare("human", "nobody")
    with pytest.raises(CommandError, match="bad.qrels:1"):
        (judged[1] / "bad.qrels").write_text("301 0 d1 x\n")
        _compare("human", str(judged[1] / "bad.qrels"))


def test_the_page_draws_both_rankings_and_keeps_one_assessor_to_organizers(client, judged, organizer):
    client.force_login(organizer)
    page = client.get("/collections/robust/compare-qrels/?a=human&b=machine&measure=map")
    html = page.content.decode()
    assert page.status_code == 200 and '<svg class="slope"' in html and html.count("<line ") == 5
    assert "Kendall" in html and "Compare qrels" in html
    assert client.get("/collections/robust/compare-qrels/?a=human&b=umbrela").status_code == 200
    bad = client.get("/collections/robust/compare-qrels/?a=human&b=machine&measure=nonsense")
    assert bad.status_code == 400 and 'id="compare-error"' in bad.content.decode()
    assert client.get("/collections/robust/compare-qrels/?a=assessor:x%00y&b=human").status_code == 400
    collection, _ = judged
    collection.researchers_may_download = True
    collection.save(update_fields=["researchers_may_download"])
    researcher = User.objects.create_user("rita", password="pw")
    researcher.groups.add(Group.objects.get_or_create(name="researchers")[0])
    client.force_login(researcher)
    assert client.get("/collections/robust/compare-qrels/?a=human&b=machine").status_code == 200
    assert client.get("/collections/robust/compare-qrels/?a=human&b=umbrela").status_code == 403

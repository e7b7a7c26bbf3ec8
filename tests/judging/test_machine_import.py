"""manage.py import_machine_judgments: a judge's labels made elsewhere (TREC qrels, LARA's probability CSVs)
recorded as a machine assessor's judgments with their provenance, on a collection with topics and no text."""

import hashlib
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from judging.models import Judgment, MachineJudge, MachineVerdict
from judging.policies import HUMAN, MACHINE
from judging.qrels import qrels
from tests import factories
from workbench.formats import limits
from workbench.models import Document

GRADED = [{"grade": 0, "label": "no"}, {"grade": 1, "label": "some"}, {"grade": 2, "label": "high"}]


@pytest.fixture
def graded(db):
    return factories.collection_with_topics(slug="rag", grades=GRADED)


def _run(*args):
    from io import StringIO

    out = StringIO()
    call_command("import_machine_judgments", *args, stdout=out)
    return out.getvalue()


def test_trec_qrels_become_the_machine_assessor_judgments_with_provenance(graded, tmp_path):
    path = tmp_path / "umbrela.qrels"
    path.write_text("301 0 d1 2\n301 0 d2 0\n\n302 Q0 d9 1\n")
    said = _run("rag", str(path), "--judge", "umbrela", "--model", "gpt-4o-2024-08-06")
    assert "imported 3 labels (qrels) on 2 topics" in said
    assert not Document.objects.filter(collection=graded).exists()  # labels alone
    machine = qrels(graded, policy=MACHINE)
    assert machine.values.tolist() == [["301", "d1", 2], ["301", "d2", 0], ["302", "d9", 1]]
    assert qrels(graded, policy=HUMAN).empty
    judge = MachineJudge.objects.get(collection=graded, name="umbrela")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    verdict = MachineVerdict.objects.get(judge=judge, docno="d1")
    assert verdict.model == "gpt-4o-2024-08-06" and digest in verdict.raw_reply and verdict.probability is None
    assert verdict.judgment.source == Judgment.Source.MACHINE and verdict.judgment.assessor == judge.user.username
    [record] = judge.config["imports"]
    assert record["sha256"] == digest and record["labels"] == 3 and record["imported_at"]


def test_the_same_file_twice_keeps_the_first_labels(graded, tmp_path):
    path = tmp_path / "umbrela.qrels"
    path.write_text("301 0 d1 2\n")
    _run("rag", str(path), "--judge", "umbrela")
    path.write_text("301 0 d1 0\n302 0 d2 1\n")
    assert "1 already judged, kept" in _run("rag", str(path), "--judge", "umbrela")
    assert qrels(graded, policy=MACHINE).values.tolist() == [["301", "d1", 2], ["302", "d2", 1]]
    assert len(MachineJudge.objects.get(name="umbrela").config["imports"]) == 2


def test_lara_annotation_csv_keeps_the_probability_of_relevance(collection, tmp_path):
    path = tmp_path / "lara.csv"
    path.write_text("topic_id,doc_id,annotation,prob_yes,prob_no\n301,d1,1,0.83,0.17\n303,d4,0,0.2,0.8\n")
    _run("robust", str(path), "--judge", "lara")
    got = sorted(MachineVerdict.objects.values_list("topic__qid", "docno", "parsed_grade", "probability"))
    assert got == [("301", "d1", 1, 0.83), ("303", "d4", 0, 0.2)]


def test_probability_columns_give_the_most_probable_grade(graded, tmp_path):
    path = tmp_path / "probs.csv"
    path.write_text("topic_id,doc_id,prob_0,prob_1,prob_2\n301,d1,0.1,0.3,0.6\n301,d2,0.7,0.2,0.1\n")
    _run("rag", str(path), "--judge", "lara")
    got = {d: (g, round(p, 6)) for d, g, p in MachineVerdict.objects.values_list("docno", "parsed_grade", "probability")}
    assert got == {"d1": (2, 0.9), "d2": (0, 0.3)}  # relevant from grade 1: prob_1 + prob_2


def test_bad_lines_are_each_named_and_nothing_is_imported(graded, tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("topic_id,doc_id,prob_0,prob_1,prob_2\n301,d1,0.1,0.3,0.6\n999,d2,1,0,0\n301,d3,x,0,1\n"
                    "301,d1,1,0,0\n301,d5,1,0\n")
    with pytest.raises(CommandError, match="3 problems; nothing was imported"):
        call_command("import_machine_judgments", "rag", str(path), "--judge", "lara")
    said = capsys.readouterr().err
    assert "bad.csv:4: prob_0 'x' is not a probability" in said
    assert "bad.csv:5: document 'd1' is labelled more than once for topic '301' (first at line 2)" in said
    assert "bad.csv:6: 4 fields, the header has 5" in said
    assert not Judgment.objects.exists() and not MachineJudge.objects.exists()
    path.write_text("topic_id,doc_id,prob_0,prob_1,prob_2\n301,d1,0.1,0.3,0.6\n999,d2,1,0,0\n")
    with pytest.raises(CommandError, match="bad.csv:3: topic '999' is not a topic of collection 'rag'"):
        call_command("import_machine_judgments", "rag", str(path), "--judge", "lara")
    path.write_text("301 0 d1 3\n")
    with pytest.raises(CommandError, match=r"bad.csv:1: grade 3 is not one of the collection's grades \(0, 1, 2\)"):
        call_command("import_machine_judgments", "rag", str(path), "--judge", "lara")
    assert not Judgment.objects.exists()


def test_a_labels_file_is_bounded_as_every_qrels_file(graded, tmp_path):
    path = tmp_path / "big.qrels"
    path.write_text("301 0 d1 1\n" * 2000)
    limits.configure(max_bytes={"qrels": 1024})
    try:
        with pytest.raises(CommandError, match="big.qrels"):
            call_command("import_machine_judgments", "rag", str(path), "--judge", "big")
    finally:
        from workbench import settings

        settings._configure_file_limits()
    assert not Judgment.objects.exists()


def test_the_console_upload_imports_labels_as_the_judge_named(client, organizer, graded):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from workbench.models import Job

    graded.organizers.add(organizer)
    client.force_login(organizer)
    labels = SimpleUploadedFile("lara.csv", b"topic_id,doc_id,annotation,prob_yes,prob_no\n301,d1,1,0.9,0.1\n")
    answer = client.post("/console/rag/upload/", {"kind": "machine_labels", "machine_labels-files": [labels],
                                                  "machine_labels-assessor": "lara"})
    assert answer.status_code == 302
    job = Job.objects.latest("id")
    assert job.status == Job.Status.DONE, job.error
    page = client.get(answer["Location"]).content.decode()
    assert "lara.csv: 1 labels (annotation) on 1 topics as machine judge &#x27;lara&#x27;" in page
    assert qrels(graded, policy=MACHINE).values.tolist() == [["301", "d1", 1]]
    bad = SimpleUploadedFile("bad.csv", b"topic_id,doc_id,annotation,prob_yes,prob_no\n301,d2,7,0.9,0.1\n")
    client.post("/console/rag/upload/", {"kind": "machine_labels", "machine_labels-files": [bad]})
    job = Job.objects.latest("id")
    assert job.status == Job.Status.FAILED and "bad.csv:2: grade 7 is not one of the collection's grades" in job.error


def test_agreement_of_imported_labels_is_that_of_their_own_grades(collection, tmp_path):
    from sklearn.metrics import cohen_kappa_score

    (tmp_path / "nist").write_text("301 0 a 1\n301 0 b 0\n302 0 c 1\n302 0 d 0\n303 0 e 1\n303 0 f 0\n")
    (tmp_path / "lara.csv").write_text("topic_id,doc_id,annotation,prob_yes,prob_no\n301,a,1,0.9,0.1\n"
                                       "301,b,0,0.2,0.8\n302,c,0,0.4,0.6\n302,d,0,0.1,0.9\n303,e,1,0.8,0.2\n"
                                       "303,f,1,0.6,0.4\n")
    call_command("import_qrels", "robust", str(tmp_path / "nist"), "--assessor", "nist", stdout=StringIO())
    _run("robust", str(tmp_path / "lara.csv"), "--judge", "lara")
    out = StringIO()
    call_command("machine_agreement", "robust", "--judge", "lara", "--format", "json", stdout=out)
    figures = json.loads(out.getvalue())
    assert figures["confusion"] == [[2, 1], [1, 2]]  # the file's annotations, not a calibration refitted on nothing
    assert figures["kappa_binary"] == pytest.approx(cohen_kappa_score([1, 0, 1, 0, 1, 0], [1, 0, 0, 0, 1, 1]))


def test_agreement_shown_again_follows_a_new_human_judgment(collection, tmp_path):
    """Machine agreement is kept once computed (the page ranks every run twice); a human judgment made since
    is in the figures of the next visit."""
    (tmp_path / "nist").write_text("301 0 a 1\n301 0 b 0\n302 0 c 1\n302 0 d 0\n")
    (tmp_path / "labels").write_text("301 0 a 1\n301 0 b 0\n302 0 c 0\n302 0 d 0\n303 0 e 1\n")

    def confusion():
        out = StringIO()
        call_command("machine_agreement", "robust", "--judge", "lab", "--format", "json", stdout=out)
        return json.loads(out.getvalue())["confusion"]

    call_command("import_qrels", "robust", str(tmp_path / "nist"), "--assessor", "nist", stdout=StringIO())
    _run("robust", str(tmp_path / "labels"), "--judge", "lab")
    assert confusion() == [[2, 0], [1, 1]]
    assert confusion() == [[2, 0], [1, 1]]  # shown again: kept
    (tmp_path / "more").write_text("303 0 e 1\n")
    call_command("import_qrels", "robust", str(tmp_path / "more"), "--assessor", "nist", stdout=StringIO())
    assert confusion() == [[2, 0], [1, 2]]  # the new human judgment of 303/e agrees with the machine

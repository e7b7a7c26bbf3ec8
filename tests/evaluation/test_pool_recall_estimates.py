"""Recall estimates with their 95% intervals for pools with a random component: on the pool page, in its CSV
and JSON exports and in the release bundle, the same numbers as the pools page's stopping table."""

from __future__ import annotations

import csv
import io
import json
import zipfile

import pytest

from evaluation.release import release_bundle
from judging.assignments import assignments_create
from judging.models import AssignmentItem
from pooling import features
from pooling.models import Pool
from tests import factories
from tests.evaluation.test_recall import sampled_collection
from tests.evaluation.tracks import run, write_qrels
from tests.pooling.test_cal_pool import TEXTS, judge_next
from workbench.models import Document


@pytest.fixture
def cal_collection(db):
    """Topics 301-303 and the documents of the cal pool tests: a few about the mafia, thirty weather bulletins."""
    collection = factories.collection_with_topics()
    Document.objects.bulk_create(Document(collection=collection, docno=d, text=t) for d, t in TEXTS.items())
    yield collection
    features._cache.clear()  # ids repeat between tests, and with them the documents' fingerprints


def exported(client, table: str = "e-", form: str = "csv", name: str = "main"):
    response = client.get(f"/collections/robust/pool/?name={name}&_export={form}&_table={table}")
    assert response.status_code == 200
    text = b"".join(response.streaming_content if response.streaming else [response.content]).decode()
    return list(csv.DictReader(io.StringIO(text))) if form == "csv" else json.loads(text)


def bundled(pool_collection) -> dict[str, str]:
    archive = zipfile.ZipFile(io.BytesIO(release_bundle(pool_collection).data))
    return {name.split("/", 1)[1]: archive.read(name).decode() for name in archive.namelist()}


def judge_topic(assessor) -> list[str]:
    """Judge 301's queue to its end: the documents about the mafia are relevant, the weather ones not."""
    judged = []
    while (item := AssignmentItem.objects.filter(assignment__assessor=assessor, latest__isnull=True).first()):
        judged.append(judge_next(assessor, 1 if item.docno[0] in "cm" else 0, f"t{len(judged)}"))
    return judged


def test_a_cal_pool_with_a_target_set_exports_the_estimates_the_pools_page_shows(cal_collection, assessor,
                                                                                organizer, client):
    run("build_pool", "robust", "--strategy", "cal", "--budget", "12", "--seed", "3",
        "--cal", "stop=target", "target_recall=0.5", "confidence=0.5")
    assignments_create(pool=Pool.objects.get(), assessors=[assessor], topics=["301"])
    assert judge_topic(assessor) == ["n16", "m0", "c0"]  # the target set's draws, then the review
    client.force_login(organizer)
    console = client.get("/console/robust/pools/").content.decode()
    # 301: the one target document found by the review; Clopper-Pearson for 1 of 1: 0.025000000000000022-1
    assert "<td>100% (95% CI 3%–100%)</td>" in console
    rows = {r["Topic"]: r for r in exported(client)}
    assert set(rows) == {"301", "302", "303"}
    row = rows["301"]
    assert (row["Recall so far (est.)"], row["Recall 95% low"], row["Recall 95% high"]) == ("1.0000", "0.0250", "1.0000")
    # relevant documents: found / recall (2 / 1), interval 2 / 1 .. 2 / 0.025
    assert (row["Relevant (est.)"], row["Relevant 95% low"], row["Relevant 95% high"]) == ("2.0000", "2.0000", "80.0000")
    assert (row["Judged"], row["Relevant found"], row["Sample judged"], row["Sample relevant"]) == ("2", "2", "2", "1")
    assert row["Method"].startswith("cal target set")
    assert rows["302"]["Recall so far (est.)"] == "—", "no sample drawn yet: no estimate"
    page = client.get("/collections/robust/pool/?name=main").content.decode()
    assert "Recall estimates" in page and "80.0000" in page and "0.0250" in page
    as_json = {r["Topic"]: r for r in exported(client, form="json")}
    assert as_json["301"]["Recall 95% low"] == "0.0250"
    tsv = bundled(cal_collection)["recall_estimates.tsv"].splitlines()
    assert tsv[0].split("\t")[:3] == ["pool", "qid", "method"]
    fields = dict(zip(tsv[0].split("\t"), tsv[1].split("\t"), strict=True))
    assert (fields["qid"], fields["relevant_estimate"], fields["relevant_low"], fields["relevant_high"], fields["recall"],
            fields["recall_low"], fields["recall_high"]) == ("301", "2.0000", "2.0000", "80.0000", "1.0000", "0.0250",
                                                             "1.0000")


def test_a_sampled_pool_exports_the_horvitz_thompson_estimate_and_the_pools_recall(db, tmp_path, organizer, client):
    sampled_collection_, sampled = sampled_collection(tmp_path)
    # a1 relevant, b1 not; of the three sampled in stratum 2 (half of six) one relevant: R = 1 + 1 / 0.5 = 3
    qrels = {("301", "a1"): 1, ("301", "b1"): 0, ("301", sampled[0]): 1, ("301", sampled[1]): 0,
             ("301", sampled[2]): 0}
    run("import_qrels", "robust", write_qrels(tmp_path / "q.txt", qrels))
    client.force_login(organizer)
    row = {r["Topic"]: r for r in exported(client)}["301"]
    assert (row["Judged"], row["Relevant found"], row["Relevant (est.)"], row["Recall so far (est.)"]) == \
        ("5", "2", "3.0000", "0.6667")
    low, high = float(row["Relevant 95% low"]), float(row["Relevant 95% high"])
    assert low <= 3 <= high and high > 3, "an interval, not a point: half of stratum 2 is unseen"
    assert row["Recall 95% low"] == f"{2 / high:.4f}" and row["Recall 95% high"] == f"{min(1.0, 2 / low):.4f}"
    files = bundled(sampled_collection_)
    line = dict(zip(*(x.split("\t") for x in files["recall_estimates.tsv"].splitlines()[:2]), strict=True))
    assert (line["relevant_estimate"], line["recall"], line["recall_low"]) == ("3.0000", "0.6667", row["Recall 95% low"])
    assert "`recall_estimates.tsv`" in files["README.md"] and "95% interval" in files["README.md"]


def test_a_depth_pool_has_no_estimates_to_show_or_export(db, tmp_path, organizer, client):
    from tests.evaluation.tracks import build_track

    collection = build_track(tmp_path)
    client.force_login(organizer)
    assert "Recall estimates" not in client.get("/collections/robust/pool/").content.decode()
    assert "recall_estimates.tsv" not in bundled(collection)


def test_a_qbcb_pool_exports_its_samples_estimate_of_the_relevant_documents(cal_collection, assessor, organizer,
                                                                          client):
    from pooling.models import PoolTopicState

    run("build_pool", "robust", "--strategy", "cal", "--budget", "12", "--seed", "3",
        "--cal", "stop=qbcb", "target_recall=0.5", "confidence=0.5", "sample_size=10")
    pool = Pool.objects.get()
    assignments_create(pool=pool, assessors=[assessor], topics=["301"])
    judge_topic(assessor)
    status = PoolTopicState.objects.get(pool=pool, qid="301").status
    assert (status["side_judgments"], status["side_relevant"]) == (10, 1)
    relevant, recall = status["relevant_estimate"], status["recall_estimate"]
    assert relevant["estimate"] == pytest.approx(34 * 1 / 10), "the collection's 34 documents at the sample's rate"
    relevant, recall = status["relevant_estimate"], status["recall_estimate"]
    client.force_login(organizer)
    row = {r["Topic"]: r for r in exported(client)}["301"]
    assert row["Method"].startswith("cal qbcb")
    assert (row["Relevant (est.)"], row["Relevant 95% low"], row["Relevant 95% high"]) == tuple(
        f"{relevant[k]:.4f}" for k in ("estimate", "low", "high"))
    assert (row["Recall so far (est.)"], row["Recall 95% low"], row["Recall 95% high"]) == tuple(
        f"{recall[k]:.4f}" for k in ("estimate", "low", "high"))
    assert (row["Sample judged"], row["Sample relevant"]) == (str(status["side_judgments"]),
                                                              str(status["side_relevant"]))

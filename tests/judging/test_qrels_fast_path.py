"""qrels and current_judgments against a plain-Python reading of the judgment records.

The reference below walks the records one by one in id order, as the rules say: the latest record of each
assessor for a (topic, document) is current, a "cannot judge" one hides the grade it revises, documents
several assessors judged go to the most frequent grade (a tie to the lower grade), an adjudication (its
latest one) replaces that majority under the adjudicated policy, and rows sort by qid (as numbers when every
qid is, else as strings), then docno.
"""

from __future__ import annotations

import random
import re
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from judging import qrels as selectors
from judging.models import Judgment
from judging.qrels import current_judgments, qrels
from workbench.collections.services import collection_create
from workbench.models import Collection, Topic

WEB, IMPORT, ADJUDICATION = Judgment.Source.WEB, Judgment.Source.IMPORT, Judgment.Source.ADJUDICATION


# --------------------------------------------------------------------------------------- reference
def _current_records(collection: Collection, assessor: str | None = None) -> list[Judgment]:
    latest = {}
    for record in Judgment.objects.filter(collection=collection).select_related("topic").order_by("id"):
        if assessor is None or record.assessor == assessor:
            latest[(record.assessor, record.topic.qid, record.docno)] = record
    return [r for r in sorted(latest.values(), key=lambda r: r.pk) if not r.cannot_judge]


def reference_current_judgments(collection: Collection, assessor: str | None = None) -> pd.DataFrame:
    rows = _current_records(collection, assessor)
    records = Judgment.objects.filter(collection=collection)
    # with no record at all the string columns are of dtype object (as they have always been)
    text = str if (records.filter(assessor=assessor) if assessor else records).exists() else object
    return pd.DataFrame({
        "assessor": pd.Series([r.assessor for r in rows], dtype=text),
        "qid": pd.Series([r.topic.qid for r in rows], dtype=text),
        "docno": pd.Series([r.docno for r in rows], dtype=text),
        "grade": pd.Series([r.grade for r in rows], dtype="int64"),
        "source": pd.Series([r.source for r in rows], dtype=text),
    })


def reference_qrels(collection: Collection, assessor: str | None = None, policy: str = "adjudicated") -> pd.DataFrame:
    current = _current_records(collection, assessor)
    if assessor is not None:
        rows = [(r.topic.qid, r.docno, r.grade) for r in current]  # in id order
    else:
        votes: dict[tuple[str, str], list[int]] = {}
        for r in current:
            if r.source != ADJUDICATION:
                votes.setdefault((r.topic.qid, r.docno), []).append(r.grade)
        majority = {}
        for doc, grades in sorted(votes.items()):
            counts = Counter(grades)
            top = max(counts.values())
            majority[doc] = min(g for g, n in counts.items() if n == top)
        rows = [(q, d, g) for (q, d), g in majority.items()]
        if policy == "adjudicated":
            final = {}
            for r in reversed(current):  # newest first: the latest adjudication of a document wins
                if r.source == ADJUDICATION:
                    final.setdefault((r.topic.qid, r.docno), r.grade)
            rows = [(q, d, g) for (q, d), g in final.items()] + [row for row in rows if row[:2] not in final]
    numeric = all(re.fullmatch(r"-?\d+", q) for q, _, _ in rows)  # the one natural order (workbench.formats.ids)
    rows = sorted(rows, key=lambda row: (int(row[0]) if numeric else row[0], row[1]))  # stable
    return pd.DataFrame({"qid": pd.Series([q for q, _, _ in rows], dtype=str),
                         "docno": pd.Series([d for _, d, _ in rows], dtype=str),
                         "rel": pd.Series([g for _, _, g in rows], dtype="int64")})


# --------------------------------------------------------------------------------------- helpers
def _collection(qids, slug="fast") -> Collection:
    collection = collection_create(slug=slug, name=slug)
    for qid in qids:
        Topic.objects.create(collection=collection, qid=qid)
    return collection


def _judge(collection: Collection, records) -> None:
    """records: (assessor, qid, docno, grade or None for "cannot judge", source), created in this order."""
    topics = {t.qid: t for t in collection.topics.all()}
    Judgment.objects.bulk_create(
        Judgment(collection=collection, topic=topics[qid], docno=docno, grade=grade, cannot_judge=grade is None,
                 assessor=assessor, source=source)
        for assessor, qid, docno, grade, source in records)


def _assessors(collection: Collection) -> list[str]:
    return sorted(set(Judgment.objects.filter(collection=collection).values_list("assessor", flat=True)))


def _check(collection: Collection) -> None:
    """Every policy, with and without assessor, equals the reference: rows, order, names and dtypes."""
    for assessor in [None, *_assessors(collection), "nobody"]:
        # no machine assessor judged here: "human", "human-over-machine" and "hybrid" read as "adjudicated"
        policies = [p for p in selectors.QRELS_POLICIES if p != "machine"] if assessor is None else ("adjudicated",)
        for policy in policies:
            got = qrels(collection, assessor=assessor, policy=policy)
            expected = reference_qrels(collection, assessor,
                                       "adjudicated" if policy in ("human", "human-over-machine", "hybrid") else policy)
            pd.testing.assert_frame_equal(got, expected, check_exact=True, obj=f"qrels({assessor}, {policy})")
            assert [str(t) for t in got.dtypes] == ["str", "str", "int64"]
            assert isinstance(got.index, pd.RangeIndex) and got.index.start == 0
        got = current_judgments(collection, assessor=assessor)
        pd.testing.assert_frame_equal(got, reference_current_judgments(collection, assessor), check_exact=True,
                                      obj=f"current_judgments({assessor})")
        assert isinstance(got.index, pd.RangeIndex)


@pytest.fixture(params=["aggregated", "row by row", "out of id order"])
def fetch(request, monkeypatch):
    """Run each test on the database's column aggregates, on the row-by-row reading, and on aggregates that
    come back in another order than the ids'."""
    if request.param == "row by row":
        monkeypatch.setattr(selectors, "_COLUMN_AGGREGATES", {})
    elif request.param == "out of id order":
        aggregated = selectors._aggregated_records

        def shuffled(*args):
            records = aggregated(*args)
            order = np.arange(len(records["id"]))
            np.random.default_rng(7).shuffle(order)
            return {name: values.take(order) for name, values in records.items()}

        monkeypatch.setattr(selectors, "_aggregated_records", shuffled)
    return request.param


# --------------------------------------------------------------------------------------- cases
@pytest.mark.django_db
def test_revisions_and_cannot_judge(fetch):
    collection = _collection(["1", "2"])
    _judge(collection, [
        ("ann", "1", "d1", 1, WEB), ("ann", "1", "d1", 0, WEB),          # revised: 0
        ("ann", "1", "d2", 2, WEB), ("ann", "1", "d2", None, WEB),       # "cannot judge" hides the 2
        ("ann", "2", "d3", None, WEB), ("ann", "2", "d3", 1, WEB),       # judged after all
        ("ann", "2", "d4", None, WEB),                                   # never judged
        ("bob", "1", "d2", 1, WEB),                                      # bob's grade stands alone for d2
    ])
    _check(collection)
    assert qrels(collection).values.tolist() == [["1", "d1", 0], ["1", "d2", 1], ["2", "d3", 1]]


@pytest.mark.django_db
def test_majority_ties_go_to_the_lower_grade(fetch):
    collection = _collection(["7"])
    _judge(collection, [
        ("a", "7", "split", 1, WEB), ("b", "7", "split", 0, WEB),                             # 0
        ("a", "7", "two-one", 2, WEB), ("b", "7", "two-one", 2, WEB), ("c", "7", "two-one", 1, WEB),  # 2
        ("a", "7", "even", 2, WEB), ("b", "7", "even", 1, WEB), ("c", "7", "even", 2, WEB),
        ("d", "7", "even", 1, WEB),                                                           # 1
        ("a", "7", "revised", 0, WEB), ("b", "7", "revised", 2, WEB), ("a", "7", "revised", 2, WEB),  # 2
        ("a", "7", "alone", 3, IMPORT),
    ])
    _check(collection)
    assert dict(qrels(collection, policy="majority")[["docno", "rel"]].values.tolist()) == {
        "alone": 3, "even": 1, "revised": 2, "split": 0, "two-one": 2}


@pytest.mark.django_db
def test_adjudications_override_the_majority(fetch):
    collection = _collection(["1"])
    _judge(collection, [
        ("a", "1", "d1", 0, WEB), ("b", "1", "d1", 1, WEB),
        ("olivia", "1", "d1", 1, ADJUDICATION), ("paul", "1", "d1", 2, ADJUDICATION),  # latest adjudication: 2
        ("a", "1", "d2", 1, WEB), ("olivia", "1", "d2", 0, ADJUDICATION),
        ("olivia", "1", "d2", 1, ADJUDICATION),                                        # revised: 1
        ("a", "1", "d3", 0, WEB), ("olivia", "1", "d3", 2, ADJUDICATION),
        ("olivia", "1", "d3", None, ADJUDICATION),                                     # withdrawn: majority 0
        ("a", "1", "d4", 1, WEB), ("olivia", "1", "d4", 2, ADJUDICATION),
        ("olivia", "1", "d4", 0, WEB),                                                 # now an assessor's vote
        ("paul", "1", "d5", 2, ADJUDICATION),                                          # adjudicated only
    ])
    _check(collection)
    assert qrels(collection)[["docno", "rel"]].values.tolist() == [["d1", 2], ["d2", 1], ["d3", 0], ["d4", 0],
                                                                   ["d5", 2]]
    assert qrels(collection, policy="majority")[["docno", "rel"]].values.tolist() == [
        ["d1", 0], ["d2", 1], ["d3", 0], ["d4", 0]]


@pytest.mark.django_db
def test_adjudications_only():
    collection = _collection(["1"])
    _judge(collection, [("olivia", "1", "d1", 1, ADJUDICATION)])
    _check(collection)
    assert qrels(collection, policy="majority").empty


@pytest.mark.django_db
def test_numeric_qids_sort_as_numbers_unless_one_is_not(fetch):
    collection = _collection(["2", "10", "a1", "1"])
    _judge(collection, [
        ("a", "10", "d1", 1, WEB), ("a", "2", "d9", 0, WEB), ("a", "2", "d10", 1, WEB), ("a", "1", "d5", 1, WEB),
        ("b", "a1", "d1", 2, WEB), ("b", "10", "d2", 0, WEB),
    ])
    _check(collection)
    assert qrels(collection)["qid"].tolist() == ["1", "10", "10", "2", "2", "a1"]     # strings: "a1" is there
    assert qrels(collection, assessor="a")["qid"].tolist() == ["1", "2", "2", "10"]  # numbers: a judged no "a1"
    assert qrels(collection, assessor="a")["docno"].tolist() == ["d5", "d10", "d9", "d1"]


@pytest.mark.django_db
def test_negative_qids_sort_as_numbers_in_both_paths(fetch):
    collection = _collection(["10", "-1", "2"])
    _judge(collection, [("a", "10", "d1", 1, WEB), ("a", "-1", "d2", 0, WEB), ("a", "2", "d3", 1, WEB),
                        ("b", "2", "d3", 1, WEB)])
    _check(collection)
    assert qrels(collection)["qid"].tolist() == ["-1", "2", "10"]


@pytest.mark.django_db
def test_qids_that_are_the_same_number(fetch):
    collection = _collection(["1", "01", "2"])
    _judge(collection, [
        ("a", "1", "d2", 1, WEB), ("a", "01", "d1", 0, WEB), ("a", "01", "d3", 1, WEB), ("a", "2", "d0", 0, WEB),
        ("b", "1", "d2", 1, WEB),
    ])
    _check(collection)
    assert qrels(collection)[["qid", "docno"]].values.tolist() == [["01", "d1"], ["1", "d2"], ["01", "d3"],
                                                                  ["2", "d0"]]


@pytest.mark.django_db
def test_one_assessor_per_document_and_docnos_in_code_point_order(fetch):
    collection = _collection(["301", "302"])
    docnos = ["d2", "D10", "d10", "Ä1", "a", "é", "A", "b-1", "b_1", "日本", "z"]
    _judge(collection, [(f"assessor{i % 3}", qid, docno, i % 4, IMPORT if i % 2 else WEB)
                        for i, (qid, docno) in enumerate((q, d) for q in ("302", "301") for d in docnos)])
    _check(collection)
    assert qrels(collection)["docno"].tolist()[:len(docnos)] == sorted(docnos)


@pytest.mark.django_db
def test_empty_and_other_collections(fetch):
    collection = _collection(["1"])
    other = _collection(["1"], slug="other")
    _judge(other, [("a", "1", "d1", 1, WEB)])
    _check(collection)
    _judge(collection, [("a", "1", "d1", None, WEB)])  # only "cannot judge"
    _check(collection)
    assert qrels(collection).empty and current_judgments(collection).empty


@pytest.mark.django_db
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_judging_histories(seed, fetch):
    rng = random.Random(seed)
    qids = rng.sample(["1", "2", "3", "10", "11", "20", "x", "b7"], 5)
    collection = _collection(qids)
    assessors = ["ann", "bob", "cy", "olivia"]
    docs = [f"d{n}" for n in range(12)]
    records = []
    for _ in range(300):
        assessor = rng.choice(assessors)
        source = ADJUDICATION if assessor == "olivia" and rng.random() < 0.7 else rng.choice([WEB, IMPORT])
        grade = None if rng.random() < 0.15 else rng.randint(0, 3)
        records.append((assessor, rng.choice(qids), rng.choice(docs), grade, source))
    _judge(collection, records)
    _check(collection)


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("tie", ["lower", "higher"])
def test_majority_qrels_against_counting_votes(seed, tie):
    from judging.agreement import majority_qrels

    rng = np.random.default_rng(seed)
    n = 400
    frame = pd.DataFrame({"assessor": rng.choice(["a", "b", "c", "d"], n), "qid": rng.choice(["2", "10", "x"], n),
                          "docno": rng.choice([f"d{i}" for i in range(30)] + ["é", "Z"], n),
                          "grade": rng.integers(-1, 4, n)}).drop_duplicates(["assessor", "qid", "docno"])
    frame.index = frame.index * 3 + 1  # not a RangeIndex
    for judgments in (frame, frame.drop_duplicates(["qid", "docno"])):  # voting, and one assessor per document
        votes: dict[tuple[str, str], list[int]] = {}
        for qid, docno, grade in judgments[["qid", "docno", "grade"]].itertuples(index=False):
            votes.setdefault((qid, docno), []).append(int(grade))
        expected = []
        for (qid, docno), grades in sorted(votes.items()):
            counts = Counter(grades)
            top = [g for g, c in counts.items() if c == max(counts.values())]
            expected.append([qid, docno, min(top) if tie == "lower" else max(top)])
        got = majority_qrels(judgments, tie=tie)
        assert got.values.tolist() == expected
        assert [str(t) for t in got.dtypes] == ["str", "str", "int64"] and isinstance(got.index, pd.RangeIndex)


@pytest.mark.django_db
@pytest.mark.parametrize("qids", [["301", "302", "303"], ["1", "01", "2"]])
def test_the_qrels_of_some_topics_are_those_topics_rows_of_the_whole(fetch, qids):
    """A part of an evaluation split by topic reads its topics' qrels only: the rows the whole qrels have."""
    collection = _collection(qids)
    _judge(collection, [("a", qids[0], "d2", 1, WEB), ("b", qids[0], "d2", 0, WEB), ("a", qids[1], "d1", 0, WEB),
                        ("a", qids[1], "d3", 2, WEB), ("c", qids[1], "d3", 1, ADJUDICATION),
                        ("a", qids[2], "d0", 1, WEB)])
    whole = qrels(collection)
    for topics in ([qids[1]], [qids[0], qids[2]], []):
        got = qrels(collection, topics=topics)
        expected = whole[whole["qid"].isin(topics)].reset_index(drop=True)
        pd.testing.assert_frame_equal(got, expected if len(expected) else got.iloc[:0], check_exact=True)
        assert sorted(set(got["qid"])) == sorted(topics) if topics else got.empty

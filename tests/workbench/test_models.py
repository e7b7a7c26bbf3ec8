"""The database enforces the domain's invariants."""

from io import StringIO

import pytest
from django.db import IntegrityError, transaction

from judging.models import Judgment
from tests import factories
from workbench.collections import runstore, selectors
from workbench.models import Run, Topic


def test_a_qid_is_unique_within_a_collection_but_not_across(collection):
    with pytest.raises(IntegrityError), transaction.atomic():
        Topic.objects.create(collection=collection, qid="301", title="again")
    other = factories.collection_with_topics(slug="other")
    assert other.topics.filter(qid="301").exists()


def test_a_run_tag_is_unique_within_a_collection(collection):
    Run.objects.create(collection=collection, tag="bm25")
    with pytest.raises(IntegrityError), transaction.atomic():
        Run.objects.create(collection=collection, tag="bm25")


def test_a_judgment_has_a_grade_unless_the_assessor_could_not_judge(collection):
    topic = collection.topics.get(qid="301")
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.create(collection=collection, topic=topic, docno="d1", grade=None, assessor="a")
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.create(collection=collection, topic=topic, docno="d1", grade=1, cannot_judge=True,
                                assessor="a")
    Judgment.objects.create(collection=collection, topic=topic, docno="d1", cannot_judge=True, assessor="a")


def test_a_judgment_is_revised_at_most_once(collection):
    topic = collection.topics.get(qid="301")
    first = Judgment.objects.create(collection=collection, topic=topic, docno="d1", grade=1, assessor="a")
    Judgment.objects.create(collection=collection, topic=topic, docno="d1", grade=0, assessor="a", previous=first)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.create(collection=collection, topic=topic, docno="d1", grade=1, assessor="a",
                                previous=first)


def test_run_entries_round_trip_through_the_columnar_store(collection, run_files):
    from django.core.management import call_command

    call_command("import_runs", "robust", str(run_files[1]), stdout=StringIO())
    runstore.frame_cache.clear()
    frame = selectors.run_frames(collection)["beta"]
    assert list(frame.columns) == ["qid", "docno", "rank", "score"]
    assert list(frame["qid"].astype(str)) == ["301", "301", "302", "302", "302"]
    assert frame["rank"].tolist() == [1, 2, 1, 2, 3]
    again = selectors.run_frames(collection)["beta"]
    assert again is frame, "a second read comes from the in-process cache"


def test_runs_stored_as_parquet_by_earlier_versions_still_decode():
    import io

    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = pd.DataFrame({"qid": pd.Categorical(["1", "1", "2"]), "docno": ["a", "b", "c"], "rank": [1, 2, 1],
                          "score": [2.0, 1.0, 5.0]})
    old = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), old, compression="zstd")
    assert runstore.decode(old.getvalue())["docno"].tolist() == ["a", "b", "c"]
    assert runstore.decode(runstore.encode(frame))["docno"].tolist() == ["a", "b", "c"]


def test_a_decoded_run_is_the_frame_pyarrow_would_give():
    import io

    import pandas as pd
    import pyarrow as pa
    import pyarrow.feather as feather

    frame = pd.DataFrame({"qid": ["10", "2", "10", "2"], "docno": ["d9", "d1", "d3", "d2"],
                          "rank": [1, 1, 2, 2], "score": [3.5, 9.0, 1.25, -2.0]})
    blob = runstore.encode(frame)
    expected = feather.read_table(pa.BufferReader(io.BytesIO(blob).getvalue())).to_pandas()
    expected["qid"] = expected["qid"].astype("category")
    decoded = runstore.decode(blob)
    pd.testing.assert_frame_equal(decoded, expected)
    assert decoded["qid"].cat.categories.tolist() == ["10", "2"]  # the categories stored with the run
    assert decoded["docno"].tolist() == ["d9", "d3", "d1", "d2"]   # canonical order: score descending


def test_a_run_decoded_for_some_topics_is_those_topics_rows_of_the_whole():
    """A part of a job split by topic decodes its topics' rows only: the rows, order and categories the whole
    frame has (for the Parquet of earlier versions too)."""
    import io

    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = pd.DataFrame({"qid": ["10", "2", "10", "2", "7"], "docno": ["d9", "d1", "d3", "d2", "d5"],
                          "rank": [1, 1, 2, 2, 1], "score": [3.5, 9.0, 1.25, -2.0, 0.5]})
    old = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), old)
    for blob in (runstore.encode(frame), old.getvalue()):
        whole = runstore.decode(blob)
        for topics in (["2"], ["10", "7"], [], ["nope"]):
            expected = whole[whole["qid"].isin(topics)].reset_index(drop=True)
            pd.testing.assert_frame_equal(runstore.decode(blob, topics), expected)


def test_a_run_decoded_to_a_depth_keeps_each_topics_best_rows_as_a_depth_pool_ranks_them():
    """A depth-k pool reads each topic's first k rows (score descending, ties in file order) and never
    converts the rest; tied scores across the cut keep the file's first; a Parquet blob of earlier versions
    is not cut (its rows may be in another order), only filtered by topic."""
    import io

    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame = pd.DataFrame({"qid": ["10", "2", "10", "2", "10", "2", "7"],
                          "docno": ["d9", "d1", "d3", "d2", "d4", "d6", "d5"],
                          "rank": [1, 1, 2, 2, 3, 3, 1], "score": [1.0, 9.0, 1.0, -2.0, 3.0, 5.0, 0.5]})
    blob = runstore.encode(frame)
    cut = runstore.decode(blob, depth=2)
    assert list(zip(cut["qid"].astype(str), cut["docno"], strict=True)) == [
        ("10", "d4"), ("10", "d9"), ("2", "d1"), ("2", "d6"), ("7", "d5")]
    assert cut["qid"].cat.categories.tolist() == ["10", "2", "7"]
    assert runstore.decode(blob, ["2", "7"], depth=1)["docno"].tolist() == ["d1", "d5"]
    assert len(runstore.decode(blob, depth=0)) == 0
    old = io.BytesIO()
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), old)
    assert len(runstore.decode(old.getvalue(), depth=1)) == 7
    assert runstore.decode(old.getvalue(), ["7"], depth=1)["docno"].tolist() == ["d5"]

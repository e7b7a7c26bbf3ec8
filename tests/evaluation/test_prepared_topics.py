"""A part of a job split by topic takes its topics' qrels from the version's whole qrels where its process
has them (a board job's parts read them whole: the extras' parts need them whole), else reads them alone:
the engine gets the same qrels either way (two assessors, gains, under each policy)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from evaluation import cache, scoring
from tests.evaluation.tracks import build_track, run, write_qrels

SECOND = {("301", "a"): 0, ("301", "b"): 1, ("302", "e"): 1, ("302", "h"): 1}


def _fields(qrels) -> dict:
    out = {}
    for name, value in vars(qrels).items():
        if isinstance(value, np.ndarray):
            out[name] = (value.dtype.str, value.tolist())
        elif isinstance(value, pa.Array | pa.ChunkedArray):
            out[name] = (str(value.type), value.to_pylist())
        elif not callable(value) and not isinstance(value, dict):
            out[name] = value
    return out


@pytest.mark.django_db
@pytest.mark.parametrize("policy", ["adjudicated", "majority", "adjudicated/complete"])
def test_a_topic_slice_of_the_whole_qrels_is_the_slice_read_alone(tmp_path, policy):
    collection = build_track(tmp_path)
    run("import_qrels", "robust", write_qrels(tmp_path / "second.txt", SECOND), "--assessor", "bob")
    collection.scale = [{**item, "gain": 0.25 + item["grade"] / 2} for item in collection.scale]
    collection.save()
    assert collection.grade_gains == {0: 0.25, 1: 0.75}
    for topics in (["301"], ["302"], ["301", "302"], ["999"]):
        cache.clear_caches()
        alone = scoring.prepared_qrels(collection, policy=policy, topics=topics)
        scoring.qrels_frame(collection, policy=policy)  # what a board job's part reads first
        sliced = scoring.prepared_qrels(collection, policy=policy, topics=topics)
        if topics == ["999"]:
            assert alone is None and sliced is None
            continue
        assert _fields(sliced) == _fields(alone) and len(sliced.topics) == len(topics)
    assert sliced is None

"""The relevance rule is one method of the collection: a grade is relevant from ``relevant_from`` on."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests import factories

SCALE = [{"grade": 0, "label": "No"}, {"grade": 1, "label": "Partly"}, {"grade": 2, "label": "Highly"}]


def test_a_grade_is_relevant_from_the_collections_threshold_on(db):
    collection = factories.collection_with_topics(grades=SCALE)
    collection.relevant_from = 2
    assert [collection.is_relevant(g) for g in (0, 1, 2)] == [False, False, True]
    assert collection.is_relevant(np.array([0, 1, 2, np.nan])).tolist() == [False, False, True, False]
    assert collection.is_relevant(pd.Series([2, 1])).tolist() == [True, False]


def test_raising_the_threshold_changes_the_relevant_count_the_overview_shows(client, organizer, db, tmp_path):
    from evaluation import selectors
    from tests.evaluation.tracks import run, write_qrels

    collection = factories.collection_with_topics(grades=SCALE)
    run("import_qrels", "robust", write_qrels(tmp_path / "q.txt", {("301", "a"): 1, ("301", "b"): 2}),
        "--assessor", "nist")
    assert sum(r["relevant"] for r in selectors.topic_overview(collection)) == 2
    collection.relevant_from = 2
    collection.save()
    assert sum(r["relevant"] for r in selectors.topic_overview(collection)) == 1

"""The demo's pre-made judgments (workbench.demo.judgments): topics 7-30, the whole contributing pool."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest

from pooling.strategies import depth_pool
from workbench.demo import ANSWER_KEY, RUN_SPECS, TOPICS
from workbench.demo.install import DEMO_DEPTH, DEMO_LATE_RUN, DEMO_SCALE
from workbench.demo.judgments import JUDGED_TOPICS, JUDGMENTS, write_qrels
from workbench.formats import read_qrels, read_run

ROOT = Path(__file__).resolve().parents[2]

#: The judgments were made on this build's documents; another patch release changes a few of them.
JUDGED_ON = (3, 11, 7)
same_python = pytest.mark.skipif(sys.version_info[:3] != JUDGED_ON,
                                 reason="the demo pool was judged on Python 3.11.7's stdlib")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    """The full demo, built once for this module (about 5 s) in a fresh interpreter, as ``make demo``
    builds it: one document's title (``logging.shutdown``'s default) shows the logging handlers that
    exist, and pytest adds its own, which would shift the runs and the pool."""
    out = tmp_path_factory.mktemp("demo")
    code = "import sys; from pathlib import Path; from workbench.demo import build_demo_files; " \
           "build_demo_files(Path(sys.argv[1]))"
    subprocess.run([sys.executable, "-c", code, str(out)], cwd=ROOT, check=True, capture_output=True)
    return out


def _run_path(demo: Path, tag: str) -> Path:
    return demo / "runs" / f"{tag}.txt"


@pytest.fixture(scope="module")
def pool(demo) -> pd.DataFrame:
    """The pool ``make demo`` builds: depth 10 over every run except the late one."""
    frames = {spec.tag: read_run(_run_path(demo, spec.tag)).frame for spec in RUN_SPECS
              if spec.tag != DEMO_LATE_RUN}
    assert len(frames) == 5
    return depth_pool(frames, DEMO_DEPTH).pairs()


def _judged_pairs(qids=JUDGED_TOPICS) -> set[tuple[str, str]]:
    return {(qid, docno) for qid in qids for docno in JUDGMENTS.get(qid, {})}


def test_only_topics_7_to_30_are_judged_and_every_grade_is_on_the_demo_scale():
    assert set(JUDGMENTS) == {str(q) for q in range(7, 31)} == set(JUDGED_TOPICS)
    assert set(JUDGMENTS) <= {t["qid"] for t in TOPICS}
    scale = {level["grade"] for level in DEMO_SCALE}
    grades = Counter(grade for docs in JUDGMENTS.values() for grade in docs.values())
    assert set(grades) <= scale == {0, 1, 2}
    assert all(isinstance(grade, int) for docs in JUDGMENTS.values() for grade in docs.values())


@same_python
def test_judgments_cover_exactly_the_depth_10_pool_of_the_five_contributing_runs(pool):
    pooled = {(q, d) for q, d in pool.itertuples(index=False) if q in JUDGED_TOPICS}
    judged = _judged_pairs()
    assert sorted(pooled - judged) == [], "pooled documents left unjudged"
    assert sorted(judged - pooled) == [], "judged documents that the pool does not contain"
    assert len(judged) == 428


@same_python
def test_documents_only_the_late_run_retrieves_stay_unjudged(demo, pool):
    top = read_run(_run_path(demo, DEMO_LATE_RUN)).frame.groupby("qid", observed=True).head(DEMO_DEPTH)
    late_pairs = {(str(q), d) for q, d in top[["qid", "docno"]].itertuples(index=False)}
    pooled = set(pool.itertuples(index=False, name=None))
    unique = {(q, d) for q, d in late_pairs - pooled if q in JUDGED_TOPICS}
    assert unique, "ql-dir should find documents the pool missed, so that its score shows pool bias"
    assert unique.isdisjoint(_judged_pairs())


@same_python
def test_every_judged_document_exists_in_the_demo_collection(demo):
    docnos = {json.loads(line)["docno"] for line in (demo / "documents.jsonl").read_text(encoding="utf-8").splitlines()}
    missing = sorted(d for _, d in _judged_pairs() if d not in docnos)
    assert missing == []


def test_every_judged_topic_has_a_relevant_document_and_some_non_relevant_ones():
    for qid, docs in JUDGMENTS.items():
        relevant = sum(grade >= 1 for grade in docs.values())
        assert 1 <= relevant < len(docs), f"topic {qid}: {relevant} relevant of {len(docs)}"


def test_share_of_relevant_documents_is_that_of_a_shallow_pool_of_decent_runs():
    grades = Counter(grade for docs in JUDGMENTS.values() for grade in docs.values())
    share = (grades[1] + grades[2]) / sum(grades.values())
    # 428 judgments: 283 not relevant, 77 relevant, 68 highly relevant (34% relevant).
    assert grades == {0: 283, 1: 77, 2: 68}
    assert 0.2 <= share <= 0.5, f"{share:.0%} of the pool judged relevant"
    per_topic = sorted(sum(g >= 1 for g in docs.values()) for docs in JUDGMENTS.values())
    assert per_topic[0] >= 1 and per_topic[-1] <= 12


def test_every_seed_answer_in_the_pool_is_judged_relevant():
    """ANSWER_KEY (the topic writer's seed list) as a sanity check: no pooled seed document judged 0."""
    for qid in JUDGED_TOPICS:
        judged = JUDGMENTS[qid]
        zero = [docno for docno in ANSWER_KEY[qid] if judged.get(docno) == 0]
        assert zero == [], f"topic {qid}"


def test_write_qrels_round_trips_through_read_qrels_sorted_like_trec_eval(tmp_path):
    path = tmp_path / "demo.qrels"
    assert write_qrels(path) == 428
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "10 0 csv 2"            # qids sort as strings, as trec_eval's files do
    assert [tuple(line.split()[::2]) for line in lines] == sorted(tuple(line.split()[::2]) for line in lines)
    back = read_qrels(path)
    assert {(q, d): int(r) for q, d, r in back.itertuples(index=False)} == {
        (qid, docno): grade for qid, docs in JUDGMENTS.items() for docno, grade in docs.items()}


def test_write_qrels_skips_documents_the_collection_does_not_have(tmp_path):
    path = tmp_path / "demo.qrels"
    known = set(JUDGMENTS["19"]) - {"zipfile.ZipFile.write"}
    assert write_qrels(path, known=known) == len(JUDGMENTS["19"]) - 1
    back = read_qrels(path)
    assert set(back["qid"]) == {"19"}
    assert "zipfile.ZipFile.write" not in set(back["docno"])

"""The demo collection's data (workbench.demo): real documents, hand-written topics, real runs."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

from workbench.demo import (
    ANSWER_KEY,
    DEPTH,
    RUN_SPECS,
    SMALL_MODULES,
    TOPICS,
    DemoFiles,
    build_demo_files,
    build_documents,
)
from workbench.demo.documents import MIN_WORDS
from workbench.demo.retrieval import BM25_B, BM25_K1, Corpus, bm25_scores, ql_dirichlet_scores
from workbench.demo.runs import rank

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> DemoFiles:
    """The full demo, built once for this module (about 3-5 s)."""
    return build_demo_files(tmp_path_factory.mktemp("demo"))


@pytest.fixture(scope="module")
def documents(demo) -> dict[str, dict[str, str]]:
    rows = [json.loads(line) for line in demo.documents.read_text(encoding="utf-8").splitlines()]
    by_docno = {row["docno"]: row for row in rows}
    assert len(by_docno) == len(rows), "duplicate docnos in documents.jsonl"
    return by_docno


@pytest.fixture(scope="module")
def runs(demo) -> dict[str, dict[str, list[tuple[str, int, float, str]]]]:
    """tag -> qid -> [(docno, rank, score, tag)] in file order."""
    parsed: dict[str, dict[str, list[tuple[str, int, float, str]]]] = {}
    for run in demo.runs:
        per_topic: dict[str, list[tuple[str, int, float, str]]] = defaultdict(list)
        for line in run.path.read_text(encoding="utf-8").splitlines():
            qid, q0, docno, rank_, score, tag = line.split()
            assert q0 == "Q0"
            per_topic[qid].append((docno, int(rank_), float(score), tag))
        parsed[run.tag] = dict(per_topic)
    return parsed


def test_there_are_at_least_25_topics_with_unique_qids_and_every_field_written(demo):
    topics = [json.loads(line) for line in demo.topics.read_text(encoding="utf-8").splitlines()]
    assert len(topics) >= 25
    assert topics == TOPICS
    assert len({t["qid"] for t in topics}) == len(topics)
    for topic in topics:
        assert set(topic) == {"qid", "title", "description", "narrative"}
        assert all(topic[field].strip() for field in topic), topic["qid"]
        assert topic["description"].endswith("?"), topic["qid"]


def test_every_narrative_says_what_is_relevant_and_what_is_not():
    for topic in TOPICS:
        assert "A relevant document" in topic["narrative"], topic["qid"]
        assert "not relevant" in topic["narrative"], topic["qid"]


def test_documents_are_thousands_of_real_docstrings_with_unique_docnos(documents):
    assert 3_000 <= len(documents) <= 8_000
    for docno, doc in documents.items():
        assert docno and " " not in docno
        assert doc["title"].startswith(docno)
        assert len(doc["text"].split()) >= MIN_WORDS, docno


def test_json_dumps_is_a_document_that_talks_about_json(documents):
    doc = documents["json.dumps"]
    assert doc["title"].startswith("json.dumps(obj, *, skipkeys=False")
    assert "JSON" in doc["text"]


def test_docnos_are_qualified_names_and_builtins_drop_their_module(documents):
    assert "collections.OrderedDict.move_to_end" in documents
    assert "argparse.ArgumentParser.add_argument" in documents  # inherited from a private base
    assert "str.split" in documents and "sorted" in documents
    assert "builtins.sorted" not in documents
    assert not [d for d in documents if d.rsplit(".", 1)[-1].startswith("_")]


def test_a_docstring_shared_by_function_and_method_is_kept_under_the_function(documents):
    assert "random.sample" in documents
    assert "random.Random.sample" not in documents


def test_the_answer_key_names_only_documents_of_the_collection(documents):
    assert set(ANSWER_KEY) == {t["qid"] for t in TOPICS}
    named = [d for docs in ANSWER_KEY.values() for d in docs]
    missing = [d for d in named if d not in documents]
    if sys.version_info[:3] == (3, 11, 7):  # the stdlib the key was written against
        assert missing == []
    else:  # another build of Python (Debian's 3.11.2 lacks http.client.HTTPResponse.read's docstring)
        assert len(missing) <= len(named) // 50, missing


def test_each_run_has_depth_100_for_every_topic_and_a_single_tag(demo, runs):
    assert len(demo.runs) >= 4
    assert len({r.team for r in demo.runs}) >= 3
    qids = {t["qid"] for t in TOPICS}
    for run in demo.runs:
        assert run.description and run.team
        per_topic = runs[run.tag]
        assert set(per_topic) == qids
        for qid, entries in per_topic.items():
            assert len(entries) == DEPTH, (run.tag, qid)
            assert len({docno for docno, *_ in entries}) == DEPTH
            assert {tag for *_, tag in entries} == {run.tag}


def test_ranks_follow_scores_with_trec_eval_tie_break(runs):
    for tag, per_topic in runs.items():
        for qid, entries in per_topic.items():
            assert [r for _, r, _, _ in entries] == list(range(1, DEPTH + 1)), (tag, qid)
            # trec_eval order: score descending, then docno descending
            by_docno = sorted(entries, key=lambda e: e[0], reverse=True)
            assert entries == sorted(by_docno, key=lambda e: -e[2]), (tag, qid)


def test_bm25_title_run_finds_json_dumps_for_the_json_topic(runs):
    qid = next(t["qid"] for t in TOPICS if t["title"] == "serialize object to JSON")
    top10 = [docno for docno, *_ in runs["bm25-title"][qid][:10]]
    assert "json.dumps" in top10
    assert all(d.startswith("json") for d in top10[:5])


def test_every_topic_has_known_relevant_documents_in_some_runs_top_20(runs):
    for topic in TOPICS:
        qid, key = topic["qid"], set(ANSWER_KEY[topic["qid"]])
        best = max(len(key & {d for d, *_ in per_topic[qid][:20]}) for per_topic in runs.values())
        assert best >= 2, (qid, topic["title"])


def test_the_runs_rank_differently(runs):
    for a, b in itertools.combinations(sorted(runs), 2):
        differing = sum(
            [d for d, *_ in runs[a][qid][:10]] != [d for d, *_ in runs[b][qid][:10]] for qid in runs[a]
        )
        assert differing >= len(runs[a]) // 2, (a, b)


def test_run_tags_are_unique_and_match_the_specs(demo):
    assert [r.tag for r in demo.runs] == [s.tag for s in RUN_SPECS]
    assert all(r.path.name == f"{r.tag}.txt" for r in demo.runs)


def test_building_twice_gives_identical_bytes(tmp_path):
    first = build_demo_files(tmp_path / "a", modules=SMALL_MODULES)
    second = build_demo_files(tmp_path / "b", modules=SMALL_MODULES)
    assert first.documents.read_bytes() == second.documents.read_bytes()
    for one, two in zip(first.runs, second.runs, strict=True):
        assert one.path.read_bytes() == two.path.read_bytes()


def test_a_small_module_list_gives_a_subset_of_the_full_collection(documents):
    small = build_documents(SMALL_MODULES)
    assert 50 < len(small) < 1_000
    assert {d["docno"] for d in small} <= set(documents)
    assert {d["docno"].split(".")[0] for d in small} == {m.split(".")[0] for m in SMALL_MODULES}


def test_rank_orders_by_score_then_docno_descending_and_cuts_at_depth():
    order, scores = rank(np.array([1.0, 3.0, 1.0, 1.00004, 0.0]), ["b", "a", "c", "d", "e"], decimals=4, depth=4)
    # 1.00004 rounds to 1.0000 and ties with b and c: d > c > b by docno descending
    assert order.tolist() == [1, 3, 2, 0]
    assert scores.tolist() == [3.0, 1.0, 1.0, 1.0]


def test_query_likelihood_matches_hand_computed_dirichlet_scores():
    corpus = Corpus([["a", "b"], ["a", "a", "c"]])
    # P(a|C) = 3/5; log((tf + mu * 0.6) / (|d| + mu)) with mu = 1
    got = ql_dirichlet_scores(corpus, [["a", "unknown"]], mu=1.0)
    assert got[0] == pytest.approx([np.log(1.6 / 3), np.log(2.6 / 4)])


def test_bm25_matches_hand_computed_lucene_score():
    corpus = Corpus([["a", "b"], ["a", "a", "c"], ["d"]])  # avgdl = 2
    got = bm25_scores(corpus, [["c"]])
    idf = np.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    expected = idf * 1 / (1 + BM25_K1 * (1 - BM25_B + BM25_B * 3 / 2))
    assert got[0] == pytest.approx([0.0, expected, 0.0], rel=1e-6)


def test_the_demo_package_does_not_import_django():
    code = "import sys, workbench.demo; print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_example_files_are_the_demos_own_with_its_qrels_and_answers(demo, tmp_path):
    """`build_demo --files DIR`: the files the documented command lines name (docs/commands.md)."""
    from workbench.demo.examples import write_example_files

    written = write_example_files(tmp_path / "demo-files")
    folder = written.folder
    assert {"topics.jsonl", "documents.jsonl", "qrels.txt", "judge.qrels", "qrels.sampled.txt", "nuggets.jsonl",
            "assignments.jsonl"} <= set(written.names)
    assert sorted(n for n in written.names if n.startswith("runs/")) == sorted(f"runs/{s.tag}.txt" for s in RUN_SPECS)
    assert len([n for n in written.names if n.startswith("answers/")]) == 4
    assert all((folder / name).stat().st_size for name in written.names)
    for run in demo.runs:  # the same bytes as the demo collection's
        assert (folder / "runs" / run.path.name).read_bytes() == run.path.read_bytes()
    qrels = [line.split() for line in (folder / "qrels.txt").read_text().splitlines()]
    assert len(qrels) == 428 and {q for q, *_ in qrels} == {str(q) for q in range(7, 31)}
    judge = [line.split() for line in (folder / "judge.qrels").read_text().splitlines()]
    assert {float(g) for *_, g in judge} == {0.0, 0.5, 1.0} and len(judge) == len(qrels)
    sampled = [line.split() for line in (folder / "qrels.sampled.txt").read_text().splitlines()]
    assert {tuple(s[:3]) + (s[4],) for s in sampled} == {tuple(q) for q in qrels} and {s[3] for s in sampled} == {"1"}

"""The demo's answer track: answer runs, nugget banks and nugget assignments, generated offline by code.

- **Answer runs** (TREC RAG / AutoJudge JSON lines). Three "retrieve then extract" systems answer topics
  1-14 from the top documents of a ranked run of the same tag (so each is a run of kind *both*): every
  answer sentence is the first sentence of one of the run's top :data:`ANSWER_DEPTH` documents, citing it.
  A fourth, ``closed-book``, answers from the topic's own description and cites nothing.
- **Nugget banks** for topics 7-14, made from the demo's pre-made relevance judgments
  (:mod:`workbench.demo.judgments`): each highly relevant document's first sentence is a *vital* nugget, each
  relevant one's an *okay* nugget (at most :data:`BANK_SIZE`, highly relevant first). Topics 1-6 have none:
  the assessors build them in the browser from the segments they judge relevant.
- **Assignments** (nuggetizer's assign output, recorded as the organizer's): an answer *supports* a nugget when
  it cites the nugget's document, *partially supports* it when it cites another document of the same module,
  else not.

Plain Python: ``workbench.demo.install`` imports the files through the answers app's services.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from .judgments import JUDGMENTS

ANSWER_DEPTH = 3
BANK_SIZE = 6
#: the ranked runs whose top documents three answer runs extract from (answer run tag = ranked run tag)
ANSWER_RUNS = (("bm25-title", 3), ("bm25-desc", 2), ("tfidf-desc", 3))
ANSWER_TOPICS = tuple(str(q) for q in range(1, 15))
BANK_TOPICS = tuple(str(q) for q in range(7, 15))

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def first_sentence(title: str, text: str) -> str:
    """The first sentence of a document's text (at most 300 characters), or its title when it has none."""
    text = " ".join(text.split())
    sentence = _SENTENCE.split(text, maxsplit=1)[0] if text else ""
    return (sentence[:297] + "...") if len(sentence) > 300 else (sentence or title)


def _top(run_path: Path, depth: int) -> dict[str, list[str]]:
    top: dict[str, list[str]] = {}
    for line in run_path.read_text(encoding="utf-8").splitlines():
        qid, _, docno, rank, *_ = line.split()
        if int(rank) <= depth:
            top.setdefault(qid, []).append(docno)
    return top


def _line(tag: str, team: str, qid: str, sentences: list[tuple[str, list[int]]], references: list[str]) -> str:
    return json.dumps({"metadata": {"team_id": team, "run_id": tag, "topic_id": qid, "type": "automatic"},
                       "responses": [{"text": text, "citations": cites} for text, cites in sentences],
                       "references": references}, ensure_ascii=False) + "\n"


def write_answer_runs(out_dir: Path, documents: Mapping[str, tuple[str, str]], run_paths: Mapping[str, Path],
                      teams: Mapping[str, str], topics: Sequence[Mapping[str, str]]) -> list[Path]:
    """One answer file per system in ``out_dir/answers/``; ``documents``: docno -> (title, text)."""
    folder = out_dir / "answers"
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for tag, depth in ANSWER_RUNS:
        top = _top(run_paths[tag], depth)
        lines = [_line(tag, teams[tag], qid, [(first_sentence(*documents[d]), [k]) for k, d in enumerate(docs)], docs)
                 for qid in ANSWER_TOPICS if (docs := [d for d in top.get(qid, []) if d in documents])]
        paths.append(folder / f"{tag}.jsonl")
        paths[-1].write_text("".join(lines), encoding="utf-8")
    by_qid = {t["qid"]: t for t in topics}
    closed = folder / "closed-book.jsonl"
    closed.write_text("".join(_line("closed-book", "parametric", qid, [(by_qid[qid]["description"], [])], [])
                              for qid in ANSWER_TOPICS if qid in by_qid), encoding="utf-8")
    return [*paths, closed]


def _bank_documents(qid: str, documents: Mapping[str, tuple[str, str]]) -> list[tuple[str, str]]:
    """(docno, importance) of the topic's bank: highly relevant documents first, then relevant, by docno."""
    graded = sorted(((-grade, docno) for docno, grade in JUDGMENTS.get(qid, {}).items()
                     if grade > 0 and docno in documents))
    return [(docno, "vital" if grade == -2 else "okay") for grade, docno in graded[:BANK_SIZE]]


def write_nugget_banks(path: Path, documents: Mapping[str, tuple[str, str]],
                       topics: Sequence[Mapping[str, str]]) -> dict[str, list[tuple[str, str, str]]]:
    """nuggetizer's bank file for :data:`BANK_TOPICS`; returns each topic's (docno, text, importance)."""
    by_qid = {t["qid"]: t for t in topics}
    banks = {}
    for qid in BANK_TOPICS:
        nuggets = [(docno, f"{docno}: {first_sentence(*documents[docno])}", importance)
                   for docno, importance in _bank_documents(qid, documents)]
        if nuggets and qid in by_qid:
            banks[qid] = nuggets
    path.write_text("".join(json.dumps({"qid": qid, "query": by_qid[qid]["title"], "nuggets": [
        {"text": text, "importance": importance} for _, text, importance in nuggets]}, ensure_ascii=False) + "\n"
        for qid, nuggets in banks.items()), encoding="utf-8")
    return banks


def _assignment(cited: set[str], docno: str) -> str:
    if docno in cited:
        return "support"
    module = docno.split(".")[0]
    return "partial_support" if any(c.split(".")[0] == module for c in cited) else "not_support"


def write_assignments(path: Path, answer_files: Sequence[Path], banks: Mapping[str, list[tuple[str, str, str]]]) -> int:
    """nuggetizer's assign output for every answer to a topic with a bank; the number of lines."""
    lines = []
    for answer_file in answer_files:
        for text in answer_file.read_text(encoding="utf-8").splitlines():
            record = json.loads(text)
            meta = record["metadata"]
            if meta["topic_id"] not in banks:
                continue
            cited = {record["references"][k] for s in record["responses"] for k in s["citations"]}
            lines.append(json.dumps({"qid": meta["topic_id"], "run_id": meta["run_id"], "nuggets": [
                {"text": nugget, "importance": importance, "assignment": _assignment(cited, docno)}
                for docno, nugget, importance in banks[meta["topic_id"]]]}, ensure_ascii=False) + "\n")
    path.write_text("".join(lines), encoding="utf-8")
    return len(lines)

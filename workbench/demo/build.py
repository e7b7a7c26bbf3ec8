"""Write the demo collection's files: documents, topics and one TREC run file per retrieval model."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import retrieval
from .documents import build_documents
from .modules import MODULES
from .runs import RUN_SPECS, RunSpec, write_run
from .text import analyze
from .topics import TOPICS


@dataclass(frozen=True)
class DemoRun:
    path: Path
    tag: str
    team: str
    description: str
    query_fields: tuple[str, ...] = ("title",)


@dataclass(frozen=True)
class DemoFiles:
    documents: Path
    topics: Path
    runs: list[DemoRun]


def _write_jsonl(path: Path, rows: Iterable[dict[str, str]]) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False, sort_keys=False) + "\n" for row in rows)
    path.write_text(text, encoding="utf-8")


def _query(topic: dict[str, str], fields: Sequence[str]) -> list[str]:
    return analyze(" ".join(topic[f] for f in fields))


def build_demo_files(
    out_dir: Path,
    modules: Sequence[str] = MODULES,
    topics: Sequence[dict[str, str]] = TOPICS,
    specs: Sequence[RunSpec] = RUN_SPECS,
) -> DemoFiles:
    """Build the demo collection into ``out_dir`` (created if missing) and return where each file is.

    Writes ``documents.jsonl`` (``docno``, ``title``, ``text``), ``topics.jsonl`` (``qid``, ``title``,
    ``description``, ``narrative``) and ``runs/<tag>.txt`` (TREC run format, depth 100 per topic).
    Same Python version, same bytes. ``modules`` exists so tests can build a smaller collection.
    """
    out_dir = Path(out_dir)
    (out_dir / "runs").mkdir(parents=True, exist_ok=True)
    documents = build_documents(modules)
    docnos = [d["docno"] for d in documents]
    corpus = retrieval.Corpus([analyze(d["title"] + "\n" + d["text"]) for d in documents])

    documents_path, topics_path = out_dir / "documents.jsonl", out_dir / "topics.jsonl"
    _write_jsonl(documents_path, documents)
    _write_jsonl(topics_path, topics)

    qids = [t["qid"] for t in topics]
    runs = []
    for spec in specs:
        scores = spec.scorer(corpus, [_query(t, spec.query_fields) for t in topics])
        path = out_dir / "runs" / f"{spec.tag}.txt"
        write_run(path, spec, qids, scores, docnos)
        runs.append(DemoRun(path=path, tag=spec.tag, team=spec.team, description=spec.description,
                            query_fields=tuple(spec.query_fields)))
    return DemoFiles(documents=documents_path, topics=topics_path, runs=runs)

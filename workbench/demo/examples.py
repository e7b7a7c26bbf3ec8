"""The demo's example files, for the command-line examples of the README and the guides.

``manage.py build_demo --files DIR`` writes them, so that a new user can run every documented command on
files that exist (the docs name them ``demo-files/...``). Plain Python, no Django:

- ``topics.jsonl``, ``documents.jsonl`` and ``runs/<tag>.txt``: the demo collection's own files
  (:func:`workbench.demo.build_demo_files`, same bytes as the demo's).
- ``qrels.txt``: the organizer's judgments of topics 7-30 (:mod:`workbench.demo.judgments`), TREC qrels.
- ``judge.qrels``: the same judgments with each grade as a fraction of the top grade (0, 0.5, 1), to try
  ``trec_eval --fractional-grades`` on.
- ``qrels.sampled.txt``: the same judgments in ``sample_eval.pl``'s format (``topic 0 docno stratum grade``),
  as one stratum sampled in full, for ``xinfap``.
- ``answers/<tag>.jsonl``, ``nuggets.jsonl`` and ``assignments.jsonl``: the answer track's runs, nugget
  banks and nugget assignments (:mod:`workbench.demo.answers`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from . import answers
from .build import build_demo_files
from .judgments import JUDGMENTS, write_qrels


@dataclass(frozen=True)
class ExampleFiles:
    folder: Path
    names: list[str]


def write_example_files(out_dir: Path) -> ExampleFiles:
    """Write every example file into ``out_dir`` (created if missing); the names written, relative to it."""
    out_dir = Path(out_dir)
    files = build_demo_files(out_dir)
    rows = [json.loads(line) for line in files.documents.read_text(encoding="utf-8").splitlines()]
    documents = {row["docno"]: (row["title"], row["text"]) for row in rows}
    topics = [json.loads(line) for line in files.topics.read_text(encoding="utf-8").splitlines()]

    write_qrels(out_dir / "qrels.txt", known=set(documents))
    judged = [(qid, docno, grade) for qid, docs in JUDGMENTS.items() for docno, grade in sorted(docs.items())
              if docno in documents]
    (out_dir / "judge.qrels").write_text(
        "".join(f"{qid} 0 {docno} {grade / 2:g}\n" for qid, docno, grade in judged), encoding="utf-8")
    (out_dir / "qrels.sampled.txt").write_text(
        "".join(f"{qid} 0 {docno} 1 {grade}\n" for qid, docno, grade in judged), encoding="utf-8")

    answer_files = answers.write_answer_runs(out_dir, documents, {r.tag: r.path for r in files.runs},
                                             {r.tag: r.team for r in files.runs}, topics)
    banks = answers.write_nugget_banks(out_dir / "nuggets.jsonl", documents, topics)
    answers.write_assignments(out_dir / "assignments.jsonl", answer_files, banks)

    written = [files.topics, files.documents, *(r.path for r in files.runs), out_dir / "qrels.txt",
               out_dir / "judge.qrels", out_dir / "qrels.sampled.txt", *answer_files, out_dir / "nuggets.jsonl",
               out_dir / "assignments.jsonl"]
    return ExampleFiles(folder=out_dir, names=[str(p.relative_to(out_dir)) for p in written])

"""A generated shared task of real size for the end-to-end tests: the files a track's organizer receives.

Everything is written under the test's ``tmp_path`` in seconds (numpy draws, big buffered writes) and never
committed:

* 30 topics (TSV);
* 150 run files from 40 teams (1-5 runs each, tags unique), 1,000 documents per topic with descending
  scores, about 0.75 MB each and over 100 MB together. Every topic has its own documents of unequal
  popularity, and runs of one team resemble each other, so the pools of many runs overlap as real ones do;
* the manifest a track's organizer keeps (CSV: tag, team, contributes, priority, type, description);
* the same runs as one ``.tar.gz``;
* a TREC SGML documents file of 300 MB holding every document any run retrieves at depth <= 100, plus filler.
"""

from __future__ import annotations

import csv
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

MB = 1_000_000
TOPICS = 30
TEAMS = 40
RUNS = 150
DEPTH = 1000
#: the deepest rank whose documents the documents file must hold (the pools of the tests are not deeper)
POOL_DEPTH = 100
DOCUMENTS_BYTES = 300 * MB
#: documents in the whole space the runs draw from; each topic has its own share of them
DOC_SPACE = 400_000
PER_TOPIC = 6_000

_WORDS = ("solar wind energy grid panel battery storage river flood bird migration night bread yeast flour "
          "oven market price trade policy court ruling school teacher student health clinic vaccine trial "
          "ocean current fish coral reef climate carbon forest fire drought harvest farm water rail bridge "
          "city council vote election reform bank loan rate inflation museum painting music festival film "
          "the a of and to in on for with by from at as is was were be been that this which new said year").split()


@dataclass(frozen=True)
class RunInfo:
    tag: str
    team: str
    priority: int
    run_type: str
    path: Path


@dataclass
class Track:
    folder: Path
    runs: list[RunInfo] = field(default_factory=list)
    topics: Path | None = None
    manifest: Path | None = None
    archive: Path | None = None
    documents: Path | None = None
    num_documents: int = 0
    #: docnos retrieved at depth <= POOL_DEPTH by some run, per topic
    pooled: dict[str, set[str]] = field(default_factory=dict)

    @property
    def run_bytes(self) -> int:
        return sum(r.path.stat().st_size for r in self.runs)

    @property
    def teams(self) -> dict[str, list[RunInfo]]:
        out: dict[str, list[RunInfo]] = {}
        for run in self.runs:
            out.setdefault(run.team, []).append(run)
        return {team: sorted(runs, key=lambda r: r.priority) for team, runs in out.items()}


def docno(number: int) -> str:
    return f"d{number:06d}"


def write_topics(folder: Path, count: int = TOPICS) -> Path:
    rng = np.random.default_rng(1)
    path = folder / "topics.tsv"
    with open(path, "w") as out:
        for qid in range(1, count + 1):
            out.write(f"{qid}\t{' '.join(rng.choice(_WORDS[:60], 3))} {qid}\n")
    return path


def _run_plan(rng: np.random.Generator, teams: int, runs: int) -> list[tuple[str, int]]:
    """(team, runs of that team): every team 1-5 runs, ``runs`` in all."""
    counts = np.ones(teams, dtype=int)
    while counts.sum() < runs:
        counts[rng.choice(np.flatnonzero(counts < 5))] += 1
    return [(f"team{t + 1:02d}", int(c)) for t, c in enumerate(counts)]


def write_runs(folder: Path, *, topics: int = TOPICS, teams: int = TEAMS, runs: int = RUNS, depth: int = DEPTH,
               seed: int = 20) -> tuple[list[RunInfo], dict[str, set[str]]]:
    """The run files and, per topic, the docnos some run retrieves at depth <= POOL_DEPTH.

    Each topic owns PER_TOPIC documents of the space with a Zipf-like popularity; a run takes its
    ``depth`` documents by weighted sampling without replacement (Gumbel top-k) over the popularity,
    plus noise shared by the team's runs and the run's own, so that pools overlap as real ones do."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    owned = [rng.choice(DOC_SPACE, PER_TOPIC, replace=False) for _ in range(topics)]
    popularity = -1.5 * np.log(np.arange(1, PER_TOPIC + 1))  # Zipf-like: about 2,300 documents per topic at depth 100
    ranks = np.arange(1, depth + 1)
    infos: list[RunInfo] = []
    pooled: dict[str, set[str]] = {str(q + 1): set() for q in range(topics)}
    number = 0
    for team, count in _run_plan(rng, teams, runs):
        team_noise = rng.gumbel(size=(topics, PER_TOPIC)) * 0.6
        for priority in range(1, count + 1):
            number += 1
            short = team.replace("team", "t")
            tag = f"{short}r{priority}" if number % 3 else f"{short}_{'bm25' if priority % 2 else 'dense'}_{priority}"
            path = folder / f"{tag}.run"
            lines = []
            for q in range(topics):
                keys = popularity + team_noise[q] + rng.gumbel(size=PER_TOPIC)
                top = np.argpartition(-keys, depth)[:depth]
                top = top[np.argsort(-keys[top], kind="stable")]
                docs = owned[q][top]
                # BM25-like scores: a top score near 20-30 falling off smoothly, three decimals (some ties)
                scores = np.round(rng.uniform(18, 30) * np.exp(-ranks / rng.uniform(400, 900)), 3)
                qid = str(q + 1)
                pooled[qid].update(docno(d) for d in docs[:POOL_DEPTH])
                lines.extend(f"{qid} Q0 {docno(d)} {r} {s:.3f} {tag}\n"
                             for d, r, s in zip(docs.tolist(), ranks.tolist(), scores.tolist(), strict=True))
            with open(path, "w", buffering=1 << 20) as out:
                out.write("".join(lines))
            run_type = "manual" if number % 7 == 0 else "feedback" if number % 5 == 0 else "automatic"
            infos.append(RunInfo(tag=tag, team=team, priority=priority, run_type=run_type, path=path))
    return infos, pooled


def write_manifest(path: Path, runs: list[RunInfo]) -> Path:
    """tag, team, contributes, priority, type, description: every run contributes but the teams' fifth."""
    with open(path, "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["tag", "team", "contributes", "priority", "type", "description"])
        for run in runs:
            writer.writerow([run.tag, run.team, "no" if run.priority == 5 else "yes", run.priority, run.run_type,
                             f"{run.team}'s run {run.priority}, {run.run_type}"])
    return path


def write_archive(path: Path, runs: list[RunInfo]) -> Path:
    """Every run file in one .tar.gz, in a folder as teams send them."""
    with tarfile.open(path, "w:gz", compresslevel=1) as archive:
        for run in runs:
            archive.add(run.path, arcname=f"runs/{run.path.name}")
    return path


def write_documents(path: Path, needed: set[str], size: int = DOCUMENTS_BYTES, seed: int = 7) -> int:
    """A TREC SGML file of about ``size`` bytes holding every docno of ``needed`` and filler documents
    from the rest of the space; texts are slices of one block of random words. The number of documents."""
    rng = np.random.default_rng(seed)
    words = np.array(_WORDS)
    block = " ".join(words[rng.integers(0, len(words), 3_000_000)].tolist())  # ~17 MB of text
    spaces = np.flatnonzero(np.frombuffer(block.encode(), dtype=np.uint8) == 32)
    # every needed document, then filler until the file is the size asked; about 2.4 KB of text each
    mean = 2_400
    count = max(len(needed), size // (mean + 60))
    numbers = sorted(int(d[1:]) for d in needed)
    if count > len(numbers):
        rest = np.setdiff1d(np.arange(DOC_SPACE + count), np.array(numbers, dtype=np.int64), assume_unique=True)
        numbers += rng.choice(rest, count - len(numbers), replace=False).tolist()
    per_doc = int((size / count - 52) * 1.01)  # 52 bytes of markup per document; 1% to spare
    lengths = rng.integers(per_doc // 2, per_doc * 3 // 2, count)
    starts = spaces[rng.integers(0, len(spaces) - 2_000, count)] + 1
    written = 0
    with open(path, "w", buffering=8 << 20) as out:
        batch = []
        for n, start, length in zip(numbers, starts.tolist(), lengths.tolist(), strict=True):
            text = block[start:start + length]
            batch.append(f"<DOC>\n<DOCNO>{docno(n)}</DOCNO>\n<TEXT>\n{text}\n</TEXT>\n</DOC>\n")
            if len(batch) == 5000:
                written += out.write("".join(batch))
                batch.clear()
        written += out.write("".join(batch))
    return count


def generate_track(folder: Path, *, archive: bool = False, documents: bool = True) -> Track:
    """The whole track under ``folder``: topics, runs, manifest, and the archive and documents if asked."""
    folder.mkdir(parents=True, exist_ok=True)
    runs, pooled = write_runs(folder / "runs")
    track = Track(folder=folder, topics=write_topics(folder), runs=runs,
                  manifest=write_manifest(folder / "manifest.csv", runs), pooled=pooled)
    if archive:
        track.archive = write_archive(folder / "runs.tar.gz", runs)
    if documents:
        track.documents = folder / "documents.sgml"
        track.num_documents = write_documents(track.documents, set().union(*pooled.values()))
    return track

"""Benchmark: a 10,000,000-passage corpus used by reference (about 4 GB of JSONL, generated in a temporary
folder and deleted afterwards).

1. Indexing: the collection points to the file (``workbench.corpora.corpus``); the index job is queued and run by
   ``manage.py db_worker`` in a separate process, as in a deployment: its wall time and peak memory (max RSS).
2. Disk: (corpus + index + database) / corpus.
3. A pool's documents: 50,000 random docnos copied into the collection as the pool build's job does it
   (``documents_copy_in``), in a separate process: wall time.
4. Opening a document nobody copied in (``document_for``, what the judging page calls), 1,000 random docnos:
   median and 95th percentile, and the same for documents already copied in (what judging reads after a pool
   build, as on any collection).

Targets (issue 26): indexing < 10 min and < 1 GB; 50,000 documents < 1 min; disk < 1.3x the corpus.

Run: .venv/bin/python tests/benchmarks/bench_corpus_reference.py [--passages 10000000] [--pooled 50000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]

SETUP = """
import django, sys
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from workbench.corpora.corpus import corpus_reference_add
from workbench.collections.services import collection_create
collection = collection_create(slug="bench", name="Corpus by reference")
print(corpus_reference_add(collection=collection, location=sys.argv[1]).pk)
"""

ENQUEUE = """
import django, sys
django.setup()
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection
from workbench.tasks import index_corpus
job = jobs.job_start(index_corpus, kind="corpus index", collection=Collection.objects.get(slug="bench"),
                     params={"reference": int(sys.argv[1])})
"""

COPY_IN = """
import django, json, sys, time
django.setup()
from workbench.corpora.corpus import documents_copy_in
from workbench.models import Collection
docnos = json.load(open(sys.argv[1]))
start = time.perf_counter()
copied = documents_copy_in(collection=Collection.objects.get(slug="bench"), docnos=docnos)
print(json.dumps({"copied": copied, "seconds": time.perf_counter() - start}))
"""

OPEN = """
import django, json, sys, time
django.setup()
from workbench.corpora.corpus import document_for
from workbench.models import Collection
collection = Collection.objects.get(slug="bench")
times = {}
for key in ("fresh", "copied"):
    docnos = json.load(open(sys.argv[1]))[key]
    times[key] = []
    for docno in docnos:
        start = time.perf_counter()
        document = document_for(collection, docno)
        times[key].append(time.perf_counter() - start)
        assert document is not None and document.docno == docno, docno
print(json.dumps(times))
"""


def generate(path: Path, n: int, seed: int = 1) -> None:
    """``n`` passages of 54 words (a 30,000-word vocabulary) as JSONL: about 400 bytes a line."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(30_000)], dtype=object)
    with open(path, "w", encoding="utf-8") as out:
        for start in range(0, n, 100_000):
            count = min(100_000, n - start)
            words = vocab[rng.integers(0, len(vocab), size=(count, 54))]
            out.writelines(f'{{"id": "msp-{start + i}", "title": "", "text": "{" ".join(row)}"}}\n'
                           for i, row in enumerate(words))


def generated(folder: Path, passages: int) -> Path:
    """``folder/corpus.jsonl`` of ``passages`` generated passages, saying how big and how long it took."""
    corpus = folder / "corpus.jsonl"
    start = time.perf_counter()
    generate(corpus, passages)
    print(f"generated {passages:,} passages ({corpus.stat().st_size / 1e9:.2f} GB) in "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    return corpus


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def python(code: str, env: dict, *args: str) -> str:
    return subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=10_000_000)
    parser.add_argument("--pooled", type=int, default=50_000)
    parser.add_argument("--opened", type=int, default=1_000)
    parser.add_argument("--folder", default=None, help="where the temporary corpus goes (default: the system's)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        folder = Path(tmp)
        corpus = generated(folder, args.passages)
        size = corpus.stat().st_size
        db = folder / "bench.sqlite3"
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{db}", "DJANGO_SETTINGS_MODULE": "workbench.settings",
               "WORKBENCH_VAR_DIR": str(folder / "var"), "TASKS_BACKEND": "django_tasks_db.DatabaseBackend"}
        reference = python(SETUP, env, str(corpus)).strip()
        python(ENQUEUE, env, reference)
        start = time.perf_counter()
        worker = subprocess.run([sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay",
                                 "--no-reload"], cwd=ROOT, env=env, capture_output=True, text=True)
        indexing = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        con = sqlite3.connect(db)
        status, error, result = con.execute("SELECT status, error, result FROM workbench_job").fetchone()
        con.close()
        if status != "done":
            raise SystemExit(f"the index job {status}: {error}\n{worker.stderr[-2000:]}")
        print(f"indexed in {indexing:.0f} s, peak {peak:,.0f} MB: {json.loads(result)['lines'][0]}", flush=True)
        rng = np.random.default_rng(2)
        chosen = rng.choice(args.passages, size=args.pooled + args.opened, replace=False)
        pooled = [f"msp-{i}" for i in chosen[:args.pooled].tolist()]
        (folder / "pooled.json").write_text(json.dumps(pooled))
        copy = json.loads(python(COPY_IN, env, str(folder / "pooled.json")))
        assert copy["copied"] == args.pooled, copy
        print(f"copied {copy['copied']:,} pooled documents in {copy['seconds']:.1f} s", flush=True)
        opened = {"fresh": [f"msp-{i}" for i in chosen[args.pooled:].tolist()],
                  "copied": pooled[:args.opened]}
        (folder / "opened.json").write_text(json.dumps(opened))
        times = json.loads(python(OPEN, env, str(folder / "opened.json")))
        index_size = sum(p.stat().st_size for p in (folder / "var" / "corpus").iterdir())
        disk = size + index_size + db.stat().st_size + sum(p.stat().st_size for p in folder.glob("bench.sqlite3-*"))
        print()
        print("| passages | corpus | indexing | peak memory (worker) | index | disk / corpus | "
              f"{args.pooled:,} pooled documents copied in | open, not copied in (p50 / p95) | "
              "open, copied in (p50 / p95) |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        ms = {k: (1000 * percentile(v, 50), 1000 * percentile(v, 95)) for k, v in times.items()}
        print(f"| {args.passages:,} | {size / 1e9:.2f} GB | {indexing:.0f} s | {peak:,.0f} MB | "
              f"{index_size / 1e6:,.0f} MB | {disk / size:.3f}x | {copy['seconds']:.1f} s | "
              f"{ms['fresh'][0]:.1f} / {ms['fresh'][1]:.1f} ms | {ms['copied'][0]:.2f} / {ms['copied'][1]:.2f} ms |")


if __name__ == "__main__":
    main()

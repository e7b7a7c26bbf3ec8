"""Benchmark: near-duplicate detection over 1,000,000 generated passages, as the background job does it.

A fresh SQLite database gets a collection of N random 60-word passages (a 30,000-word vocabulary), 1% of
them exact copies of another (case and punctuation changed) and 1% near copies (2 words of 60 replaced:
Jaccard similarity of 3-word shingles about 0.81). The detection job is queued and run by `manage.py db_worker`
(a separate process, as in a deployment); its wall time and peak memory (max RSS) are measured, and the
classes it stored are scored against the planted truth (pairwise precision and recall).

Run: .venv/bin/python tests/benchmarks/bench_neardup.py [--passages 1000000]
"""

from __future__ import annotations

import argparse
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
sys.path.insert(0, str(ROOT))

SETUP = """
import django, os
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from workbench.collections.services import collection_create
collection_create(slug="bench", name="Near-duplicate benchmark")
"""

ENQUEUE = """
import django
django.setup()
from workbench.jobs import lifecycle as jobs
from workbench.models import Collection
from workbench.tasks import find_duplicates
job = jobs.job_start(find_duplicates, kind="near-duplicates", collection=Collection.objects.get(slug="bench"),
                     params={"threshold": 0.7, "shingle": 3})
print(job.pk)
"""


def passages(n: int, seed: int = 1) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """(docno, text) rows and the planted truth: copy -> original."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(30_000)], dtype=object)
    n_copies = n // 50  # 1% exact, 1% near
    base = n - n_copies
    words = rng.integers(0, len(vocab), size=(base, 60))
    texts = [" ".join(vocab[row]) for row in words]
    rows = [(f"P{i}", t) for i, t in enumerate(texts)]
    truth = {}
    sources = rng.choice(base, size=n_copies, replace=False)
    for k, src in enumerate(sources.tolist()):
        if k % 2 == 0:
            text = texts[src].upper() + " ."
        else:
            row = words[src].copy()
            row[rng.integers(0, 60, size=2)] = rng.integers(0, len(vocab), size=2)
            text = " ".join(vocab[row])
        rows.append((f"C{k}", text))
        truth[f"C{k}"] = f"P{src}"
    return rows, truth


def scored(db: Path, truth: dict[str, str]) -> tuple[int, float, float]:
    con = sqlite3.connect(db)
    classes = {}
    for pk, rep in con.execute("SELECT id, representative FROM workbench_duplicateclass"):
        classes[pk] = [rep]
    for pk, docno in con.execute("SELECT duplicate_class_id, docno FROM workbench_duplicatemember"):
        classes[pk].append(docno)
    found = {frozenset((a, b)) for members in classes.values() for i, a in enumerate(members) for b in members[i + 1:]}
    groups: dict[str, set[str]] = {}
    for copy, src in truth.items():
        groups.setdefault(src, {src}).add(copy)
    true = {frozenset((a, b)) for g in groups.values() for a in g for b in g if a < b}
    hit = len(found & true)
    return len(classes), hit / max(len(found), 1), hit / max(len(true), 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=1_000_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite3"
        env = {**os.environ, "DATABASE_URL": f"sqlite:///{db}", "DJANGO_SETTINGS_MODULE": "workbench.settings",
               "WORKBENCH_VAR_DIR": tmp, "TASKS_BACKEND": "django_tasks_db.DatabaseBackend"}
        subprocess.run([sys.executable, "-c", SETUP], cwd=ROOT, env=env, check=True)
        start = time.perf_counter()
        rows, truth = passages(args.passages)
        con = sqlite3.connect(db)
        (cid,) = con.execute("SELECT id FROM workbench_collection WHERE slug = 'bench'").fetchone()
        con.executemany("INSERT INTO workbench_document (collection_id, docno, title, text, extra, length) "
                        "VALUES (?, ?, '', ?, '{}', 60)", ((cid, d, t) for d, t in rows))
        con.commit()
        con.close()
        del rows
        print(f"generated and stored {args.passages:,} passages in {time.perf_counter() - start:.0f} s", flush=True)
        subprocess.run([sys.executable, "-c", ENQUEUE], cwd=ROOT, env=env, check=True, capture_output=True)
        start = time.perf_counter()
        worker = subprocess.run([sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay",
                                 "--no-reload"], cwd=ROOT, env=env, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        con = sqlite3.connect(db)
        status, error, result = con.execute("SELECT status, error, result FROM workbench_job").fetchone()
        con.close()
        if status != "done":
            raise SystemExit(f"the job {status}: {error}\n{worker.stderr[-2000:]}")
        n_classes, precision, recall = scored(db, truth)
        print("| passages | job wall time | peak memory (worker) | classes | precision | recall |")
        print("|---:|---:|---:|---:|---:|---:|")
        print(f"| {args.passages:,} | {elapsed:.0f} s | {peak:,.0f} MB | {n_classes:,} | {precision:.4f} | "
              f"{recall:.4f} |")
        print(result)


if __name__ == "__main__":
    main()

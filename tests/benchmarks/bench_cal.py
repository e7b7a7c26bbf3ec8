"""Benchmark of continuous active learning (cal) at 100,000 documents: keypress to next document.

1. Strategy: ``record`` of a judgment plus ``next_document`` (the classifier is retrained when a batch is
   used up, so the slowest keypresses are the retraining ones), over 300 judgments on each of 5 topics.
2. Workbench: ``judging.services.judgment_record`` of a judgment in a cal pool until the topic's next
   document is queued for the assessor (database writes, the pool's advance, the retraining), in-process
   on SQLite, 100 judgments.

Documents are synthetic: 120 words each from a Zipf-distributed vocabulary of 50,000 words; a topic's
relevant documents (1%) also carry 5 of its 20 words. Target: keypress to next < 100 ms (median and p95).

Run: .venv/bin/python tests/benchmarks/bench_cal.py [--documents 100000] [--skip-workbench]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TARGET_MS = 100.0


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def corpus(n: int, seed: int = 0, topics: int = 5):
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(50_000)])
    ranks = np.minimum(rng.zipf(1.2, size=(n, 120)) - 1, len(vocab) - 1)
    texts = [" ".join(vocab[row]) for row in ranks]
    topic_words = {str(t): [f"topic{t}x{i}" for i in range(20)] for t in range(1, topics + 1)}
    relevant = {}
    for qid, words in topic_words.items():
        chosen = rng.choice(n, size=n // 100, replace=False)
        relevant[qid] = {f"doc{i}" for i in chosen}
        for i in chosen:
            texts[i] += " " + " ".join(rng.choice(words, size=5))
    docnos = [f"doc{i}" for i in range(n)]
    return docnos, texts, {q: " ".join(w[:3]) for q, w in topic_words.items()}, relevant


def report(name: str, ms: list[float]) -> bool:
    median, p95, worst = statistics.median(ms), percentile(ms, 95), max(ms)
    ok = median < TARGET_MS and p95 < TARGET_MS
    print(f"{name}: {len(ms)} keypresses, median {median:.1f} ms, p95 {p95:.1f} ms, max {worst:.1f} ms "
          f"({'meets' if ok else 'MISSES'} < {TARGET_MS:.0f} ms)")
    return ok


def bench_strategy(docnos, texts, topics, relevant) -> bool:
    from pooling.strategies.cal import CalParams, CalPool
    from pooling.strategies.features import build_features

    clock = time.perf_counter()
    features = build_features(docnos, texts)
    print(f"features of {len(docnos):,} documents: {time.perf_counter() - clock:.1f} s, "
          f"{features.matrix.nnz:,} non-zeros")
    pool = CalPool(features, topics, CalParams(budget=300))
    ms, found = [], 0
    for qid in topics:
        docno = pool.next_document(qid)  # the first document is offered when the pool is built
        while docno is not None:
            clock = time.perf_counter()
            pool.record(qid, docno, docno in relevant[qid])
            docno = pool.next_document(qid)
            ms.append((time.perf_counter() - clock) * 1000)
        found += int(pool.judged(qid)["relevant"].sum())
    print(f"strategy: {found} relevant found in {len(ms) + len(topics)} judgments over {len(topics)} topics")
    return report("strategy keypress to next (record + next_document)", ms)


def bench_workbench(docnos, texts, topics, relevant, n_judgments: int = 100) -> bool:
    os.environ["DEBUG"] = "1"
    os.environ["WORKBENCH_VAR_DIR"] = tempfile.mkdtemp(prefix="bench-cal-")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
    import django

    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from judging import services as judging_services
    from judging.assignments import assignments_create
    from judging.models import AssignmentItem
    from pooling.services import pool_build
    from pooling.strategies.cal import CalParams
    from workbench.collections.services import collection_create
    from workbench.models import Document, Topic

    collection = collection_create(slug="bench", name="cal benchmark")
    for qid, text in topics.items():
        Topic.objects.create(collection=collection, qid=qid, title=text)
    Document.objects.bulk_create((Document(collection=collection, docno=d, text=t) for d, t in zip(docnos, texts,
                                  strict=True)), batch_size=5000)
    clock = time.perf_counter()
    pool = pool_build(collection=collection, strategy="cal", budget=n_judgments + 1, cal=CalParams(), seed=1).pool
    print(f"workbench: pool built (features computed and stored) in {time.perf_counter() - clock:.1f} s")
    assessor = User.objects.create_user("bench", password="x")
    assessor.groups.add(Group.objects.get_or_create(name="assessors")[0])
    qid = next(iter(topics))
    assignments_create(pool=pool, assessors=[assessor], topics=[qid])
    ms = []
    for n in range(n_judgments):
        item = AssignmentItem.objects.filter(assignment__assessor=assessor, latest__isnull=True).first()
        clock = time.perf_counter()
        judging_services.judgment_record(item_id=item.pk, user=assessor, grade=int(item.docno in relevant[qid]), client_token=f"t{n}")
        nxt = AssignmentItem.objects.filter(assignment__assessor=assessor, latest__isnull=True).first()
        ms.append((time.perf_counter() - clock) * 1000)
        if nxt is None:
            break
    return report("workbench keypress to next (judgment_record until the next item is queued)", ms)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--skip-workbench", action="store_true")
    args = parser.parse_args()
    clock = time.perf_counter()
    data = corpus(args.documents)
    print(f"{args.documents:,} synthetic documents in {time.perf_counter() - clock:.1f} s")
    ok = bench_strategy(*data)
    if not args.skip_workbench:
        ok = bench_workbench(*data) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

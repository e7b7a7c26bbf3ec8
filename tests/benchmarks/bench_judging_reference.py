"""Benchmark: the judging page on a collection whose corpus is used by reference, against the demo.

One process, one database (SQLite, or PostgreSQL with ``--postgres``), Django's test client: the same HTTP
path for both collections (middleware, session, the view, the template), without a server's sockets.

* **demo**: ``manage.py build_demo``'s collection (documents imported), four more assessors given its topics 1-6;
* **reference**: a collection whose corpus is a generated JSONL file of ``--passages`` passages (default
  1,000,000; the issue's size is 10,000,000), indexed once (``workbench.corpora.corpus``), 20 topics with a pool of
  100 random passages each. The documents of topics 1-8 are *not* copied in (each page is the first open of
  its document, copied in by that request, as for a pool whose documents were never fetched); those of
  topics 9-16 are copied in as a pool build's job does (``documents_copy_in``).

Measured, interleaved (one request of each series in turn, so that the machine's load falls on all alike):

* the judging page: ``GET /judge/item/<id>/`` (the assessor's page with the document and the grade buttons);
* the keypress: ``POST /judge/item/<id>/`` with ``X-Judge-Swap`` (what judge.js sends on a grade key): the
  judgment recorded and the next document's page rendered in the same response (for the reference corpus's
  first-open series, that next document is copied in by this request). A topic's last document answers a
  redirect to the topic boundary page instead: not counted.

A first open copies in the assessor's next ``judging.views.COPY_AHEAD`` documents with it (``--copy-ahead 0``:
each document copied in alone, when it is opened).

Run: .venv/bin/python tests/benchmarks/bench_judging_reference.py [--passages 10000000] [--requests 300]
     [--copy-ahead N] [--postgres URL]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.benchmarks.bench_corpus_reference import generated, percentile  # noqa: E402

TOPICS, PER_TOPIC = 20, 100
#: topics whose documents are opened first by the measured requests; topics copied in before
FRESH_GET, FRESH_POST, COPIED_GET, COPIED_POST = range(1, 5), range(5, 9), range(9, 13), range(13, 17)


def setup_django(var_dir: Path, database_url: str | None) -> None:
    os.environ.update({"DEBUG": "0", "WORKBENCH_VAR_DIR": str(var_dir), "ALLOWED_HOSTS": "testserver",
                       "DJANGO_SETTINGS_MODULE": "workbench.settings", "SECRET_KEY": "bench-" + "x" * 60})
    os.environ["DATABASE_URL"] = database_url or f"sqlite:///{var_dir / 'bench.sqlite3'}"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    if database_url:
        call_command("flush", interactive=False, verbosity=0)


def user(name: str):
    from django.contrib.auth.models import Group, User

    made = User.objects.create_user(name, password="pw")
    made.groups.add(Group.objects.get_or_create(name="assessors")[0])
    return made


def demo_setup() -> tuple[list, object]:
    """The demo, and four assessors more, each given every pooled document of topics 1-6."""
    from django.core.management import call_command

    from judging.assignments import assignments_create
    from pooling.models import Pool

    call_command("build_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    pool = Pool.objects.get(collection__slug="demo")
    posting = [user(f"demo-{i}") for i in range(4)]
    assignments_create(pool=pool, assessors=posting, topics=["1", "2", "3"], overlap=6)
    assignments_create(pool=pool, assessors=posting, topics=["4", "5", "6"], overlap=5)
    from django.contrib.auth.models import User

    return posting, User.objects.get(username="assessor")


def reference_setup(corpus: Path) -> tuple[dict, float, int]:
    """The collection by reference: indexed, 20 topics, a pool; users per series; (users, indexing s, copied)."""
    from django.db import transaction

    from judging.assignments import assignments_create
    from pooling.models import Pool, PoolEntry
    from workbench.collections.services import collection_create
    from workbench.corpora.corpus import corpus_reference_add, corpus_reference_index, documents_copy_in
    from workbench.models import Topic

    collection = collection_create(slug="reference", name="Corpus by reference")
    reference = corpus_reference_add(collection=collection, location=str(corpus))
    start = time.perf_counter()
    documents = corpus_reference_index(reference=reference)
    indexing = time.perf_counter() - start
    rng = np.random.default_rng(5)
    chosen = rng.choice(documents, size=TOPICS * PER_TOPIC, replace=False).reshape(TOPICS, PER_TOPIC)
    with transaction.atomic():
        topics = Topic.objects.bulk_create(
            Topic(collection=collection, qid=str(q + 1), title=" ".join(f"w{w}" for w in rng.integers(0, 30_000, 3)),
                  description="Passages about these words.") for q in range(TOPICS))
        pool = Pool.objects.create(collection=collection, name="main")
        PoolEntry.objects.bulk_create(
            PoolEntry(pool=pool, topic=topic, docno=f"msp-{d}", judging_order=rank + 1, pool_rank=rank + 1,
                      min_depth=rank + 1, provenance={"bm25": rank + 1})
            for topic, row in zip(topics, chosen.tolist(), strict=True) for rank, d in enumerate(row))
    users = {}
    for series, topic_range in (("fresh GET", FRESH_GET), ("fresh POST", FRESH_POST), ("copied GET", COPIED_GET),
                                ("copied POST", COPIED_POST)):
        users[series] = user("ref-" + series.replace(" ", "-").lower())
        assignments_create(pool=pool, assessors=[users[series]], topics=[str(q) for q in topic_range])
    copied = documents_copy_in(collection=collection, docnos=[
        f"msp-{d}" for q in (*COPIED_GET, *COPIED_POST) for d in chosen[q - 1].tolist()])
    assert collection.documents.count() == copied == 8 * PER_TOPIC, copied
    return users, indexing, documents


def items_of(assessor) -> list[int]:
    from judging.models import AssignmentItem

    return list(AssignmentItem.objects.filter(assignment__assessor=assessor)
                .order_by("assignment__topic__qid", "judging_order").values_list("pk", flat=True))


def client_for(assessor):
    from django.test import Client

    client = Client()
    client.force_login(assessor)
    return client


def pages(assessor, cycle: bool) -> Iterator[float]:
    """GET each item of the assessor's assignments in queue order (``cycle``: again from the first)."""
    client, items = client_for(assessor), items_of(assessor)
    while True:
        for pk in items:
            start = time.perf_counter()
            response = client.get(f"/judge/item/{pk}/")
            took = time.perf_counter() - start
            assert response.status_code == 200 and b'name="grade"' in response.content, response.status_code
            yield took
        if not cycle:
            return


def keypresses(assessors: list) -> Iterator[float]:
    """Judge each assessor's queue in order as judge.js does (POST with ``X-Judge-Swap``): the time of each
    POST answered with the next document (not of those answered with a topic's boundary page)."""
    from judging import selectors

    for assessor in assessors:
        client = client_for(assessor)
        item = selectors.next_item_for(assessor)
        first = client.get(f"/judge/item/{item.pk}/")  # the first document, shown before any keypress
        assert first.status_code == 200
        k = 0
        while item is not None:
            start = time.perf_counter()
            response = client.post(f"/judge/item/{item.pk}/", {
                "grade": str(k % 2), "client_token": f"{assessor.username}-{k}", "time_spent_ms": "4000"},
                headers={"X-Judge-Swap": "1"})
            took = time.perf_counter() - start
            k += 1
            if response.status_code == 200:
                assert response["X-Judge-Url"] and b'name="grade"' in response.content
                yield took
                item = selectors.next_item_for(assessor, assignment_id=item.assignment_id)
            else:
                assert response.status_code == 302, response.status_code
                item = selectors.next_item_for(assessor)
                if item is not None:
                    client.get(f"/judge/item/{item.pk}/")  # the boundary page's "start", then the page


def run_interleaved(series: dict[str, Iterator[float]], wanted: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in series}
    active = dict(series)
    while active and any(len(times[n]) < wanted for n in active):
        for name, source in list(active.items()):
            if len(times[name]) >= wanted:
                continue
            try:
                times[name].append(next(source))
            except StopIteration:
                del active[name]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--passages", type=int, default=1_000_000, help="the corpus's size (the issue's: 10000000)")
    parser.add_argument("--requests", type=int, default=300, help="page loads and keypresses per series")
    parser.add_argument("--postgres", default=None, help="a PostgreSQL URL (default: SQLite in the temporary folder)")
    parser.add_argument("--folder", default=None, help="where the temporary corpus goes (default: the system's)")
    parser.add_argument("--copy-ahead", type=int, default=None,
                        help="next documents of the queue copied in with a first open (default: judging.views')")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
        folder = Path(tmp)
        corpus = generated(folder, args.passages)
        setup_django(folder / "var", args.postgres)
        from django.db import connection

        from judging import views

        if args.copy_ahead is not None:
            views.COPY_AHEAD = args.copy_ahead

        posting, demo_assessor = demo_setup()
        users, indexing, documents = reference_setup(corpus)
        print(f"indexed {documents:,} passages in {indexing:.0f} s; database: {connection.vendor}", flush=True)
        for _ in zip(range(5), pages(users["copied GET"], cycle=True), pages(demo_assessor, cycle=True),
                     strict=False):
            pass  # warm: imports, templates, the first session
        times = run_interleaved({
            "demo: judging page (GET)": pages(demo_assessor, cycle=True),
            "demo: keypress, judgment + next page (POST)": keypresses(posting),
            "by reference, first open: judging page (GET)": pages(users["fresh GET"], cycle=False),
            "by reference, first open: keypress, judgment + next page (POST)": keypresses([users["fresh POST"]]),
            "by reference, copied in: judging page (GET)": pages(users["copied GET"], cycle=False),
            "by reference, copied in: keypress, judgment + next page (POST)": keypresses([users["copied POST"]]),
        }, args.requests)
        print(f"\n{args.passages:,} passages by reference, {connection.vendor}, Django test client, one process, "
              f"{views.COPY_AHEAD} next documents copied in with a first open\n")
        print("| series | n | p50 (ms) | p95 (ms) |\n|---|---:|---:|---:|")
        for name, values in times.items():
            print(f"| {name} | {len(values)} | {1000 * statistics.median(values):.1f} | "
                  f"{1000 * percentile(values, 95):.1f} |")


if __name__ == "__main__":
    main()

"""Benchmark of the judging workspace.

1. Server time of the judging page (GET) and of recording a judgment (POST), in-process with Django's
   test client, on a database holding 100,000 pooled documents and 50,000 judgments.
2. Keypress to next document shown, in Debian's Chromium (Playwright), on the demo collection served
   by `manage.py runserver` on 127.0.0.1.

Run: .venv/bin/python tests/benchmarks/bench_judging.py [--postgres] [--skip-browser]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

TOPICS, DOCS_PER_TOPIC, ASSESSORS, JUDGED = 100, 1000, 20, 50_000


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def setup_django(var_dir: Path, database_url: str | None) -> None:
    os.environ["DEBUG"] = "1"
    os.environ["WORKBENCH_VAR_DIR"] = str(var_dir)
    os.environ["ALLOWED_HOSTS"] = "testserver,127.0.0.1,localhost"
    if database_url:
        os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "workbench.settings")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("flush", interactive=False, verbosity=0)


def populate() -> list:
    """100 topics x 1,000 pooled documents, 20 assessors, 50,000 judgments made."""
    import numpy as np
    from django.contrib.auth.models import User
    from django.db import connection, transaction

    from judging.assignments import assignments_create
    from judging.models import AssignmentItem, Judgment
    from pooling.models import Pool, PoolEntry
    from workbench.models import Collection, Document, Topic

    rng = np.random.default_rng(0)
    words = np.array("the pool judged relevant topic retrieval system run query document assessor "
                     "evaluation measure precision recall ranking index corpus track organizer".split())
    with transaction.atomic():
        collection = Collection.objects.create(slug="bench", name="Bench", scale=[
            {"grade": 0, "label": "Not relevant"}, {"grade": 1, "label": "Relevant"},
            {"grade": 2, "label": "Highly relevant"}])
        topics = Topic.objects.bulk_create(
            Topic(collection=collection, qid=str(q), title=f"query terms {q} retrieval",
                  description="Find documents about retrieval evaluation.", narrative="Relevant documents ...")
            for q in range(1, TOPICS + 1))
        docs = []
        for t in range(TOPICS):
            for d in range(DOCS_PER_TOPIC):
                text = " ".join(rng.choice(words, size=int(rng.integers(100, 400))))
                docs.append(Document(collection=collection, docno=f"D{t}-{d}", title=f"Document {t}-{d}",
                                     text=text, length=len(text.split())))
        Document.objects.bulk_create(docs, batch_size=5000)
        pool = Pool.objects.create(collection=collection, name="main")
        entries = []
        for t, topic in enumerate(topics):
            order = rng.permutation(DOCS_PER_TOPIC) + 1
            entries.extend(PoolEntry(pool=pool, topic=topic, docno=f"D{t}-{d}", judging_order=int(order[d]),
                                     pool_rank=d + 1, min_depth=d + 1, provenance={"r1": d + 1})
                           for d in range(DOCS_PER_TOPIC))
        PoolEntry.objects.bulk_create(entries, batch_size=5000)
    users = [User.objects.create_user(f"assessor{i:02d}", password="pw") for i in range(ASSESSORS)]
    assignments_create(pool=pool, assessors=users)
    # judge the first half of every assessor's queue, as bulk records (setup only)
    items = list(AssignmentItem.objects.select_related("assignment__topic", "assignment__assessor")
                 .order_by("assignment_id", "judging_order"))
    per_assignment: dict[int, list] = {}
    for item in items:
        per_assignment.setdefault(item.assignment_id, []).append(item)
    to_judge = [i for group in per_assignment.values() for i in group[: len(group) // 2]][:JUDGED]
    with transaction.atomic():
        made = Judgment.objects.bulk_create(
            [Judgment(collection=collection, topic=i.assignment.topic, docno=i.docno, grade=int(rng.integers(0, 3)),
                      assessor=i.assignment.assessor.username, user=i.assignment.assessor, time_spent_ms=5000)
             for i in to_judge], batch_size=5000)
        if connection.vendor == "sqlite" or not made[0].pk:
            made = list(Judgment.objects.order_by("id"))
        for item, judgment in zip(to_judge, made, strict=True):
            item.latest_id = judgment.pk
        AssignmentItem.objects.bulk_update(to_judge, ["latest"], batch_size=5000)
    return users


def bench_server(users) -> list[tuple[str, float, float, int]]:
    from django.test import Client

    from judging import selectors

    rows = []
    gets, posts = [], []
    for n, user in enumerate(users[:10]):
        client = Client()
        client.force_login(user)
        for k in range(20):
            item = selectors.next_item_for(user)
            start = time.perf_counter()
            response = client.get(f"/judge/item/{item.pk}/")
            gets.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 200
            start = time.perf_counter()
            response = client.post(f"/judge/item/{item.pk}/", {"grade": "1", "client_token": f"b{n}-{k}",
                                                              "time_spent_ms": "4000"})
            posts.append((time.perf_counter() - start) * 1000)
            assert response.status_code == 302
    rows.append(("judging page (GET), server time", statistics.median(gets), percentile(gets, 95), len(gets)))
    rows.append(("record a judgment (POST), server time", statistics.median(posts), percentile(posts, 95),
                 len(posts)))
    return rows


def bench_browser(n_docs: int = 40) -> tuple[float, float, int]:
    """Keypress to next document, on the demo collection served by runserver."""
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "DEBUG": "1", "WORKBENCH_VAR_DIR": tmp}
        env.pop("DATABASE_URL", None)
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        subprocess.run([sys.executable, "manage.py", "build_demo"], cwd=ROOT, env=env, check=True,
                       capture_output=True)
        port = "8799"
        server = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
                                  cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            time.sleep(3)
            timings = []
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=[
                    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--no-first-run"])
                # bypass_csp: the measuring waits below are evaluated scripts, which the site's policy forbids;
                # the page's own script runs the same either way
                page = browser.new_page(bypass_csp=True)
                page.goto(f"http://127.0.0.1:{port}/accounts/login/")
                page.fill("#id_username", "assessor")
                page.fill("#id_password", "demo")
                page.click("button[type=submit]")
                page.goto(f"http://127.0.0.1:{port}/judge/next/")
                for n in range(n_docs):
                    before = page.url
                    docno = page.inner_text(".doc .muted")
                    page.evaluate("delete document.body.dataset.lastSwapMs")
                    page.keyboard.press("0" if n % 3 else "1")
                    page.wait_for_function("d => (document.querySelector('.doc .muted') && "
                                           "document.querySelector('.doc .muted').innerText !== d) || "
                                           "document.getElementById('start-next')", arg=docno)
                    if page.query_selector("#start-next"):  # a topic finished: its boundary page, not timed
                        page.keyboard.press("Enter")
                        page.wait_for_selector(".doc .muted")
                        continue
                    # measured in the page: from the keydown to the next document in the DOM
                    timings.append(float(page.wait_for_function("document.body.dataset.lastSwapMs").json_value()))
                    assert page.url != before
                browser.close()
        finally:
            server.terminate()
            server.wait()
    return statistics.median(timings), percentile(timings, 95), len(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--postgres", nargs="?", const="postgres://postgres@127.0.0.1:5432/bench_judging",
                        default=None)
    parser.add_argument("--skip-browser", action="store_true")
    parser.add_argument("--browser-only", action="store_true")
    args = parser.parse_args()
    if args.browser_only:
        median, p95, n = bench_browser()
        print(f"| keypress to next document shown, Chromium, demo (SQLite, runserver) | {median:.0f} | {p95:.0f} | {n} |")
        return
    if args.postgres:
        subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-qc",
                        "create database bench_judging"], capture_output=True)
    with tempfile.TemporaryDirectory() as tmp:
        setup_django(Path(tmp), args.postgres)
        from django.db import connection

        start = time.perf_counter()
        users = populate()
        setup = time.perf_counter() - start
        backend = connection.vendor
        print(f"database: {backend}; {TOPICS * DOCS_PER_TOPIC:,} pooled documents, {JUDGED:,} judgments "
              f"(setup {setup:.0f} s)\n")
        print("| measurement | median (ms) | p95 (ms) | n |\n|---|---:|---:|---:|")
        for label, median, p95, n in bench_server(users):
            print(f"| {label} ({backend}) | {median:.1f} | {p95:.1f} | {n} |")
    if not args.skip_browser:
        median, p95, n = bench_browser()
        print(f"| keypress to next document shown, Chromium, demo (SQLite, runserver) | {median:.0f} | {p95:.0f} | {n} |")


if __name__ == "__main__":
    main()
